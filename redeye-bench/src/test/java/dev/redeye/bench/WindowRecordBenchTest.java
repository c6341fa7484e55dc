package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The window section's harness (not its figures): every path gets a row per store, and each window path of a
 * store with a target gets one MET or MISSED line. PostgreSQL from {@code REDEYE_POSTGRES_URL}.
 */
class WindowRecordBenchTest {

    @Test
    void everyPathHasARowAndEveryTargetAVerdict() {
        BenchEnv env = BenchEnv.parse(new String[] {"--stores", "memory,postgres", "--sections", "window", "--quick"});
        String out = WindowRecordBench.run(env);
        List<String> lines = out.lines().toList();
        assertEquals(5, lines.stream().filter(l -> l.startsWith("| memory |")).count(), out);
        assertEquals(5, lines.stream().filter(l -> l.startsWith("| postgres |")).count(), out);
        assertEquals(4, lines.stream().filter(l -> l.startsWith("- postgres, ")
                && (l.endsWith("**MET**") || l.endsWith("**MISSED**"))).count(), out);
        assertEquals(0, lines.stream().filter(l -> l.startsWith("- memory, ")).count(), "no target in process: " + out);
    }
}

package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The record section's harness (not its figures): every path gets a row, the in-process store one without a
 * baseline, and each path with a target gets one MET or MISSED line. Redis from {@code REDEYE_REDIS_URL}.
 */
class RecordPathBenchTest {

    @Test
    void everyPathHasARowAndEveryTargetAVerdict() {
        BenchEnv env = BenchEnv.parse(new String[] {"--stores", "memory,redis", "--sections", "record", "--quick"});
        String out = RecordPathBench.run(env);
        List<String> lines = out.lines().toList();
        long memoryRows = lines.stream().filter(l -> l.startsWith("| memory |")).count();
        long redisRows = lines.stream().filter(l -> l.startsWith("| redis |")).count();
        assertEquals(5, memoryRows, out);
        assertEquals(5, redisRows, out);
        assertTrue(lines.stream().filter(l -> l.startsWith("| memory |")).allMatch(l -> l.contains("none (in-process)")),
                out);
        assertTrue(lines.stream().filter(l -> l.startsWith("| redis |")).allMatch(l -> l.contains("EVALSHA")), out);
        long verdicts = lines.stream().filter(l -> l.startsWith("- redis, ")
                && (l.endsWith("**MET**") || l.endsWith("**MISSED**"))).count();
        assertEquals(4, verdicts, "one verdict per Redis path with a target (all but the defaults' execute): " + out);
    }
}

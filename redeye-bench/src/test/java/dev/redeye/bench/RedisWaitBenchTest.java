package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The wait section's harness (not its figures): it starts its own primary and replica, times every path with and
 * without {@code waitReplicas}, and stops them.
 */
class RedisWaitBenchTest {

    @Test
    void everyPathHasARowWithBothStores() {
        BenchEnv env = BenchEnv.parse(new String[] {"--stores", "redis", "--sections", "wait", "--quick"});
        String out = RedisWaitBench.run(env);
        List<String> rows = out.lines().filter(l -> l.startsWith("| ") && !l.startsWith("| path")).toList();
        assertEquals(3, rows.size(), out);
        for (String row : rows) {
            String[] cells = row.split("\\|");
            assertEquals(7, cells.length, row);
            assertTrue(Double.parseDouble(cells[2].trim()) > 0 && Double.parseDouble(cells[4].trim()) > 0, row);
        }
    }
}

package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Point 9: {@link Operations} alone, the bounded registry with its approximate LRU eviction. */
class OperationsTest {

    @Test
    void theRegistryEvictsTheLeastRecentlyUsedDownToNinetyPercentOnInsert() {
        List<String> evicted = new ArrayList<>();
        Operations ops = new Operations(10, e -> evicted.add(e.name), e -> { });
        for (int i = 0; i < 10; i++) {
            ops.use("op" + i);
        }
        assertTrue(evicted.isEmpty(), "exactly the limit is kept");
        for (int i = 5; i < 10; i++) {
            ops.use("op" + i); // used again: more recent than op0..op4
        }
        OperationState hot = ops.use("op0"); // the most recent of all
        ops.use("op10"); // over the limit: evict down to 9
        assertEquals(2, evicted.size(), evicted.toString());
        assertEquals(9, ops.size());
        for (String name : evicted) {
            int n = Integer.parseInt(name.substring(2));
            assertTrue(n >= 1 && n <= 4, "evicted " + name + ", one of the least recently used");
        }
        assertSame(hot, ops.peek("op0"));
        assertNotNull(ops.peek("op10"), "never the one just inserted");
    }

    @Test
    void anEntryWithATrialRunningIsNeverEvicted() {
        List<String> evicted = new ArrayList<>();
        Operations ops = new Operations(1, e -> evicted.add(e.name), e -> { });
        OperationState trial = ops.use("trial");
        assertTrue(trial.tryStartTrial(1));
        ops.use("other");
        assertEquals(List.of(), evicted, "nothing else to evict");
        ops.use("third");
        assertEquals(List.of("other"), evicted);
        trial.endTrial();
        ops.use("fourth");
        assertTrue(evicted.contains("trial") || evicted.contains("third"));
        assertNull(ops.peek("missing"));
    }
}

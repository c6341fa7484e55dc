package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import org.junit.jupiter.api.Test;

/** Point 8: what {@link DegradingStore} keeps per key is bounded: nothing for healthy keys, pruned otherwise. */
class DegradingStoreBoundsTest {

    @Test
    void theHealthyPathKeepsNothingAndWhatIsKeptIsPruned() {
        InMemoryStore backend = new InMemoryStore();
        SpyStore real = SpyStore.over(backend);
        DegradingStore store = new DegradingStore(real, (op, t) -> { });
        Policy p = Policy.builder().failureThreshold(3).build();
        for (int i = 0; i < 1_000; i++) {
            store.get("op-" + i); // nothing stored
        }
        store.apply("flaky", AtomicOperation.failure(), p, 1);
        store.apply("flaky", AtomicOperation.success(), p, 2); // cleared: a plain closed state
        for (int i = 0; i < 100; i++) {
            store.get("flaky");
        }
        assertEquals(0, store.trackedKeys(), "healthy keys leave nothing behind");
        store.apply("flaky", AtomicOperation.failure(), p, 3);
        assertEquals(1, store.trackedKeys(), "a key with failures counted is kept for a seed");
        store.forget("flaky");
        assertEquals(0, store.trackedKeys(), "and dropped when the engine evicts the operation");
        real.failing = true;
        store.apply("down", AtomicOperation.failure(), p, 4);
        assertEquals(1, store.trackedKeys(), "an outage");
        real.failing = false;
        store.apply("down", AtomicOperation.failure(), p, 5); // the real store takes writes again: the outage ends
        store.apply("down", AtomicOperation.success(), p, 6);
        assertEquals(0, store.trackedKeys());
        store.closeLocalOnly();
        backend.close();
    }
}

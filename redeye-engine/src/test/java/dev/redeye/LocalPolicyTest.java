package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Point 8, the LOCAL store error policy ({@link DegradingStore}): it opens the breaker when reads work but
 * writes fail (a Redis replica answering READONLY after a fail-over), seeds each outage once without racing
 * concurrent records, keeps nothing for healthy keys, and replays nothing when the real store recovers.
 */
class LocalPolicyTest extends BreakersOverInMemoryStore {
    private static final String OP = "replica";
    private final List<String> errors = new CopyOnWriteArrayList<>();

    private CircuitBreaker build(SpyStore store) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(3)
                .resetTimeout(Duration.ofSeconds(10)).store(store).storeErrorPolicy(StoreErrorPolicy.LOCAL)
                .onStoreError((op, t) -> errors.add(t.getMessage())).build();
        breakers.add(b);
        return b;
    }

    @Test
    void failuresDuringAWriteOutageOpenTheBreakerWhileReadsStillWork() {
        SpyStore store = SpyStore.over(backend);
        CircuitBreaker b = build(store);
        failOnce(b, OP); // written to the real store: failures = 1
        store.failWrites = true; // the primary failed over; the replica answers reads, refuses writes
        failOnce(b, OP);
        failOnce(b, OP); // 1 + 2 = threshold, counted in memory across good reads
        int reads = store.reads.get();
        assertEquals(BreakerStatus.OPEN, rejected(b, OP).status(), "the gate sees the degraded state");
        clock.advance(Duration.ofSeconds(3)); // past openCacheRefresh: the re-read is good, the state stays open
        assertEquals(BreakerStatus.OPEN, rejected(b, OP).status());
        assertTrue(store.reads.get() > reads, "the real store was read again");
        BreakerState real = backend.get(OP).orElseThrow();
        assertEquals(1, real.failures(), "nothing but the first failure reached the real store");
        assertFalse(real.open());

        store.failWrites = false; // writes recover
        clock.advance(Duration.ofSeconds(7)); // the in-memory open period's eligibility: a real claim succeeds
        assertEquals("ok", ok(b, OP), "the real store is the truth again");
        real = backend.get(OP).orElseThrow();
        assertFalse(real.open(), "nothing counted in memory was replayed");
        assertEquals(0, real.failures(), "the success cleared the real store's own failure");
        assertTrue(errors.size() >= 2);
    }

    @Test
    void aTransitionElsewhereDuringTheOutageReplacesWhatWasCountedInMemory() {
        SpyStore store = SpyStore.over(backend);
        CircuitBreaker b = build(store);
        CircuitBreaker operator = CircuitBreaker.builder().clock(clock).ticker(clock)
                .store(backend.newClient()).build();
        breakers.add(operator);
        store.failWrites = true;
        failOnce(b, OP); // counted in memory
        operator.forceOpen(OP); // through a healthy path to the primary
        assertEquals(BreakerStatus.FORCED_OPEN, rejected(b, OP).status(), "the newer real state wins");
    }

    @Test
    void seedingNeverRacesConcurrentRecords() throws Exception {
        SpyStore real = SpyStore.over(backend);
        DegradingStore store = new DegradingStore(real, (op, t) -> { });
        AtomicUpdates recording = store.capability(AtomicUpdates.class).orElseThrow();
        Policy p = Policy.builder().failureThreshold(1_000_000).build();
        for (int i = 0; i < 5; i++) {
            recording.apply(OP, AtomicOperation.failure(), p, clock.millis());
        }
        assertEquals(5, store.get(OP).orElseThrow().failures(), "seen in the real store");
        real.failWrites = true;
        int threads = 8;
        int perThread = 250;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < perThread; i++) {
                        store.get(OP); // good reads interleaved with failed writes
                        recording.apply(OP, AtomicOperation.failure(), p, clock.millis());
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(5 + threads * perThread, store.get(OP).orElseThrow().failures(),
                "every failure of the outage counted on top of the seed, none overwritten by it");
        assertEquals(5, backend.get(OP).orElseThrow().failures());
        store.closeLocalOnly();
    }
}

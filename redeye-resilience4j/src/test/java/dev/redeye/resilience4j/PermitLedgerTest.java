package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Metrics;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.resilience4j.PermitLedger.Completion;
import dev.redeye.resilience4j.PermitLedger.Slot;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which permit a completion takes: this thread's newest, else the oldest of any thread; each exactly once. */
class PermitLedgerTest {
    private final CircuitBreaker redeye = CircuitBreaker.builder().build();
    private final PermitLedger ledger = new PermitLedger(redeye, "op");

    @AfterEach
    void close() {
        redeye.close();
    }

    private Slot acquire() {
        return assertInstanceOf(Slot.class, ledger.acquire());
    }

    @Test
    void aThreadCompletesItsNewestPermitFirst() {
        Slot outer = acquire();
        Slot inner = acquire();
        assertTrue(ledger.complete(Completion.SUCCESS, null));
        assertFalse(inner.permit.isHeld(), "nested calls complete inside out");
        assertTrue(outer.permit.isHeld());
        assertTrue(ledger.complete(Completion.FAILURE, new IllegalStateException("down")));
        assertFalse(outer.permit.isHeld());
        assertFalse(ledger.complete(Completion.SUCCESS, null), "nothing outstanding");
        assertEquals(0, ledger.outstanding());
        Metrics m = redeye.metrics("op");
        assertEquals(1, m.successes());
        assertEquals(1, m.failures());
    }

    @Test
    void aSyncCallReusesItsThreadsSlot() {
        Slot first = acquire();
        ledger.complete(Completion.SUCCESS, null);
        Slot second = acquire();
        ledger.complete(Completion.RELEASE, null);
        assertTrue(first == second, "one slot per thread for calls that complete where they start");
    }

    @Test
    void anotherThreadTakesTheOldestOutstandingPermit() throws Exception {
        Slot first = acquire();
        Slot second = acquire();
        assertTrue(CompletableFuture.supplyAsync(() -> ledger.complete(Completion.SUCCESS, null))
                .get(5, TimeUnit.SECONDS));
        assertFalse(first.permit.isHeld(), "the oldest");
        assertTrue(second.permit.isHeld());
        assertTrue(ledger.complete(Completion.SUCCESS, null), "this thread's own stack skips the one taken");
        assertFalse(second.permit.isHeld());
        assertFalse(ledger.complete(Completion.SUCCESS, null));
    }

    @Test
    void aCompletionAimedAtAFinishedAcquisitionNeverCompletesTheSlotsNextOne() throws Exception {
        Slot s = acquire();
        // Another thread completes this thread's call; this thread's stack still names that acquisition.
        CompletableFuture.runAsync(() -> ledger.complete(Completion.SUCCESS, null)).get(5, TimeUnit.SECONDS);
        // A third thread acquires into the slot this thread's stack names.
        Slot reused = CompletableFuture.supplyAsync(this::acquire).get(5, TimeUnit.SECONDS);
        assertTrue(s == reused, "the free slot is reused");
        // This thread's completion finds its own acquisition over and takes the oldest outstanding instead: the
        // same slot, now another acquisition, taken once by its stamp.
        assertTrue(ledger.complete(Completion.SUCCESS, null));
        assertFalse(ledger.complete(Completion.SUCCESS, null));
        assertEquals(2, redeye.metrics("op").successes());
    }

    @Test
    void aRejectionHoldsNothing() {
        redeye.forceOpen("op");
        assertInstanceOf(CircuitOpenException.class, ledger.acquire());
        assertEquals(0, ledger.outstanding());
        assertFalse(ledger.complete(Completion.SUCCESS, null));
    }

    @Test
    void pastTheBoundTheOldestPermitIsReleasedUnused() {
        PermitLedger small = new PermitLedger(redeye, "bounded", 3);
        List<Slot> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            held.add(assertInstanceOf(Slot.class, small.acquire()));
        }
        assertEquals(3, small.outstanding());
        for (int i = 0; i < 3; i++) {
            assertTrue(small.complete(Completion.SUCCESS, null));
        }
        assertFalse(small.complete(Completion.SUCCESS, null));
        Metrics m = redeye.metrics("bounded");
        assertEquals(3, m.successes(), "the two oldest permits were released, recording nothing");
        assertEquals(5, m.calls());
    }

    @Test
    void concurrentCompletionsTakeEveryPermitExactlyOnce() throws Exception {
        int threads = 4;
        int perThread = 5_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads * 2);
        try {
            // Half the threads acquire, the other half complete: every completion crosses threads.
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger acquired = new AtomicInteger();
            AtomicInteger completed = new AtomicInteger();
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                runs.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        acquire();
                        acquired.incrementAndGet();
                    }
                    return null;
                }));
                runs.add(pool.submit(() -> {
                    start.await();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    int mine = 0;
                    while (mine < perThread && System.nanoTime() < deadline) {
                        if (ledger.complete(Completion.SUCCESS, null)) {
                            mine++;
                            completed.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : runs) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(threads * perThread, acquired.get());
            assertEquals(threads * perThread, completed.get(), "every acquisition completed once, none twice");
            assertFalse(ledger.complete(Completion.SUCCESS, null));
            assertEquals(0, ledger.outstanding());
            assertEquals(threads * perThread, redeye.metrics("op").successes());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void manyThreadsThroughTheAdapterLeaveNoPermitBehind() throws Exception {
        try (Resilience4jBreakers breakers = Resilience4jBreakers.local()) {
            RedeyeBackedCircuitBreaker cb = breakers.circuitBreaker("busy", CircuitBreakerConfig.custom()
                    .failureRateThreshold(100).build());
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> runs = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    int id = t;
                    runs.add(pool.submit(() -> {
                        for (int i = 0; i < 5_000; i++) {
                            if ((i + id) % 3 == 0) {
                                try {
                                    cb.executeSupplier(() -> {
                                        throw new IllegalStateException("down");
                                    });
                                } catch (IllegalStateException expected) {
                                    // a failure, recorded
                                }
                            } else {
                                cb.executeSupplier(() -> "ok");
                            }
                        }
                    }));
                }
                for (Future<?> f : runs) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(0, cb.outstandingPermits());
            Metrics m = cb.redeye().metrics("busy");
            assertEquals(20_000, m.calls());
            assertEquals(m.calls(), m.successes() + m.failures() + m.ignored());
        }
    }

    /**
     * Each thread keeps its acquisitions in a thread-local: once a ledger is dropped, its slots (and the redeye
     * breaker's parts their permits hold) must not stay reachable from the threads that used it (a pool's threads
     * outlive any breaker, and a thread-local's value outlives its key until the thread happens to expunge it).
     */
    @Test
    void aDroppedLedgersSlotsAreNotKeptAliveByTheThreadsThatUsedIt() throws Exception {
        java.lang.ref.WeakReference<Slot> dropped = usedThenDropped();
        for (int i = 0; i < 100 && dropped.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertTrue(dropped.get() == null, "the dropped ledger's slot is still reachable");
    }

    private static java.lang.ref.WeakReference<Slot> usedThenDropped() {
        try (CircuitBreaker b = CircuitBreaker.builder().build()) {
            PermitLedger dropped = new PermitLedger(b, "dropped");
            Slot s = assertInstanceOf(Slot.class, dropped.acquire());
            assertInstanceOf(Slot.class, dropped.acquire()); // a second one, left outstanding on this thread's stack
            dropped.complete(Completion.SUCCESS, null);
            return new java.lang.ref.WeakReference<>(s);
        }
    }
}

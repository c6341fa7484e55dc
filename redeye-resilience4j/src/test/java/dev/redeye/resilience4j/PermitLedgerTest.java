package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Permit;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
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
    private final PermitLedger ledger = new PermitLedger();

    @AfterEach
    void close() {
        redeye.close();
    }

    private Permit permit() {
        Permit p = redeye.tryAcquire("op");
        assertTrue(p.isPermitted());
        return p;
    }

    @Test
    void aThreadCompletesItsNewestPermitFirst() {
        Permit outer = permit();
        Permit inner = permit();
        ledger.add(outer);
        ledger.add(inner);
        assertSame(inner, ledger.take(), "nested calls complete inside out");
        assertSame(outer, ledger.take());
        assertNull(ledger.take());
        assertEquals(0, ledger.outstanding());
    }

    @Test
    void anotherThreadTakesTheOldestOutstandingPermit() throws Exception {
        Permit first = permit();
        Permit second = permit();
        ledger.add(first);
        ledger.add(second);
        Permit taken = CompletableFuture.supplyAsync(ledger::take).get(5, TimeUnit.SECONDS);
        assertSame(first, taken);
        assertSame(second, ledger.take(), "this thread's own stack skips the permit another thread took");
        assertNull(ledger.take());
    }

    @Test
    void concurrentCompletionsTakeEveryPermitExactlyOnce() throws Exception {
        int threads = 4;
        int perThread = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads * 2);
        try {
            // Half the threads acquire, the other half complete: every completion crosses threads.
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger added = new AtomicInteger();
            List<Future<List<Permit>>> takers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        ledger.add(permit());
                        added.incrementAndGet();
                    }
                    return null;
                });
                takers.add(pool.submit(() -> {
                    start.await();
                    List<Permit> mine = new ArrayList<>();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (mine.size() < perThread && System.nanoTime() < deadline) {
                        Permit p = ledger.take();
                        if (p != null) {
                            mine.add(p);
                        }
                    }
                    return mine;
                }));
            }
            start.countDown();
            Set<Permit> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            int total = 0;
            for (Future<List<Permit>> f : takers) {
                for (Permit p : f.get(30, TimeUnit.SECONDS)) {
                    assertTrue(seen.add(p), "a permit taken twice");
                    total++;
                }
            }
            assertEquals(threads * perThread, added.get());
            assertEquals(threads * perThread, total);
            assertNull(ledger.take());
            assertEquals(0, ledger.outstanding());
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
            dev.redeye.Metrics m = cb.redeye().metrics("busy");
            assertEquals(20_000, m.calls());
            assertEquals(m.calls(), m.successes() + m.failures() + m.ignored());
        }
    }
}

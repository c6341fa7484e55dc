package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link PermitSlot}: a permit filled again after each completion, each acquisition completed exactly once. */
class PermitSlotTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";

    @Test
    void eachAcquisitionIsCompletedOnceAndTheSlotIsReused() {
        CircuitBreaker cb = keep(CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(3));
        PermitSlot slot = cb.newPermitSlot(OP);
        assertFalse(slot.isHeld());
        assertNull(slot.rejection());
        assertTrue(slot.tryAcquire());
        assertTrue(slot.isHeld());
        assertThrows(IllegalStateException.class, slot::tryAcquire, "one acquisition at a time");
        assertTrue(slot.onFailure(new IOException("down")));
        assertFalse(slot.onSuccess(), "already completed");
        assertFalse(slot.release());
        assertTrue(slot.tryAcquire());
        assertTrue(slot.onResult("ok"));
        assertTrue(slot.tryAcquire());
        assertTrue(slot.release());
        Metrics m = cb.metrics(OP);
        assertEquals(3, m.calls());
        assertEquals(1, m.failures());
        assertEquals(1, m.successes());
        assertEquals(1, m.ignored(), "a release records nothing");
    }

    @Test
    void aRefusalHoldsNothingAndSaysWhy() {
        CircuitBreaker cb = keep(CircuitBreaker.builder().clock(clock).ticker(clock));
        cb.forceOpen(OP);
        PermitSlot slot = cb.newPermitSlot(OP);
        assertFalse(slot.tryAcquire());
        assertInstanceOf(CircuitOpenException.class, slot.rejection());
        assertFalse(slot.isHeld());
        assertFalse(slot.onSuccess());
        cb.reset(OP);
        assertTrue(slot.tryAcquire(), "free again after a refusal");
        slot.onSuccess();
    }

    @Test
    void aTrialIsHeldLikeAPermitsTrial() {
        CircuitBreaker cb = keep(CircuitBreaker.builder().clock(clock).ticker(clock));
        cb.forceHalfOpen(OP);
        PermitSlot slot = cb.newPermitSlot(OP);
        assertTrue(slot.tryAcquire());
        assertTrue(slot.isTrial());
        PermitSlot other = cb.newPermitSlot(OP);
        assertFalse(other.tryAcquire(), "the one trial is claimed");
        assertTrue(slot.release(), "released: the claim is given back");
        assertTrue(other.tryAcquire());
        assertTrue(other.isTrial());
        assertTrue(other.onSuccess());
        assertEquals(BreakerStatus.CLOSED, cb.status(OP));
        assertFalse(other.isTrial());
    }

    @Test
    void badInputIsRefused() {
        CircuitBreaker cb = keep(CircuitBreaker.builder());
        assertThrows(IllegalArgumentException.class, () -> cb.newPermitSlot(""));
        PermitSlot slot = cb.newPermitSlot(OP);
        assertTrue(slot.tryAcquire());
        assertThrows(NullPointerException.class, () -> slot.onFailure(null));
        assertTrue(slot.isHeld(), "a null error completes nothing");
        slot.onSuccess();
        cb.close();
        assertThrows(IllegalStateException.class, slot::tryAcquire, "the breaker is closed");
        assertThrows(IllegalStateException.class, () -> cb.newPermitSlot(OP));
    }

    /** Completions racing on one acquisition: exactly one wins, whatever the threads. */
    @Test
    void racingCompletionsCompleteAnAcquisitionOnce() throws Exception {
        CircuitBreaker cb = keep(CircuitBreaker.builder().failureThreshold(1_000_000));
        PermitSlot slot = cb.newPermitSlot(OP);
        int threads = 4;
        int rounds = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        CyclicBarrier end = new CyclicBarrier(threads + 1);
        int[] wins = new int[threads];
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                racers.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        start.await(10, TimeUnit.SECONDS);
                        if (id % 2 == 0 ? slot.onSuccess() : slot.onFailure(new IOException("down"))) {
                            wins[id]++;
                        }
                        end.await(10, TimeUnit.SECONDS);
                    }
                    return null;
                }));
            }
            for (int r = 0; r < rounds; r++) {
                assertTrue(slot.tryAcquire());
                start.await(10, TimeUnit.SECONDS);
                end.await(10, TimeUnit.SECONDS);
                assertFalse(slot.isHeld(), "round " + r);
            }
            for (Future<?> f : racers) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        int total = 0;
        for (int w : wins) {
            total += w;
        }
        assertEquals(rounds, total, "one completion per acquisition");
        Metrics m = cb.metrics(OP);
        assertEquals(rounds, m.successes() + m.failures());
    }
}

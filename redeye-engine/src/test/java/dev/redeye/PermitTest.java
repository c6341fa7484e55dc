package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The permission API: {@code tryAcquire} and exactly one completion per permit, trials, release, the lease of a
 * trial permit that nobody completes, and one admission shared with {@code execute}.
 */
class PermitTest {
    private static final String OP = "payments";
    private final MutableClock clock = new MutableClock();

    private CircuitBreaker.Builder builder() {
        return CircuitBreaker.builder().clock(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5));
    }

    private void trip(CircuitBreaker b) {
        for (int i = 0; i < 2; i++) {
            assertTrue(b.tryAcquire(OP).onFailure(new IOException("down")));
        }
        assertEquals(BreakerStatus.OPEN, b.status(OP));
    }

    @Test
    void aPermitIsCompletedExactlyOnce() {
        try (CircuitBreaker b = builder().build()) {
            Permit p = b.tryAcquire(OP);
            assertTrue(p.isPermitted());
            assertFalse(p.isTrial());
            assertNull(p.rejection());
            assertSame(p, p.orThrow());
            assertEquals(OP, p.operation());
            assertTrue(p.onSuccess());
            assertFalse(p.onSuccess(), "a second completion does nothing");
            assertFalse(p.onFailure(new IOException("late")));
            assertFalse(p.release());
            assertEquals(new Metrics(1, 1, 0, 0, 0, 0, 0), b.metrics(OP));
            assertThrows(NullPointerException.class, () -> b.tryAcquire(OP).onFailure(null));
        }
    }

    @Test
    void aRefusedPermitCarriesItsRejection() {
        List<String> rejected = new ArrayList<>();
        try (CircuitBreaker b = builder().onCallRejected((op, ex) -> rejected.add(op + ":" + ex.getClass()
                .getSimpleName())).build()) {
            trip(b);
            Permit p = b.tryAcquire(OP);
            assertFalse(p.isPermitted());
            CircuitOpenException e = assertInstanceOf(CircuitOpenException.class, p.rejection());
            assertEquals(Duration.ofSeconds(10), e.retryAfter());
            assertSame(e, assertThrows(CircuitOpenException.class, p::orThrow));
            assertFalse(p.onSuccess(), "a refused permit has nothing to complete");
            assertFalse(p.release());
            assertEquals(1, b.metrics(OP).rejections());
            assertEquals(List.of(OP + ":CircuitOpenException"), rejected);
            assertTrue(p.toString().contains("rejected"), p.toString());
        }
    }

    @Test
    void onFailureFollowsTheBreakersRules() {
        try (CircuitBreaker b = builder().recordFailure(t -> !(t instanceof IllegalArgumentException)).build()) {
            assertTrue(b.tryAcquire(OP).onFailure(new IllegalArgumentException("caller's fault")));
            assertTrue(b.tryAcquire(OP).onFailure(new InterruptedException("deploy")));
            assertTrue(b.tryAcquire(OP).release());
            assertEquals(new Metrics(3, 0, 0, 3, 0, 0, 0), b.metrics(OP), "ignored, interrupted, released");
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            assertEquals(0, b.state(OP).failures());
        }
    }

    @Test
    void aTrialPermitDecidesTheBreakerAndHoldsTheClaim() {
        try (CircuitBreaker b = builder().build()) {
            trip(b);
            clock.advance(Duration.ofSeconds(10));
            Permit trial = b.tryAcquire(OP);
            assertTrue(trial.isPermitted() && trial.isTrial(), trial.toString());
            Permit other = b.tryAcquire(OP);
            assertEquals(BreakerStatus.HALF_OPEN, ((CircuitOpenException) other.rejection()).status(),
                    "one trial permit at a time");
            assertTrue(trial.onSuccess());
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            assertEquals(1, b.metrics(OP).trials());
        }
    }

    @Test
    void aReleasedTrialGivesItsClaimBackAndLeavesTheStateAsItIs() {
        try (CircuitBreaker b = builder().build()) {
            trip(b);
            clock.advance(Duration.ofSeconds(10));
            Permit trial = b.tryAcquire(OP);
            assertTrue(trial.isTrial());
            long version = b.state(OP).version();
            assertTrue(trial.release());
            assertEquals(version, b.state(OP).version(), "a release records nothing");
            Permit next = b.tryAcquire(OP);
            assertTrue(next.isTrial(), "the claim was given back at once: " + next);
            assertTrue(next.onFailure(new IOException("still down")));
            assertEquals(BreakerStatus.OPEN, b.status(OP), "a failed trial reopens");
        }
    }

    @Test
    void aTrialPermitNeverCompletedLosesItsSlotWhenItsLeaseRunsOut() {
        try (CircuitBreaker b = builder().build()) {
            trip(b);
            clock.advance(Duration.ofSeconds(10));
            Permit lost = b.tryAcquire(OP);
            assertTrue(lost.isTrial());
            clock.advance(Duration.ofMillis(4_999));
            assertFalse(b.tryAcquire(OP).isPermitted(), "within trialTimeout the lost permit still holds the slot");
            clock.advance(Duration.ofMillis(1));
            Permit next = b.tryAcquire(OP);
            assertTrue(next.isTrial(), "past trialTimeout the slot (and the claim) is taken back: " + next);
            assertFalse(lost.onSuccess(), "the lost permit's late completion is ignored");
            assertEquals(BreakerStatus.HALF_OPEN, b.status(OP), "and did not close the breaker");
            assertTrue(next.onSuccess());
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            Metrics m = b.metrics(OP);
            assertEquals(m.calls(), m.successes() + m.failures() + m.ignored(), "every call ended once: " + m);
            assertEquals(1, m.ignored(), "the lost permit ended as ignored");
        }
    }

    /**
     * Completions racing from several threads: exactly one of them wins, whatever mix of onSuccess, onFailure
     * and release, so every permit is counted once.
     */
    @Test
    void concurrentCompletionsCountOnce() throws Exception {
        int permits = 2_000;
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (CircuitBreaker b = builder().failureThreshold(1_000_000).build()) {
            AtomicInteger wins = new AtomicInteger();
            for (int i = 0; i < permits; i++) {
                Permit p = b.tryAcquire(OP);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int kind = t % 3;
                    done.add(pool.submit(() -> {
                        go.await();
                        boolean won = kind == 0 ? p.onSuccess() : kind == 1 ? p.onFailure(new IOException("x"))
                                : p.release();
                        if (won) {
                            wins.incrementAndGet();
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : done) {
                    f.get(10, TimeUnit.SECONDS);
                }
            }
            assertEquals(permits, wins.get(), "exactly one completion per permit");
            Metrics m = b.metrics(OP);
            assertEquals(permits, m.successes() + m.failures() + m.ignored(), m.toString());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void executeAndPermitsShareOneAdmission() throws Exception {
        try (CircuitBreaker b = builder().build()) {
            b.execute(OP, () -> "ok");
            assertTrue(b.tryAcquire(OP).onFailure(new IOException("down")));
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                throw new IOException("down");
            }));
            assertFalse(b.tryAcquire(OP).isPermitted(), "a failure through each path: the threshold of 2 counts both");
            assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "x"));
            assertEquals(new Metrics(3, 1, 2, 0, 2, 0, 0), b.metrics(OP));
        }
    }
}

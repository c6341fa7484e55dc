package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Point 4, bounded calls: a sync call is interrupted at {@code callTimeout} (real time: the deadline cannot
 * run on a virtual clock) and counts as a timeout failure, the engine's interrupt cleared afterwards; an async
 * call's future completes with TimeoutException and the user's stage is cancelled; cancelling the returned
 * future cancels the stage and records nothing. Deadlines here are 100 ms, waits are bounded by latches.
 */
class CallTimeoutTest {
    private static final String OP = "bounded";
    private final MutableClock clock = new MutableClock();

    private CircuitBreakerBuilder builder() {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).callTimeout(Duration.ofMillis(100));
    }

    @Test
    void aSyncCallIsInterruptedAtTheDeadlineAndCountsAsATimeoutFailure() {
        try (CircuitBreaker b = builder().build()) {
            long started = System.nanoTime();
            assertThrows(InterruptedException.class, () -> b.execute(OP, () -> {
                new CountDownLatch(1).await(30, TimeUnit.SECONDS); // a dependency that never answers
                return "never";
            }));
            assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(20), "the deadline bounded the wait");
            assertFalse(Thread.currentThread().isInterrupted(), "the engine's own interrupt is cleared");
            assertEquals(BreakerStatus.OPEN, b.status(OP), "a timeout is a failure");
            assertEquals(1, b.metrics(OP).failures());
            assertEquals("fast", b.execute("other", () -> "fast"), "a fast call is not interrupted");
            assertFalse(Thread.currentThread().isInterrupted());
        }
    }

    @Test
    void aSyncTrialInterruptedAtTheDeadlineReopensAndGivesItsClaimBack() {
        InMemoryStore backend = new InMemoryStore();
        try (CircuitBreaker b = builder().store(backend.newClient()).build()) {
            LocalModeTest.failOnce(b, OP);
            clock.advance(Duration.ofSeconds(10));
            assertThrows(InterruptedException.class, () -> b.execute(OP, () -> {
                Thread.sleep(30_000);
                return "never";
            }));
            BreakerState s = backend.get(OP).orElseThrow();
            assertTrue(s.open());
            assertEquals(1, s.openCount(), "the timed-out trial failed: reopened");
            assertTrue(backend.claimTrial(OP, 1, Duration.ofSeconds(1)).isPresent(), "its claim was released");
            assertFalse(Thread.currentThread().isInterrupted());
        } finally {
            backend.close();
        }
    }

    @Test
    void anAsyncTimeoutCompletesWithTimeoutExceptionAndCancelsTheStage() throws Exception {
        try (CircuitBreaker b = builder().build()) {
            CompletableFuture<String> never = new CompletableFuture<>();
            CompletableFuture<String> result = b.executeAsync(OP, () -> never);
            ExecutionException e = assertThrows(ExecutionException.class, () -> result.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof TimeoutException, String.valueOf(e.getCause()));
            assertTrue(never.isCancelled(), "the user's stage is cancelled at the timeout");
            assertEquals(BreakerStatus.OPEN, b.status(OP));
            assertEquals(1, b.metrics(OP).failures(),
                    "counted once: the cancellation that follows is not a second outcome");
        }
    }

    @Test
    void cancellingTheReturnedFutureCancelsTheStageAndRecordsNothing() {
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).failureThreshold(1).build()) {
            CompletableFuture<String> pending = new CompletableFuture<>();
            CompletableFuture<String> result = b.executeAsync(OP, () -> pending);
            assertTrue(result.cancel(true));
            assertTrue(pending.isCancelled(), "the user's stage is cancelled with the returned future");
            assertEquals(BreakerStatus.CLOSED, b.status(OP), "a cancellation is not a failure");
            assertEquals(new Metrics(1, 0, 0, 1, 0, 0, 0), b.metrics(OP));
        }
    }

    @Test
    void aCancelledAsyncTrialGivesItsClaimBackAndLeavesTheStateAsItIs() throws Exception {
        InMemoryStore backend = new InMemoryStore();
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).store(backend.newClient()).build()) {
            LocalModeTest.failOnce(b, OP);
            BreakerState before = backend.get(OP).orElseThrow();
            clock.advance(Duration.ofSeconds(10));
            CompletableFuture<String> pending = new CompletableFuture<>();
            b.executeAsync(OP, () -> pending).cancel(true);
            assertTrue(pending.isCancelled());
            assertEquals(before, backend.get(OP).orElseThrow(), "the state is as it was");
            assertEquals("recovered", b.executeAsync(OP, () -> CompletableFuture.completedFuture("recovered"))
                    .get(5, TimeUnit.SECONDS), "the claim was given back: the next caller runs the trial");
            assertFalse(backend.get(OP).orElseThrow().open());
        } finally {
            backend.close();
        }
    }

    @Test
    void aSyncCallThatReturnsAfterTheDeadlineKeepsItsResultAndFails() throws Exception {
        try (CircuitBreaker b = builder().build()) {
            assertEquals("ignored the interrupt", b.execute(OP, () -> {
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                while (System.nanoTime() < end) {
                    Thread.onSpinWait(); // busy, ignoring interrupts
                }
                return "ignored the interrupt";
            }));
            assertFalse(Thread.currentThread().isInterrupted(), "the engine's interrupt is cleared");
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }

    @Test
    void aSlowCallByTheTickerStillCountsAsAFailure() throws IOException {
        try (CircuitBreaker b = builder().callTimeout(Duration.ofSeconds(30)).build()) {
            assertEquals("slow", b.execute(OP, () -> {
                clock.advance(Duration.ofSeconds(31));
                return "slow";
            }));
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }
}

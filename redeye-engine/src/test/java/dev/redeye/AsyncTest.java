package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** executeAsync: outcomes recorded on completion, rejections as failed futures, the real-time call timeout. */
class AsyncTest {
    private static final String OP = "async";
    private final MutableClock clock = new MutableClock();

    private CircuitBreakerBuilder builder() {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10));
    }

    private static Throwable cause(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void outcomesAreRecordedWhenTheStageCompletes() throws Exception {
        try (CircuitBreaker b = builder().build()) {
            CompletableFuture<String> pending = new CompletableFuture<>();
            CompletableFuture<String> result = b.executeAsync(OP, () -> pending);
            assertEquals(0, b.metrics(OP).failures() + b.metrics(OP).successes());
            IOException boom = new IOException("late failure");
            pending.completeExceptionally(boom);
            assertSame(boom, cause(result), "the call's own exception, unwrapped");
            assertEquals(1, b.state(OP).failures());
            assertEquals("fine", b.executeAsync(OP, () -> CompletableFuture.completedFuture("fine")).get());
            assertEquals(0, b.state(OP).failures());
        }
    }

    @Test
    void aSupplierThatThrowsIsAFailedFutureAndAFailure() {
        try (CircuitBreaker b = builder().build()) {
            IllegalStateException bug = new IllegalStateException("could not start");
            assertSame(bug, cause(b.executeAsync(OP, () -> {
                throw bug;
            })));
            assertEquals(1, b.metrics(OP).failures());
        }
    }

    @Test
    void rejectionsAreFailedFuturesOrTheFallback() throws Exception {
        try (CircuitBreaker b = builder().build()) {
            for (int i = 0; i < 2; i++) {
                cause(b.executeAsync(OP, () -> CompletableFuture.failedFuture(new IOException("x"))));
            }
            AtomicInteger ran = new AtomicInteger();
            Throwable rejection = cause(b.executeAsync(OP, () -> {
                ran.incrementAndGet();
                return CompletableFuture.completedFuture("never");
            }));
            assertTrue(rejection instanceof CircuitOpenException);
            assertEquals(BreakerStatus.OPEN, ((CircuitOpenException) rejection).status());
            assertEquals(0, ran.get());
        }
        try (CircuitBreaker b = builder().failureThreshold(1).fallback((op, r) -> "fallback").build()) {
            cause(b.executeAsync(OP, () -> CompletableFuture.failedFuture(new IOException("x"))));
            assertEquals("fallback", b.executeAsync(OP, () -> CompletableFuture.completedFuture("live")).get());
        }
    }

    @Test
    void aTrialRunsAsyncAndReleasesItsClaimOnCompletion() throws Exception {
        try (CircuitBreaker b = builder().failureThreshold(1).build()) {
            cause(b.executeAsync(OP, () -> CompletableFuture.failedFuture(new IOException("x"))));
            clock.advance(Duration.ofSeconds(10));
            CompletableFuture<String> pending = new CompletableFuture<>();
            CompletableFuture<String> trial = b.executeAsync(OP, () -> pending);
            Throwable other = cause(b.executeAsync(OP, () -> CompletableFuture.completedFuture("x")));
            assertEquals(BreakerStatus.HALF_OPEN, ((CircuitOpenException) other).status());
            pending.complete("recovered");
            assertEquals("recovered", trial.get());
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            assertEquals(1, b.metrics(OP).trials());
        }
    }

    @Test
    void callTimeoutCompletesWithTimeoutExceptionAndCountsAsFailure() throws Exception {
        try (CircuitBreaker b = builder().failureThreshold(1).callTimeout(Duration.ofMillis(50)).build()) {
            CompletableFuture<String> never = new CompletableFuture<>();
            Throwable t = cause(b.executeAsync(OP, () -> never));
            assertTrue(t instanceof TimeoutException, String.valueOf(t));
            assertEquals(BreakerStatus.OPEN, b.status(OP));
            never.complete("too late"); // ignored: the outcome was already recorded
            assertEquals(new Metrics(1, 0, 1, 0, 0, 0, 0), b.metrics(OP));
        }
    }

    @Test
    void timeoutCountsEvenWhenThePredicateIgnoresTimeouts() {
        try (CircuitBreaker b = builder().failureThreshold(1).callTimeout(Duration.ofMillis(20))
                .recordFailure(e -> false).build()) {
            assertTrue(cause(b.executeAsync(OP, CompletableFuture::new)) instanceof TimeoutException);
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }
}

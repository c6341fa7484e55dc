package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Point 6: interrupts and cancellation are not dependency failures (a rolling deploy must not open a fleet's
 * breakers). Nothing is recorded, the thread's interrupt status is restored, an interrupted trial gives its
 * claim back and leaves the state as it is; the user's recordFailure predicate still decides everything else.
 */
class InterruptionTest extends BreakersOverInMemoryStore {
    private static final String OP = "deploying";

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted(); // never leak a test's interrupt into the next test
    }

    private CircuitBreakerBuilder builder() {
        return CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10));
    }

    private static Exception interruption(String kind) {
        switch (kind) {
            case "InterruptedException": return new InterruptedException("shutting down");
            case "CancellationException": return new CancellationException("cancelled");
            case "ClosedByInterruptException": return new ClosedByInterruptException();
            default: return new InterruptedIOException("interrupted read");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"InterruptedException", "CancellationException", "ClosedByInterruptException",
            "InterruptedIOException"})
    void anInterruptionIsNotAFailureAndTheInterruptStatusIsRestored(String kind) {
        for (boolean distributed : new boolean[] {false, true}) {
            CircuitBreakerBuilder bb = builder().recordFailure(t -> true);
            if (distributed) {
                bb.store(backend.newClient());
            }
            try (CircuitBreaker b = bb.build()) {
                Exception thrown = interruption(kind);
                assertSame(thrown, assertThrows(Exception.class, () -> b.execute(OP, () -> {
                    throw thrown;
                })));
                boolean interrupted = Thread.interrupted();
                assertEquals(!(thrown instanceof CancellationException), interrupted,
                        "the interrupt status after " + kind);
                assertEquals(BreakerStatus.CLOSED, b.status(OP), kind + " must not count as a failure");
                assertEquals(0, b.state(OP).failures());
                assertEquals(new Metrics(1, 0, 0, 1, 0, 0, 0), b.metrics(OP), "a call, neither success nor failure");
            }
        }
    }

    private static Exception wrappedInterruption(String kind) {
        switch (kind) {
            case "RuntimeException(InterruptedException)":
                return new RuntimeException("worker stopped", new InterruptedException("shutting down"));
            case "UncheckedIOException(InterruptedIOException)":
                return new java.io.UncheckedIOException(new InterruptedIOException("interrupted read"));
            case "IllegalStateException(RuntimeException(ClosedByInterruptException))":
                return new IllegalStateException(new RuntimeException(new ClosedByInterruptException()));
            default: // an ExecutionException of a cancelled inner task, rethrown unchecked
                return new RuntimeException(new ExecutionException(new CancellationException("inner task")));
        }
    }

    /**
     * A client library that wraps the interrupt it saw (a RuntimeException caused by InterruptedException, an
     * UncheckedIOException caused by InterruptedIOException, a cancelled inner task) reports an interruption
     * just the same: the cause chain is what tells, on the sync path, on the async path and for a permit.
     */
    @ParameterizedTest
    @ValueSource(strings = {"RuntimeException(InterruptedException)", "UncheckedIOException(InterruptedIOException)",
            "IllegalStateException(RuntimeException(ClosedByInterruptException))",
            "RuntimeException(ExecutionException(CancellationException))"})
    void anInterruptionWrappedInOtherExceptionsIsNotAFailure(String kind) throws Exception {
        try (CircuitBreaker b = builder().recordFailure(t -> true).store(backend.newClient()).build()) {
            Exception thrown = wrappedInterruption(kind);
            assertSame(thrown, assertThrows(Exception.class, () -> b.execute(OP, () -> {
                throw thrown;
            })));
            boolean interrupted = Thread.interrupted();
            assertEquals(!kind.contains("Cancellation"), interrupted, "the interrupt status after " + kind);
            assertEquals(new Metrics(1, 0, 0, 1, 0, 0, 0), b.metrics(OP), kind + ": a call, not a failure");

            CompletableFuture<String> stage = new CompletableFuture<>();
            CompletableFuture<String> result = b.executeAsync(OP, () -> stage);
            stage.completeExceptionally(new java.util.concurrent.CompletionException(thrown));
            ExecutionException ex = assertThrows(ExecutionException.class, () -> result.get(5, TimeUnit.SECONDS));
            assertSame(thrown, ex.getCause(), "the stage's own exception, unwrapped as for any other");

            Permit p = b.tryAcquire(OP);
            assertTrue(p.onFailure(thrown));
            assertEquals(new Metrics(3, 0, 0, 3, 0, 0, 0), b.metrics(OP), kind + ": three calls, no failure");
            assertEquals(0, b.state(OP).failures());
            assertFalse(Thread.interrupted());
        }
    }

    /** A timeout of the dependency stays a failure also when it is wrapped. */
    @Test
    void aWrappedSocketTimeoutIsStillAFailure() {
        try (CircuitBreaker b = builder().build()) {
            assertThrows(java.io.UncheckedIOException.class, () -> b.execute(OP, () -> {
                throw new java.io.UncheckedIOException(new SocketTimeoutException("read timed out"));
            }));
            assertFalse(Thread.currentThread().isInterrupted());
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }

    /** A cause chain that loops (a hand-made exception) is walked once, not forever. */
    @Test
    void aCyclicCauseChainEnds() {
        try (CircuitBreaker b = builder().failureThreshold(2).build()) {
            RuntimeException a = new RuntimeException("a");
            RuntimeException c = new RuntimeException("c", a);
            a.initCause(c);
            assertThrows(RuntimeException.class, () -> b.execute(OP, () -> {
                throw a;
            }));
            assertEquals(1, b.metrics(OP).failures());
        }
    }

    @Test
    void anyExceptionWhileTheThreadIsInterruptedIsNotAFailureAndTheStatusStays() {
        try (CircuitBreaker b = builder().store(backend.newClient()).build()) {
            assertThrows(IOException.class, () -> b.execute(OP, () -> {
                Thread.currentThread().interrupt(); // the deploy interrupts the thread; the client then fails
                throw new IOException("stream closed");
            }));
            assertTrue(Thread.interrupted(), "the status is left set");
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
        }
    }

    @Test
    void aSocketTimeoutIsARealFailure() {
        try (CircuitBreaker b = builder().build()) {
            assertThrows(SocketTimeoutException.class, () -> b.execute(OP, () -> {
                throw new SocketTimeoutException("read timed out");
            }));
            assertFalse(Thread.currentThread().isInterrupted());
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }

    @Test
    void theUserPredicateStillDecidesOtherExceptions() {
        try (CircuitBreaker b = builder().recordFailure(t -> !(t instanceof IllegalArgumentException)).build()) {
            assertThrows(IllegalArgumentException.class, () -> b.execute(OP, () -> {
                throw new IllegalArgumentException("caller's fault");
            }));
            assertEquals(1, b.metrics(OP).ignored());
            assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
                throw new IllegalStateException("dependency broken");
            }));
            assertEquals(BreakerStatus.OPEN, b.status(OP));
        }
    }

    @Test
    void aCancelledAsyncStageIsNotAFailure() {
        try (CircuitBreaker b = builder().build()) {
            CompletableFuture<String> stage = new CompletableFuture<>();
            CompletableFuture<String> result = b.executeAsync(OP, () -> stage);
            stage.cancel(true);
            assertThrows(CancellationException.class, () -> result.get(5, TimeUnit.SECONDS));
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            Supplier<CompletableFuture<String>> interrupted =
                    () -> CompletableFuture.failedFuture(new InterruptedException("worker stopped"));
            assertThrows(ExecutionException.class, () -> b.executeAsync(OP, interrupted).get(5, TimeUnit.SECONDS));
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            assertEquals(0, b.metrics(OP).failures());
        }
    }

    @Test
    void anInterruptedTrialGivesItsClaimBackAndLeavesTheStateAsItIs() throws Exception {
        try (CircuitBreaker a = builder().store(backend.newClient()).build();
             CircuitBreaker other = builder().store(backend.newClient()).build()) {
            LocalModeTest.failOnce(a, OP);
            BreakerState open = backend.get(OP).orElseThrow();
            clock.advance(Duration.ofSeconds(10));
            assertThrows(InterruptedException.class, () -> a.execute(OP, () -> {
                throw new InterruptedException("deploy");
            }));
            assertTrue(Thread.interrupted());
            assertEquals(open, backend.get(OP).orElseThrow(), "no outcome written: same period, same counters");
            assertEquals(1, a.metrics(OP).trials());
            assertEquals("ok", other.execute(OP, () -> "ok"), "the claim is free at once for another instance");
            assertFalse(backend.get(OP).orElseThrow().open());
        }
    }

    @Test
    void anInterruptedLocalTrialLeavesTheStateAsItIs() {
        try (CircuitBreaker b = builder().build()) {
            LocalModeTest.failOnce(b, OP);
            BreakerState open = b.state(OP);
            clock.advance(Duration.ofSeconds(10));
            assertThrows(InterruptedException.class, () -> b.execute(OP, () -> {
                throw new InterruptedException("deploy");
            }));
            assertTrue(Thread.interrupted());
            assertEquals(open, b.state(OP));
            assertEquals("ok", b.execute(OP, () -> "ok"), "the slot and the claim are free again");
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
        }
    }
}

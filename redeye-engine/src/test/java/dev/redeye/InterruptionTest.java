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
class InterruptionTest {
    private static final String OP = "deploying";
    private final MutableClock clock = new MutableClock();
    private final InMemoryStore backend = new InMemoryStore();

    @AfterEach
    void close() {
        Thread.interrupted(); // never leak a test's interrupt into the next test
        backend.close();
    }

    private CircuitBreaker.Builder builder() {
        return CircuitBreaker.builder().clock(clock).jitter(0).failureThreshold(1)
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
            CircuitBreaker.Builder bb = builder().recordFailure(t -> true);
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

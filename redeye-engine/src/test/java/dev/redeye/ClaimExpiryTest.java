package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Real time is the point here: trial claims expire by the store's own clock. A trial that outlives
 * {@code trialTimeout} loses its claim, which allows one more trial, and its late release does not free the
 * new holder's claim.
 */
class ClaimExpiryTest {
    private static final String OP = "slow-dependency";

    @Test
    void aTrialOutlivingTrialTimeoutLosesItsClaimToExactlyOneMoreTrial() throws Exception {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        // a's claims live 300 ms (real time); b's live 30 s, so b's claim outlasts every assertion below
        try (CircuitBreaker a = CircuitBreaker.builder().clock(clock).jitter(0).failureThreshold(1)
                .successThreshold(3).resetTimeout(Duration.ofSeconds(1)).trialTimeout(Duration.ofMillis(300))
                .store(backend.newClient()).build();
             CircuitBreaker b = CircuitBreaker.builder().clock(clock).jitter(0).failureThreshold(1)
                .successThreshold(3).resetTimeout(Duration.ofSeconds(1)).trialTimeout(Duration.ofSeconds(30))
                .store(backend.newClient()).build()) {
            assertThrows(IOException.class, () -> a.execute(OP, () -> {
                throw new IOException("down");
            }));
            clock.advance(Duration.ofSeconds(1));
            CompletableFuture<String> slow = new CompletableFuture<>();
            long claimedAt = System.nanoTime();
            CompletableFuture<String> first = a.executeAsync(OP, () -> slow);
            CompletableFuture<String> early = b.executeAsync(OP, () -> CompletableFuture.completedFuture("x"));
            if (System.nanoTime() - claimedAt < TimeUnit.MILLISECONDS.toNanos(250)) {
                assertTrue(early.isCompletedExceptionally(), "a live claim must hold off other trials");
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            CompletableFuture<String> held = new CompletableFuture<>();
            CompletableFuture<String> secondTrial = b.executeAsync(OP, () -> held);
            while (secondTrial.isCompletedExceptionally()) { // rejected: the first claim is still live
                assertTrue(System.nanoTime() < deadline, "the first claim never expired");
                Thread.sleep(20);
                secondTrial = b.executeAsync(OP, () -> held);
            }
            slow.complete("late"); // the first trial ends and releases its expired token
            assertEquals("late", first.get(5, TimeUnit.SECONDS));
            assertEquals(BreakerStatus.HALF_OPEN,
                    assertThrows(CircuitOpenException.class, () -> a.execute(OP, () -> "x")).status(),
                    "the late release must not free the second trial's claim");
            held.complete("ok");
            assertEquals("ok", secondTrial.get(5, TimeUnit.SECONDS));
            assertEquals(2, a.metrics(OP).trials() + b.metrics(OP).trials());
        } finally {
            backend.close();
        }
    }
}

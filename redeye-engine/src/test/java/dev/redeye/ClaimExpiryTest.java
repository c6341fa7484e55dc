package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A trial that outlives its claim: the claim expires (the store's business, here decided by the test through
 * {@link ManualClaims} so that the test asserts on every machine), which lets exactly one more trial run on
 * another instance, once that instance's hold after its lost claim ran out; the instance whose trial is still
 * running claims no other; the late release of the expired claim does not free the new holder's claim.
 */
class ClaimExpiryTest {
    private static final String OP = "slow-dependency";

    private static CircuitOpenException rejection(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof CircuitOpenException, String.valueOf(e.getCause()));
        return (CircuitOpenException) e.getCause();
    }

    @Test
    void aTrialOutlivingItsClaimLosesItToExactlyOneMoreTrial() throws Exception {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        ManualClaims claims = new ManualClaims();
        CircuitBreakerBuilder common = CircuitBreaker.builder().clock(clock).ticker(clock)
                .jitter(0).failureThreshold(1)
                .successThreshold(3).resetTimeout(Duration.ofSeconds(1)).trialTimeout(Duration.ofSeconds(30));
        try (CircuitBreaker a = common.store(claims.over(backend.newClient())).build();
             CircuitBreaker b = common.store(claims.over(backend.newClient())).build()) {
            assertThrows(IOException.class, () -> a.execute(OP, () -> {
                throw new IOException("down");
            }));
            clock.advance(Duration.ofSeconds(1));
            CompletableFuture<String> slow = new CompletableFuture<>();
            CompletableFuture<String> first = a.executeAsync(OP, () -> slow);
            assertFalse(first.isDone(), "a runs the first trial");
            assertEquals(BreakerStatus.HALF_OPEN,
                    rejection(b.executeAsync(OP, () -> CompletableFuture.completedFuture("x"))).status(),
                    "a live claim holds off other trials");

            claims.expireAll(); // a's trial outlives its claim
            int claimsBefore = claims.claimCalls.get();
            rejection(b.executeAsync(OP, () -> CompletableFuture.completedFuture("x")));
            rejection(a.executeAsync(OP, () -> CompletableFuture.completedFuture("x")));
            assertEquals(claimsBefore, claims.claimCalls.get(),
                    "b waits out its hold; a, whose trial still runs, claims no other");

            clock.advance(Duration.ofSeconds(30)); // b's hold: trialTimeout after its lost claim
            CompletableFuture<String> held = new CompletableFuture<>();
            CompletableFuture<String> second = b.executeAsync(OP, () -> held);
            assertFalse(second.isDone(), "b runs the second trial once the first claim expired");
            rejection(a.executeAsync(OP, () -> CompletableFuture.completedFuture("x")));

            slow.complete("late"); // the first trial ends and releases its expired token
            assertEquals("late", first.get(5, TimeUnit.SECONDS));
            assertEquals(1, claims.liveClaims(OP), "the late release must not free the second trial's claim");
            assertEquals(BreakerStatus.HALF_OPEN,
                    assertThrows(CircuitOpenException.class, () -> a.execute(OP, () -> "x")).status());
            held.complete("ok");
            assertEquals("ok", second.get(5, TimeUnit.SECONDS));
            assertEquals(2, a.metrics(OP).trials() + b.metrics(OP).trials());
            assertEquals(2, a.state(OP).trialSuccesses(), "two successes of the same open period");
        } finally {
            backend.close();
        }
    }
}

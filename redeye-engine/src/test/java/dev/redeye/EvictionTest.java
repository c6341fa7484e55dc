package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Point 9, bounded engine state through the breaker: past {@code maxOperations} the least recently used
 * per-operation state is evicted; in local mode with its stored state, unless that is open; never an
 * operation with a trial running.
 */
class EvictionTest {

    @Test
    void pastMaxOperationsALocalBreakerForgetsClosedStatesButNeverAnOpenOne() {
        MutableClock clock = new MutableClock();
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10)).maxOperations(4).build()) {
            failOnce(b, "counted"); // closed, failures = 1
            failOnce(b, "open");
            failOnce(b, "open");
            for (int i = 0; i < 20; i++) {
                ok(b, "id-" + i); // unbounded names
            }
            assertTrue(b.allMetrics().size() <= 4, "kept: " + b.allMetrics().keySet());
            assertEquals(Metrics.EMPTY, b.metrics("counted"), "evicted with its metrics");
            assertEquals(BreakerStatus.OPEN, rejected(b, "open").status(), "an evicted open breaker stays open");
            assertEquals(0, b.state("counted").failures(), "an evicted closed state is forgotten");
        }
    }

    @Test
    void aDistributedBreakerEvictsItsViewsAndTheLocalPolicysKeys() {
        MutableClock clock = new MutableClock();
        InMemoryStore backend = new InMemoryStore();
        SpyStore store = SpyStore.over(backend);
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).maxOperations(2).storeErrorPolicy(StoreErrorPolicy.LOCAL)
                .store(store).build()) {
            failOnce(b, "open");
            rejected(b, "open");
            store.resetCounts();
            ok(b, "a");
            ok(b, "b");
            ok(b, "c");
            assertTrue(b.allMetrics().size() <= 2);
            assertEquals(BreakerStatus.OPEN, rejected(b, "open").status(), "re-read from the store after eviction");
            assertTrue(store.reads.get() >= 4);
        } finally {
            backend.close();
        }
    }

    @Test
    void anEvictedOperationWithATrialInFlightKeepsItsSlot() {
        MutableClock clock = new MutableClock();
        try (CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofSeconds(10)).maxOperations(1).build()) {
            failOnce(b, "slow");
            clock.advance(Duration.ofSeconds(10));
            CompletableFuture<String> hung = new CompletableFuture<>();
            CompletableFuture<String> trial = b.executeAsync("slow", () -> hung);
            for (int i = 0; i < 5; i++) {
                ok(b, "other-" + i);
            }
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b, "slow").status(), "still this instance's running trial");
            hung.complete("done");
            assertFalse(trial.isCompletedExceptionally());
        }
    }
}

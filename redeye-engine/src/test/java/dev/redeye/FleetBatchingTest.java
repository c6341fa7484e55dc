package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.Strategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A fleet in virtual time: {@value #INSTANCES} instances over one store, at four times a stated per-key write
 * ceiling ({@value #CEILING} writes/s) in calls, on one operation of the error-rate strategy (every outcome is a
 * write). With write batching the store's writes stay below the ceiling, and a dependency that dies is still
 * detected (the breaker opens in the store) within the strategy's bound plus {@code maxDelay}; without batching the
 * same fleet writes four times the ceiling (the control).
 *
 * <p>The strategy's bound: the error rate, from 0, reaches the threshold 0.5 after
 * {@code ceil(ln(1 - 0.5) / ln(0.9)) = 7} failures in a row, which the fleet makes in under 1 ms at
 * {@value #CALLS_PER_MS} calls per ms; the bound stated is one simulated step (1 ms) for them, plus
 * {@code maxDelay}.
 */
class FleetBatchingTest {
    static final int INSTANCES = 20;
    /** The stated per-key ceiling of the store, in writes per second. */
    static final int CEILING = 2_000;
    /** Four times the ceiling, per ms of virtual time. */
    static final int CALLS_PER_MS = 4 * CEILING / 1_000;
    static final Duration MAX_DELAY = Duration.ofMillis(100);
    static final long HEALTHY_MS = 3_000;
    static final String OP = "hot-key";
    /** Failures in a row that take the error rate from 0 to the threshold: ceil(ln 0.5 / ln 0.9). */
    static final int FAILURES_TO_OPEN = (int) Math.ceil(Math.log(0.5) / Math.log(0.9));

    /** What one run of the fleet saw. */
    record Run(double writesPerSecond, long detectionMillis) {
    }

    @Test
    void batchingKeepsTheFleetBelowTheCeilingAndDetectsWithinTheBoundPlusTheDelay() {
        Run batched = run(MAX_DELAY);
        assertTrue(batched.writesPerSecond() < CEILING, "with batching, " + batched.writesPerSecond()
                + " writes/s on one key, the ceiling is " + CEILING);
        long bound = strategyBoundMillis() + MAX_DELAY.toMillis();
        assertTrue(batched.detectionMillis() >= 0 && batched.detectionMillis() <= bound,
                "opened " + batched.detectionMillis() + " ms after the dependency died; the bound is " + bound + " ms");

        Run unbatched = run(null);
        System.out.println("fleet of " + INSTANCES + " at " + CALLS_PER_MS * 1_000 + " calls/s on one key (ceiling "
                + CEILING + " writes/s): batched " + batched + ", unbatched " + unbatched);
        assertTrue(unbatched.writesPerSecond() >= 3.9 * CEILING, "without batching every call is a write: "
                + unbatched.writesPerSecond() + " writes/s");
        assertTrue(unbatched.detectionMillis() <= strategyBoundMillis(), "without batching: "
                + unbatched.detectionMillis() + " ms");
    }

    /** The strategy's own detection bound at the fleet's call rate, in whole simulated ms (at least one step). */
    static long strategyBoundMillis() {
        return Math.max(1, (long) Math.ceil((double) FAILURES_TO_OPEN / CALLS_PER_MS));
    }

    private static Run run(Duration batching) {
        MutableClock clock = new MutableClock();
        List<CountingStore> stores = new ArrayList<>();
        List<CircuitBreaker> fleet = new ArrayList<>();
        try (InMemoryStore backend = new InMemoryStore()) {
            for (int i = 0; i < INSTANCES; i++) {
                CountingStore store = new CountingStore(backend.newClient());
                stores.add(store);
                CircuitBreakerBuilder b = CircuitBreaker.builder().store(store).clock(clock).ticker(clock)
                        .strategy(Strategy.ERROR_RATE).minimumCalls(20).errorRateThreshold(0.5).errorRateDecay(0.9)
                        .resetTimeout(Duration.ofMinutes(5)).jitter(0);
                if (batching != null) {
                    b.recordBatching(batching);
                }
                fleet.add(b.build());
            }
            boolean[] dead = {false};
            int next = 0;
            for (long ms = 0; ms < HEALTHY_MS; ms++) {
                next = step(fleet, clock, next, dead[0]);
            }
            long writes = 0;
            for (CountingStore s : stores) {
                writes += s.snapshot().writes();
            }
            double perSecond = writes * 1_000.0 / HEALTHY_MS;
            assertFalse(backend.get(OP).orElseThrow().open(), "healthy: closed");
            dead[0] = true;
            long detected = -1;
            for (long ms = 1; ms <= 10_000; ms++) {
                next = step(fleet, clock, next, true);
                if (backend.get(OP).orElseThrow().open()) {
                    detected = ms;
                    break;
                }
            }
            return new Run(perSecond, detected);
        } finally {
            fleet.forEach(CircuitBreaker::close);
        }
    }

    /** One ms: {@link #CALLS_PER_MS} calls spread round-robin over the fleet, then each instance's sweep. */
    private static int step(List<CircuitBreaker> fleet, MutableClock clock, int next, boolean dead) {
        int n = next;
        for (int c = 0; c < CALLS_PER_MS; c++) {
            CircuitBreaker b = fleet.get(n);
            n = (n + 1) % fleet.size();
            try {
                b.executeOrElse(OP, () -> {
                    if (dead) {
                        throw new IllegalStateException("dependency down");
                    }
                    return "ok";
                }, "rejected");
            } catch (IllegalStateException expected) {
                // the dependency's failure, recorded
            }
        }
        clock.advanceMillis(1);
        for (CircuitBreaker b : fleet) {
            OutcomeBatcher batcher = b.parts().recorder.batcher();
            if (batcher != null) {
                batcher.sweep();
            }
        }
        return n;
    }
}

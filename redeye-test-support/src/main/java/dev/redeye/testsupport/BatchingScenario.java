package dev.redeye.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.Store;
import java.time.Duration;

/**
 * Write batching through the engine over one store, the scenario every store with {@link OutcomeBatches} runs:
 * the store declares the capability (a lazily opened one before it connects), two batching breakers over two
 * clients of the store write their outcomes as one batch each and the state counts every outcome, and a failing
 * dependency opens the breaker at once, without waiting for the batch's delay.
 */
public final class BatchingScenario {
    private static final String OP = "search";

    private BatchingScenario() {
    }

    private static CircuitBreaker instance(Store store) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0).strategy(Strategy.ERROR_RATE)
                .minimumCalls(20).errorRateThreshold(0.5).resetTimeout(Duration.ofMinutes(5))
                .recordBatching(Duration.ofSeconds(10)).build();
    }

    /**
     * Runs it.
     *
     * @param uri a URI {@code Stores.open} opens (lazily) twice, two clients of one fresh store
     */
    public static void run(String uri) {
        Store lazy = Stores.open(uri);
        assertTrue(lazy.capability(OutcomeBatches.class).isPresent(), "declared before it connects");
        CountingStore counted = new CountingStore(Stores.open(uri));
        try (CircuitBreaker a = instance(lazy); CircuitBreaker b = instance(counted)) {
            for (int i = 0; i < 500; i++) {
                a.execute(OP, () -> "ok");
                b.execute(OP, () -> "ok");
            }
            assertEquals(0, counted.countOf(AtomicOperation.Kind.OUTCOMES), "held for up to 10 s");
            BreakerState s = a.state(OP); // writes a's batch first
            assertEquals(500, s.samples(), "a's 500 outcomes in one batch");
            assertEquals(1_000, b.state(OP).samples(), "and b's");
            assertEquals(1, counted.countOf(AtomicOperation.Kind.OUTCOMES), "b wrote 500 outcomes in one write");
            for (int i = 0; i < 7; i++) {
                assertThrows(IllegalStateException.class, () -> b.execute(OP, () -> {
                    throw new IllegalStateException("down");
                }));
            }
            assertEquals(BreakerStatus.OPEN, a.status(OP), "seven failures in a row open at 0.5 (decay 0.9), "
                    + "written at once without waiting 10 s");
        }
    }
}

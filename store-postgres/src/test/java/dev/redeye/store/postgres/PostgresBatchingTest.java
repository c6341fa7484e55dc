package dev.redeye.store.postgres;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Write batching over PostgreSQL: the store declares {@link OutcomeBatches} (also a lazily opened one, before it
 * connects), two batching breakers over one table write their outcomes as batches (one row-locked transaction
 * each) and the row counts every outcome; a failing dependency opens the breaker at once.
 */
class PostgresBatchingTest {
    private static final String OP = "search";

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_batching");

    private static CircuitBreaker instance(Store store) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0).strategy(Strategy.ERROR_RATE)
                .minimumCalls(20).errorRateThreshold(0.5).resetTimeout(Duration.ofMinutes(5))
                .recordBatching(Duration.ofSeconds(10)).build();
    }

    @Test
    void twoBatchingInstancesCountEveryOutcomeInFewWritesAndOpenAtOnce() {
        String uri = PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + PG.newTable());
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

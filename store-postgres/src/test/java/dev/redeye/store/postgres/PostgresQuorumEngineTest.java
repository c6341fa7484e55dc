package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Contribution;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Quorum opening through the engine over PostgreSQL: two breakers with different instance ids, each over a store
 * client of its own on one table, with a quorum of 2 and a failure threshold of 3. One instance failing alone
 * never opens the fleet (it is tripped locally, as an outlier, reported once); the failure of a second instance
 * opens it.
 */
class PostgresQuorumEngineTest {
    private static final String OP = "inventory";

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_quorum_engine");

    private final List<Outlier> outliers = new CopyOnWriteArrayList<>();

    private CircuitBreaker instance(String table, String id) {
        PostgresStore store = PG.keep(PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table="
                + table)));
        return instance(store, id, false);
    }

    private CircuitBreaker instance(Store store, String id, boolean closeStore) {
        return CircuitBreaker.builder().store(store).closeStore(closeStore).jitter(0).failureThreshold(3).quorum(2)
                .instanceId(id).resetTimeout(Duration.ofSeconds(60)).onOutlier(outliers::add).build();
    }

    /**
     * {@code Stores.open} of a PostgreSQL URI (lazy by default: the store connects on first use) declares
     * {@link QuorumState} before it connects, so a breaker with a quorum is built over it, and the quorum holds.
     */
    @Test
    void aLazilyOpenedStoreDeclaresQuorumStateBeforeItConnects() {
        String uri = PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + PG.newTable());
        Store lazy = Stores.open(uri);
        try (CircuitBreaker a = instance(lazy, "pod-a", true);
             CircuitBreaker b = instance(Stores.open(uri), "pod-b", true)) {
            assertTrue(lazy.capability(QuorumState.class).isPresent());
            for (int i = 0; i < 5; i++) {
                a.recordFailure(OP);
            }
            assertEquals(BreakerStatus.CLOSED, b.status(OP), "one instance alone opens nothing");
            assertTrue(lazy.capability(QuorumState.class).isPresent(), "and once connected");
            b.recordFailure(OP);
            assertEquals(BreakerStatus.OPEN, a.status(OP), "the second instance makes the quorum");
        }
    }

    @Test
    void oneInstanceFailingAloneNeverOpensTheFleetAndASecondInstanceOpensIt() {
        String table = PG.newTable();
        try (CircuitBreaker a = instance(table, "pod-a"); CircuitBreaker b = instance(table, "pod-b")) {
            for (int i = 0; i < 100; i++) {
                a.recordFailure(OP);
            }
            assertEquals(BreakerStatus.CLOSED, a.status(OP), "below the quorum the fleet stays closed");
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
            assertEquals(100, b.state(OP).failures(), "B reads A's failures from the shared row");
            List<Contribution> contributors = b.state(OP).contributors();
            assertEquals(1, contributors.size(), contributors.toString());
            assertEquals("pod-a", contributors.get(0).instance());
            assertEquals(100, contributors.get(0).failures());
            assertTrue(a.isOutlier(OP), "A failing alone past the threshold is an outlier");
            assertFalse(b.isOutlier(OP));
            assertEquals(1, outliers.size(), "one report for the trip, however many failures follow: " + outliers);
            assertEquals("pod-a", outliers.get(0).instance());
            assertEquals(2, outliers.get(0).quorumRequired());

            assertEquals("ok", b.execute(OP, () -> "ok"), "the other instance is admitted (its success clears)");
            assertEquals(0, b.state(OP).failures(), "the consecutive count was cleared");

            a.recordFailure(OP);
            a.recordFailure(OP);
            a.recordFailure(OP);
            assertEquals(BreakerStatus.CLOSED, a.status(OP), "three failures of one instance: still no quorum");
            b.recordFailure(OP);
            assertEquals(BreakerStatus.OPEN, b.status(OP), "the second instance's failure makes the quorum");
            assertEquals(BreakerStatus.OPEN, a.status(OP), "the fleet is open for A too");
            assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "rejected"));
        }
    }
}

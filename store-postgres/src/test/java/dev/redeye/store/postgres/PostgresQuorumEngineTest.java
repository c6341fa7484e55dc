package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.testsupport.QuorumEngineScenario;
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
            QuorumEngineScenario.run(a, b, outliers, OP, 100, "the shared row");
        }
    }
}

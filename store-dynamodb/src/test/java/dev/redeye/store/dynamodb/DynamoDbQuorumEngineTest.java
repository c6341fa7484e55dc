package dev.redeye.store.dynamodb;

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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Quorum opening through the engine over DynamoDB: two breakers with different instance ids, each over a store of
 * its own opened by {@code Stores.open} with the tests' {@code dynamodb://} URI (lazy: the store connects on first
 * use) on one table, with a quorum of 2 and a failure threshold of 3. One instance failing alone never opens the
 * fleet (it is tripped locally, as an outlier, reported once); the failure of a second instance opens it, at the
 * failure that makes the quorum.
 */
class DynamoDbQuorumEngineTest {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_quorum_engine");
    private static final String URI = DynamoTestSupport.uri(TABLE, "createTable=true");

    private final List<Outlier> outliers = new CopyOnWriteArrayList<>();

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    private CircuitBreaker instance(Store store, String id) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0).failureThreshold(3).quorum(2)
                .instanceId(id).resetTimeout(Duration.ofSeconds(60)).onOutlier(outliers::add).build();
    }

    /**
     * {@code Stores.open} of the URI declares {@link QuorumState} before it connects, so a breaker with a quorum
     * is built over it; once connected the store still offers it.
     */
    @Test
    void aLazilyOpenedStoreDeclaresQuorumStateBeforeAndAfterItConnects() {
        Store lazy = Stores.open(URI);
        try (CircuitBreaker a = instance(lazy, "pod-a")) {
            assertTrue(lazy.capability(QuorumState.class).isPresent(), "before it connects");
            a.recordFailure("lazy-" + System.nanoTime());
            assertTrue(lazy.capability(QuorumState.class).isPresent(), "once connected");
        }
    }

    @Test
    void oneInstanceFailingAloneNeverOpensTheFleetAndASecondInstanceOpensIt() {
        String op = "inventory-" + System.nanoTime();
        try (CircuitBreaker a = instance(Stores.open(URI), "pod-a");
             CircuitBreaker b = instance(Stores.open(URI), "pod-b")) {
            for (int i = 0; i < 30; i++) {
                a.recordFailure(op);
            }
            assertEquals(BreakerStatus.CLOSED, a.status(op), "below the quorum the fleet stays closed");
            assertEquals(BreakerStatus.CLOSED, b.status(op));
            assertEquals(30, b.state(op).failures(), "B reads A's failures from the shared item");
            List<Contribution> contributors = b.state(op).contributors();
            assertEquals(1, contributors.size(), contributors.toString());
            assertEquals("pod-a", contributors.get(0).instance());
            assertEquals(30, contributors.get(0).failures());
            assertTrue(a.isOutlier(op), "A failing alone past the threshold is an outlier");
            assertFalse(b.isOutlier(op));
            assertEquals(1, outliers.size(), "one report for the trip, however many failures follow: " + outliers);
            assertEquals("pod-a", outliers.get(0).instance());
            assertEquals(2, outliers.get(0).quorumRequired());

            assertEquals("ok", b.execute(op, () -> "ok"), "the other instance is admitted (its success clears)");
            assertEquals(0, b.state(op).failures(), "the consecutive count was cleared");

            a.recordFailure(op);
            a.recordFailure(op);
            a.recordFailure(op);
            assertEquals(BreakerStatus.CLOSED, a.status(op), "three failures of one instance: still no quorum");
            b.recordFailure(op);
            assertEquals(BreakerStatus.OPEN, b.status(op), "the second instance's failure makes the quorum");
            assertEquals(BreakerStatus.OPEN, a.status(op), "the fleet is open for A too");
            assertEquals(2, b.state(op).contributors().size(), b.state(op).contributors().toString());
            assertThrows(CircuitOpenException.class, () -> b.execute(op, () -> "rejected"));
        }
    }
}

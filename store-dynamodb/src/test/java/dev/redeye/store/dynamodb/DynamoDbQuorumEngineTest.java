package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.testsupport.QuorumEngineScenario;
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
        try (CircuitBreaker a = instance(Stores.open(URI), "pod-a");
             CircuitBreaker b = instance(Stores.open(URI), "pod-b")) {
            QuorumEngineScenario.run(a, b, outliers, "inventory-" + System.nanoTime(), 30, "the shared item");
        }
    }
}

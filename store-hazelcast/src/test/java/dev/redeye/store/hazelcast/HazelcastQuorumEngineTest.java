package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.testsupport.QuorumEngineScenario;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Quorum opening through the engine over Hazelcast: two breakers with different instance ids, each over a store
 * on one of the shared embedded cluster's two clients, one map, a quorum of 2 and a failure threshold of 3, in
 * native mode (the rule runs in the members' entry processor, so the quorum and the instance travel on the wire)
 * and in CAS mode (the rule runs on the client). One instance failing alone never opens the fleet (it is tripped
 * locally, as an outlier, reported once); the failure of a second instance opens it, in that write.
 */
@ExtendWith(SharedClusters.class)
class HazelcastQuorumEngineTest {
    private static final String OP = "inventory";

    private final List<Outlier> outliers = new CopyOnWriteArrayList<>();

    private static String map() {
        return "quorum-engine-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private CircuitBreaker instance(HazelcastInstance client, String map, HazelcastStore.Mode mode, String id) {
        HazelcastStore store = HazelcastStore.builder(client).map(map).mode(mode).build();
        assertEquals(mode, store.mode());
        return instance(store, id);
    }

    private CircuitBreaker instance(Store store, String id) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0).failureThreshold(3).quorum(2)
                .instanceId(id).resetTimeout(Duration.ofSeconds(60)).onOutlier(outliers::add).build();
    }

    @ParameterizedTest
    @EnumSource(value = HazelcastStore.Mode.class, names = {"NATIVE", "CAS"})
    void oneInstanceFailingAloneNeverOpensTheFleetAndASecondInstanceOpensIt(HazelcastStore.Mode mode) {
        HazelcastInstance[] clients = SharedClusters.embedded().clients();
        String map = map();
        try (CircuitBreaker a = instance(clients[0], map, mode, "pod-a");
             CircuitBreaker b = instance(clients[1], map, mode, "pod-b")) {
            QuorumEngineScenario.run(a, b, outliers, OP, 100, "the shared entry (" + mode + ")");
        }
    }

    /**
     * {@code Stores.open} of a Hazelcast URI (lazy by default: the store connects on first use) declares
     * {@link QuorumState} before it connects, so a breaker with a quorum is built over it, and the quorum holds.
     */
    @Test
    void aStoreOpenedFromAUriDeclaresQuorumState() {
        String uri = SharedClusters.embedded().cluster().uri("map=" + map() + "&timeout=10000");
        Store lazy = Stores.open(uri);
        try (CircuitBreaker a = instance(lazy, "pod-a"); CircuitBreaker b = instance(Stores.open(uri), "pod-b")) {
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
}

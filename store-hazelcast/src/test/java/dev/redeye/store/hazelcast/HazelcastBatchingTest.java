package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.testsupport.BatchingScenario;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Write batching over Hazelcast ({@link BatchingScenario}), from {@code hazelcast://} URIs opened lazily, in both
 * modes the URI's members give: native on the shared embedded cluster (a batch is one entry processor folding its
 * outcomes on the member) and CAS on the shared bare member (a batch is one compare-and-set loop, folded on the
 * client).
 */
@ExtendWith(SharedClusters.class)
class HazelcastBatchingTest {

    @ParameterizedTest
    @EnumSource(value = HazelcastStore.Mode.class, names = {"NATIVE", "CAS"})
    void twoBatchingInstancesCountEveryOutcomeInFewWritesAndOpenAtOnce(HazelcastStore.Mode mode) {
        String query = "map=batching-" + UUID.randomUUID().toString().substring(0, 8) + "&timeout=10000";
        String uri = mode == HazelcastStore.Mode.NATIVE ? SharedClusters.embedded().cluster().uri(query)
                : SharedClusters.bare().member().uri(query);
        try (HazelcastStore s = HazelcastStore.open(uri)) {
            assertEquals(mode, s.mode(), s::toString); // the mode the URI's stores detect on these members
        }
        BatchingScenario.run(uri);
    }
}

package dev.redeye.store.hazelcast;

import dev.redeye.testsupport.QuorumFleetScenario;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Quorum opening over Hazelcast with two instances in two JVM processes ({@link QuorumFleetScenario}): both are
 * clients of the members this test JVM runs, instance A from the JVM the scenario starts.
 */
class HazelcastQuorumTwoProcessTest {
    @Test
    void anOutlierAloneLeavesTheFleetClosedAndASecondProcessMakesTheQuorum() throws Exception {
        String map = "quorum-processes-" + UUID.randomUUID().toString().substring(0, 8);
        QuorumFleetScenario.run(SharedClusters.embedded().cluster().uri("map=" + map + "&timeout=10000"),
                "Hazelcast");
    }
}

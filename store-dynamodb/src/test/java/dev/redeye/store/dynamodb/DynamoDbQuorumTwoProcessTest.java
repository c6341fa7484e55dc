package dev.redeye.store.dynamodb;

import dev.redeye.testsupport.QuorumFleetScenario;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Quorum opening over DynamoDB with two instances in two JVM processes ({@link QuorumFleetScenario}). */
class DynamoDbQuorumTwoProcessTest {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_quorum_processes");

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    @Test
    void anOutlierAloneLeavesTheFleetClosedAndASecondProcessMakesTheQuorum() throws Exception {
        QuorumFleetScenario.run(DynamoTestSupport.uri(TABLE, "createTable=true"), "DynamoDB");
    }
}

package dev.redeye.store.dynamodb;

import dev.redeye.testsupport.BatchingScenario;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Write batching over DynamoDB ({@link BatchingScenario}): a batch is one conditional write of the item. */
class DynamoDbBatchingTest {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_batching");

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    @Test
    void twoBatchingInstancesCountEveryOutcomeInFewWritesAndOpenAtOnce() {
        BatchingScenario.run(DynamoTestSupport.uri(TABLE, "createTable=true"));
    }
}

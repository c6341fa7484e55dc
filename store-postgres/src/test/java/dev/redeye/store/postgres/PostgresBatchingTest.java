package dev.redeye.store.postgres;

import dev.redeye.testsupport.BatchingScenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Write batching over PostgreSQL ({@link BatchingScenario}): a batch is one row-locked transaction. */
class PostgresBatchingTest {
    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_batching");

    @Test
    void twoBatchingInstancesCountEveryOutcomeInFewWritesAndOpenAtOnce() {
        BatchingScenario.run(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + PG.newTable()));
    }
}

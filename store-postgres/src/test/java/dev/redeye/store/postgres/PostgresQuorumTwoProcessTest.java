package dev.redeye.store.postgres;

import dev.redeye.testsupport.QuorumFleetScenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Quorum opening over PostgreSQL with two instances in two JVM processes ({@link QuorumFleetScenario}). */
class PostgresQuorumTwoProcessTest {
    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_quorum_processes");

    @Test
    void anOutlierAloneLeavesTheFleetClosedAndASecondProcessMakesTheQuorum() throws Exception {
        QuorumFleetScenario.run(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + PG.newTable()),
                "PostgreSQL");
    }
}

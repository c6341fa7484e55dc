package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store in the configurations production deployments have (issue 22), against a real server in a random
 * schema: pools whose connections default to {@code autoCommit=false}.
 */
class PostgresProductionTest {
    private static final Duration TTL = Duration.ofHours(1);
    private static final BreakerState RICH = new BreakerState(3, 1_234_567L, true, 2_345_678L, 2,
            0.1 + 0.2, 17L, 1, false, 9L);

    @RegisterExtension
    static final PgSchema SCHEMA = new PgSchema("redeye_prod");
    private static String schema;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void schemaName() {
        schema = SCHEMA.name();
    }

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        resources.clear();
    }

    private <T extends AutoCloseable> T keep(T resource) {
        resources.add(resource);
        return resource;
    }

    private static String newTable() {
        return "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    private static String qualified(String table) {
        return TableNames.quote(schema) + "." + TableNames.quote(table);
    }

    // ------------------------------------------------------------------ 1. autoCommit=false pools

    /**
     * A HikariCP pool with {@code autoCommit=false} rolls back, when a connection comes back, whatever its
     * borrower left uncommitted. Every write of the store must commit whatever the pool's default: seen from
     * another session, put, delete, releaseTrial and every part of the clean-up took effect.
     */
    @Test
    void everyWriteCommitsOverAPoolWhoseConnectionsDefaultToAutoCommitOff() throws Exception {
        String table = newTable();
        HikariDataSource pool = keep(PgTestSupport.autoCommitOffPool(4));
        PostgresStore s = keep(PostgresStore.builder(pool).schema(schema).table(table).purgeInterval(Duration.ZERO)
                .build());
        String byKey = "SELECT count(*) FROM " + qualified(table) + " WHERE key = ?";

        s.put("put", RICH, TTL);
        assertEquals(1, count(byKey, "put"), "put is committed");
        assertEquals(Optional.of(RICH), s.get("put"));

        s.delete("put");
        assertEquals(0, count(byKey, "put"), "delete is committed");

        String token = s.claimTrial("claimed", 1, TTL).orElseThrow();
        s.releaseTrial("claimed", token);
        assertEquals(0, count("SELECT count(*) FROM " + qualified(table + "_claims")), "releaseTrial is committed");
        assertTrue(s.claimTrial("claimed", 1, TTL).isPresent(), "the released permit is free again");

        s.put("dead", RICH, Duration.ofMillis(1));
        s.claimTrial("lapsed", 5, Duration.ofMillis(1)).orElseThrow();
        update("INSERT INTO " + qualified(table + "_events") + " (created_at, line) VALUES "
                + "(clock_timestamp() - interval '11 minutes', 'old')");
        Thread.sleep(20); // the 1 ms ttls pass on the database clock
        s.purgeExpired();
        assertEquals(0, count(byKey, "dead"), "the purge of expired states is committed");
        assertEquals(1, count("SELECT count(*) FROM " + qualified(table + "_claims")),
                "the purge of expired claims is committed (the live claim stays)");
        assertEquals(0, count("SELECT count(*) FROM " + qualified(table + "_events") + " WHERE line = 'old'"),
                "the pruning of old events is committed");
        assertFalse(pool.isClosed(), "the store never closes the user's pool");
    }
}

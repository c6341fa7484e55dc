package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;

/**
 * The store behind a real PgBouncer in transaction pooling mode ({@link PrivatePgBouncer}, two server
 * connections for every client): every call works, the bounds set per transaction hold, and the polled feed
 * ({@code feed=poll}) delivers every transition promptly, where LISTEN cannot (its session goes to another
 * client after each transaction). PgBouncer 1.18 (Debian 12) keeps no named prepared statements in this mode,
 * hence {@code prepareThreshold=0}.
 */
class PgBouncerTest {
    private static PrivatePgBouncer bouncer;
    private static String schema;
    private static String database;

    @BeforeAll
    static void startPgBouncer() throws Exception {
        Properties server = Driver.parseURL(PostgresStoreProvider.parse(PgTestSupport.url()).jdbcUrl, null);
        database = server.getProperty("PGDBNAME");
        String user = PostgresStoreProvider.parse(PgTestSupport.url()).user;
        bouncer = PrivatePgBouncer.start(server.getProperty("PGHOST"), Integer.parseInt(server.getProperty("PGPORT")),
                user == null ? "postgres" : user, 2);
        schema = PgTestSupport.createSchema("redeye_bouncer");
    }

    @AfterAll
    static void stopPgBouncer() throws Exception {
        if (bouncer != null) {
            bouncer.close();
        }
        if (schema != null) {
            PgTestSupport.dropSchema(schema);
        }
    }

    private static PostgresStore open(String table, String params) {
        return PostgresStore.open("postgresql://postgres@127.0.0.1:" + bouncer.port() + "/" + database + "?schema="
                + schema + "&table=" + table + "&timeoutsPerTransaction=true&prepareThreshold=0&poolSize=4"
                + (params.isEmpty() ? "" : "&" + params));
    }

    @Test
    void everyCallWorksAndThePolledFeedDeliversEveryTransitionPromptly() throws Exception {
        try (PostgresStore writer = open("polled", "feed=poll"); PostgresStore reader = open("polled", "feed=poll")) {
            Collector events = Collector.subscribe(reader);
            Policy one = Policy.builder().failureThreshold(1).build();
            for (int i = 0; i < 10; i++) {
                String op = "op-" + i;
                long v = writer.apply(op, AtomicOperation.failure(), one, 1_000 + i).state().version();
                long t0 = System.nanoTime();
                assertTrue(PgTestSupport.eventually(Duration.ofSeconds(1), () -> events.has(op, v)),
                        op + ": the transition was not delivered within 1 s through PgBouncer");
                System.out.println("through PgBouncer, " + op + " delivered after "
                        + (System.nanoTime() - t0) / 1_000_000 + " ms");
            }
            assertEquals(0, events.gaps.get());

            BreakerState s = BreakerState.builder().failures(2).version(7).build();
            writer.put("plain", s, Duration.ofMinutes(5));
            assertEquals(Optional.of(s), reader.get("plain"));
            String token = writer.claimTrial("plain", 1, Duration.ofMinutes(1)).orElseThrow();
            assertTrue(reader.claimTrial("plain", 1, Duration.ofMinutes(1)).isEmpty());
            writer.releaseTrial("plain", token);
            assertTrue(reader.claimTrial("plain", 1, Duration.ofMinutes(1)).isPresent());
            writer.apply("plain", AtomicOperation.force(BreakerStatus.CLOSED), one, 5);
            writer.delete("plain");
            assertEquals(Optional.empty(), reader.get("plain"));
            writer.purgeExpired();
        }
    }

    /** The server-side bounds reach the server through PgBouncer: they are set in every transaction. */
    @Test
    void aHeldRowLockFailsTheCallWithinItsBoundThroughPgBouncer() throws Exception {
        try (PostgresStore s = open("held", "")) {
            Policy p = Policy.builder().failureThreshold(100).build();
            s.apply("k", AtomicOperation.failure(), p, 1);
            try (Connection c = PgTestSupport.dataSource().getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + TableNames.quote(schema)
                        + ".held WHERE key = 'k' FOR UPDATE"); ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                }
                long t0 = System.nanoTime();
                StoreException e = assertThrows(StoreException.class, () -> s.apply("k", AtomicOperation.failure(), p, 2));
                long took = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(took < 3 * Timeouts.DEFAULT_LOCK_MILLIS, "took " + took + " ms");
                assertTrue(e.getMessage().contains("55P03") || e.getMessage().contains("57014"), e.getMessage());
                c.rollback();
            }
            assertEquals(2, s.apply("k", AtomicOperation.failure(), p, 3).state().failures());
        }
    }
}

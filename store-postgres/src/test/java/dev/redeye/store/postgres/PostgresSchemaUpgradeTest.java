package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stores starting over tables an earlier version made, against a real server in a schema of the class's own:
 * the previous release's layout (its claims table lacks {@code created_at} and {@code ttl_ms}, NOT NULL without a
 * default) and a state table lacking a column that has a default, as a later version's would look to this one.
 * With createSchema on the store adds what schema.sql declares (empty claims first: they live seconds), never
 * holding writers for longer than one short lock attempt; off, it fails with the statements to run.
 */
class PostgresSchemaUpgradeTest {
    private static final Duration TTL = Duration.ofHours(1);
    private static final String PREVIOUS_RELEASE = "previous-release-schema.sql";
    /** The tables of the release before sliding windows and modes: no sliding_window, no mode. */
    private static final String WINDOWLESS_RELEASE = "windowless-release-schema.sql";

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_upgrade");
    private static PostgresStore.Builder builder(String table) {
        return PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .purgeInterval(Duration.ZERO);
    }

    /** Creates the tables as the previous release did (its schema.sql), with plain SQL. */
    private static void previousRelease(String table) throws IOException, SQLException {
        release(PREVIOUS_RELEASE, table);
        assertEquals(0, count("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname IN "
                + "('created_at', 'ttl_ms') AND NOT attisdropped", PG.qualified(table + "_claims")),
                "the previous release's claims table has neither column");
    }

    /** Creates the tables from a release's schema.sql kept as a test resource, with plain SQL. */
    private static void release(String resource, String table) throws IOException, SQLException {
        String ddl;
        try (InputStream in = PostgresSchemaUpgradeTest.class.getResourceAsStream(resource)) {
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        PgTestSupport.exec(ddl.replace("${schema}", PG.name()).replace("${table}", table));
    }

    /**
     * The previous release's tables with the state table also lacking {@code samples} (a column with a default),
     * and a live claim on the key "claimed".
     */
    private static void previousReleaseLackingSamplesWithAClaim(String table) throws IOException, SQLException {
        previousRelease(table);
        PgTestSupport.exec("ALTER TABLE " + PG.qualified(table) + " DROP COLUMN samples");
        liveClaimOfThePreviousRelease(table, "claimed");
    }

    /** A key's row and a live claim on it, written as the previous release wrote them. */
    private static void liveClaimOfThePreviousRelease(String table, String key) throws SQLException {
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) "
                + "VALUES (sha256(convert_to(?, 'UTF8')), ?, 0)", key, key);
        update("INSERT INTO " + PG.qualified(table + "_claims") + " (key_hash, token, expires_at) VALUES "
                + "(sha256(convert_to(?, 'UTF8')), 'old-token', clock_timestamp() + interval '1 hour')", key);
    }

    /** A state row the previous release wrote (its state table is this version's). */
    private static void stateOfThePreviousRelease(String table, String key) throws SQLException {
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout, failures, last_failure_at, samples, "
                + "version, expires_at) VALUES (sha256(convert_to(?, 'UTF8')), ?, 1, 2, 1000, 7, 5, "
                + "clock_timestamp() + interval '1 hour')", key, key);
    }

    /** Each column of a table: its type, whether NOT NULL, and its default, as the catalog has them. */
    private static Map<String, String> columns(String qualifiedTable) throws SQLException {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = PgTestSupport.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
                     + "a.attnotnull, pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a LEFT JOIN pg_attrdef d "
                     + "ON d.adrelid = a.attrelid AND d.adnum = a.attnum WHERE a.attrelid = to_regclass(?) "
                     + "AND a.attnum > 0 AND NOT a.attisdropped")) {
            ps.setString(1, qualifiedTable);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getString(2) + (rs.getBoolean(3) ? " NOT NULL" : "")
                            + (rs.getString(4) == null ? "" : " DEFAULT " + rs.getString(4)));
                }
            }
        }
        return out;
    }

    /** The columns of the three tables equal those of tables this version's schema.sql creates afresh. */
    private static void assertLayoutIsCurrent(String table) throws SQLException {
        String reference = PG.newTable();
        PgTestSupport.exec(PostgresStore.schemaSql(PG.name(), reference));
        for (String suffix : List.of("", "_claims", "_events")) {
            Map<String, String> expected = new TreeMap<>();
            columns(PG.qualified(reference + suffix)).forEach((column, declared) -> expected.put(column,
                    declared.replace(reference, table))); // the events id's sequence is named after its table
            assertFalse(expected.isEmpty());
            assertEquals(expected, columns(PG.qualified(table + suffix)),
                    table + suffix + ": each column as schema.sql declares it (type, NOT NULL, DEFAULT)");
        }
    }

    private static long fileNode(String qualifiedTable) throws SQLException {
        return count("SELECT relfilenode FROM pg_class WHERE oid = to_regclass(?)", qualifiedTable);
    }

    // ------------------------------------------------------------------ createSchema on

    /**
     * The previous release's claims table gets created_at and ttl_ms (NOT NULL without a default, so its claims,
     * trial claims that live seconds, are dropped in the same transaction: the key's permit is free again, one
     * extra trial may run), its states read as they were, and no table is rewritten.
     */
    @Test
    void thePreviousReleasesClaimsTableGetsItsColumnsAndItsLiveClaimsAreDropped() throws Exception {
        String table = PG.newTable();
        previousRelease(table);
        liveClaimOfThePreviousRelease(table, "claimed");
        stateOfThePreviousRelease(table, "counted");
        long statesNode = fileNode(PG.qualified(table));

        PostgresStore s = PG.keep(builder(table).build());

        assertLayoutIsCurrent(table);
        assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")), "the live claim was dropped");
        assertTrue(s.claimTrial("claimed", 1, TTL).isPresent(), "the key's one permit is free again");
        assertEquals(Optional.of(new BreakerState(2, 1000, false, 0, 0, 0, 7, 0, false, 5)), s.get("counted"),
                "a state of the previous release reads as it was");
        assertEquals(statesNode, fileNode(PG.qualified(table)), "the state table was not rewritten");
        PG.keep(builder(table).build()); // the next start finds nothing to do
    }

    /**
     * The state table of the release before sliding windows gets sliding_window and mode (with createSchema off, the
     * start names them and the statement), catalog only: its rows (a state, a forced state, a placeholder with a
     * live claim) read as they were, with no window and the DEFAULT mode, the live claim still counts, and a window
     * recorded on the old state is stored in layout 2.
     */
    @Test
    void theReleaseBeforeSlidingWindowsGetsTheWindowAndModeColumnsAndKeepsItsRows() throws Exception {
        String table = PG.newTable();
        release(WINDOWLESS_RELEASE, table);
        assertEquals(0, count("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname IN "
                + "('sliding_window', 'mode') AND NOT attisdropped", PG.qualified(table)), "neither column yet");
        stateOfThePreviousRelease(table, "counted");
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout, open, opened_at, forced, version, "
                + "expires_at) VALUES (sha256(convert_to('held', 'UTF8')), 'held', 1, true, 500, true, 6, NULL)");
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) "
                + "VALUES (sha256(convert_to('claimed', 'UTF8')), 'claimed', 0)");
        update("INSERT INTO " + PG.qualified(table + "_claims") + " (key_hash, token, created_at, ttl_ms, expires_at) "
                + "SELECT sha256(convert_to('claimed', 'UTF8')), 'live', n, 3600000, n + interval '1 hour' "
                + "FROM (SELECT clock_timestamp() AS n) x");
        long node = fileNode(PG.qualified(table));

        StoreException off = assertThrows(StoreException.class,
                () -> PG.keep(builder(table).createSchema(false).build()));
        assertTrue(off.getMessage().contains(PG.qualified(table) + " lacks column(s) sliding_window, mode, contributors"),
                off.getMessage());
        assertTrue(off.getMessage().contains("ALTER TABLE " + PG.qualified(table) + " ADD COLUMN IF NOT EXISTS "
                + "sliding_window text, ADD COLUMN IF NOT EXISTS mode smallint NOT NULL DEFAULT 0, ADD COLUMN IF NOT "
                + "EXISTS contributors text;"), off.getMessage());

        PostgresStore s = PG.keep(builder(table).build());

        assertLayoutIsCurrent(table);
        assertEquals(node, fileNode(PG.qualified(table)), "adding the columns rewrote the state table");
        assertEquals(Optional.of(new BreakerState(2, 1000, false, 0, 0, 0, 7, 0, false, 5)), s.get("counted"));
        assertEquals(Optional.of(new BreakerState(0, 0, true, 500, 0, 0, 0, 0, true, 6)), s.get("held"));
        assertEquals(Optional.empty(), s.get("claimed"), "the placeholder still reads as absent");
        assertEquals(Optional.empty(), s.claimTrial("claimed", 1, TTL), "its live claim still holds the permit");
        assertEquals(3, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE sliding_window IS NULL AND "
                + "mode = 0"), "every row kept, with the columns' defaults");

        Policy window = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 5).build();
        BreakerState recorded = s.apply("counted", AtomicOperation.outcome(true, true), window, 2_000).state();
        assertEquals("c5.1.2", recorded.window().encode());
        assertEquals(Optional.of(recorded), s.get("counted"));
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'counted' AND layout = 2 "
                + "AND sliding_window = 'c5.1.2'"), "a state with a window is layout 2, which that release refuses");
    }

    /**
     * A state table lacking a column with a constant default (as a later version's state column would) gets it,
     * metadata only: its rows read the default, and the table is not rewritten.
     */
    @Test
    void aStateTableLackingAColumnWithADefaultGetsItWithoutARewrite() throws Exception {
        String table = PG.newTable();
        BreakerState state = new BreakerState(3, 1_234_567L, true, 2_345_678L, 2, 0.5, 17L, 1, false, 9L);
        try (PostgresStore first = builder(table).build()) {
            first.put("k", state, TTL);
        }
        PgTestSupport.exec("ALTER TABLE " + PG.qualified(table) + " DROP COLUMN samples");
        long node = fileNode(PG.qualified(table));

        PostgresStore s = PG.keep(builder(table).build());

        assertLayoutIsCurrent(table);
        assertEquals(node, fileNode(PG.qualified(table)), "adding a column with a constant default rewrote the table");
        assertEquals(Optional.of(new BreakerState(3, 1_234_567L, true, 2_345_678L, 2, 0.5, 0L, 1, false, 9L)),
                s.get("k"), "the row reads the column's default");
    }

    /**
     * A NOT NULL column without a default cannot be added to a table with rows; for any table but the claims it
     * fails the start with a clear message and the DDL, changing nothing. On an empty table it is added.
     */
    @Test
    void aNotNullColumnWithoutADefaultFailsTheStartOnATableWithRowsOtherThanTheClaims() throws Exception {
        String table = PG.newTable();
        try (PostgresStore first = builder(table).build()) {
            first.put("k", BreakerState.INITIAL.withVersion(3), TTL);
        }
        PgTestSupport.exec("ALTER TABLE " + PG.qualified(table) + " DROP COLUMN layout");

        StoreException e = assertThrows(StoreException.class, () -> PG.keep(builder(table).build()));
        assertTrue(e.getMessage().contains(PG.qualified(table) + " lacks column(s) layout"), e.getMessage());
        assertTrue(e.getMessage().contains("NOT NULL without a DEFAULT"), e.getMessage());
        assertTrue(e.getMessage().contains("ALTER TABLE " + PG.qualified(table) + " ADD COLUMN IF NOT EXISTS layout "
                + "smallint NOT NULL"), e.getMessage());
        assertEquals(0, count("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname = "
                + "'layout' AND NOT attisdropped", PG.qualified(table)), "nothing was added");
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table)), "nothing was deleted");

        update("DELETE FROM " + PG.qualified(table));
        PG.keep(builder(table).build());
        assertLayoutIsCurrent(table);
    }

    // ------------------------------------------------------------------ createSchema off

    /**
     * With createSchema off the start fails naming the missing columns with the statements that add them, and
     * changes nothing; running those statements (as a migration tool would) makes the same start pass.
     */
    @Test
    void withoutCreateSchemaTheErrorNamesTheColumnsAndTheStatementsToRun() throws Exception {
        String table = PG.newTable();
        previousReleaseLackingSamplesWithAClaim(table);

        StoreException e = assertThrows(StoreException.class,
                () -> PG.keep(builder(table).createSchema(false).build()));
        String m = e.getMessage();
        // that release's state table also lacks the window and mode columns of the releases after it
        assertTrue(m.contains(PG.qualified(table) + " lacks column(s) samples, sliding_window, mode, contributors"), m);
        assertTrue(m.contains(PG.qualified(table + "_claims") + " lacks column(s) created_at, ttl_ms"), m);
        assertTrue(m.contains("ALTER TABLE " + PG.qualified(table)
                + " ADD COLUMN IF NOT EXISTS samples bigint NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS sliding_window "
                + "text, ADD COLUMN IF NOT EXISTS mode smallint NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS "
                + "contributors text;"), m);
        assertTrue(m.contains("DELETE FROM " + PG.qualified(table + "_claims") + ";"), m);
        assertTrue(m.contains("ALTER TABLE " + PG.qualified(table + "_claims") + " ADD COLUMN IF NOT EXISTS created_at "
                + "timestamptz NOT NULL, ADD COLUMN IF NOT EXISTS ttl_ms bigint NOT NULL;"), m);
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")), "nothing was deleted");
        StoreException uri = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.open(
                PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table + "&createSchema=false"))));
        assertTrue(uri.getMessage().contains("ALTER TABLE " + PG.qualified(table + "_claims")), uri.getMessage());

        int begin = m.indexOf("BEGIN;");
        int end = m.indexOf("COMMIT;", begin);
        assertTrue(begin >= 0 && end > begin, "the statements form one transaction: " + m);
        PgTestSupport.exec(m.substring(begin, end + "COMMIT;".length()));
        PostgresStore s = PG.keep(builder(table).createSchema(false).build());
        assertLayoutIsCurrent(table);
        assertTrue(s.claimTrial("claimed", 1, TTL).isPresent());
    }

    // ------------------------------------------------------------------ concurrency and locks

    /**
     * Stores starting at once over an old layout all succeed: here they are held at the table lock (another
     * session reads the claims table) until all of them are in the middle of their set-up, then let go.
     */
    @Test
    void storesStartingAtOnceOverAnOldLayoutAllSucceed() throws Exception {
        String table = PG.newTable();
        previousReleaseLackingSamplesWithAClaim(table);
        int n = 4;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try (Connection reader = PgTestSupport.dataSource().getConnection()) {
            reader.setAutoCommit(false);
            try (Statement st = reader.createStatement()) {
                st.execute("SELECT count(*) FROM " + PG.qualified(table + "_claims"));
            }
            CyclicBarrier start = new CyclicBarrier(n);
            List<Future<PostgresStore>> builds = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                builds.add(pool.submit(() -> {
                    start.await();
                    return builder(table).build();
                }));
            }
            assertTrue(PgTestSupport.eventually(() -> waitingOnLocks(table) >= n - 1),
                    "the stores did not all reach their set-up: " + waitingOnLocksSafe(table));
            reader.rollback();
            for (Future<PostgresStore> build : builds) {
                PG.keep(build.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertLayoutIsCurrent(table);
        assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")));
    }

    /**
     * The set-up waits for its table lock in short attempts: while another session's transaction keeps the claims
     * table busy, writers of the previous release (still running during a rolling upgrade) go on, each held at
     * most one attempt, instead of queueing behind the ALTER TABLE for as long as that transaction lasts.
     */
    @Test
    void addingColumnsNeverHoldsWritersForLong() throws Exception {
        String table = PG.newTable();
        previousRelease(table);
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) "
                + "VALUES (sha256(convert_to('w', 'UTF8')), 'w', 0)");
        CompletableFuture<PostgresStore> build;
        try (Connection reader = PgTestSupport.dataSource().getConnection();
             Connection writer = PgTestSupport.dataSource().getConnection()) {
            reader.setAutoCommit(false);
            try (Statement st = reader.createStatement()) {
                st.execute("SELECT count(*) FROM " + PG.qualified(table + "_claims"));
            }
            build = CompletableFuture.supplyAsync(() -> builder(table).build());
            assertTrue(PgTestSupport.eventually(() -> exclusiveLockAsked(table)),
                    "the set-up asks for the table lock");
            long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            long worst = 0;
            int written = 0;
            try (PreparedStatement insert = writer.prepareStatement("INSERT INTO " + PG.qualified(table + "_claims")
                    + " (key_hash, token, expires_at) VALUES (sha256(convert_to('w', 'UTF8')), ?, "
                    + "clock_timestamp() + interval '1 second')");
                 Statement st = writer.createStatement()) {
                st.execute("SET statement_timeout = 10000");
                while (System.nanoTime() < until) {
                    insert.setString(1, "old-" + written);
                    long t0 = System.nanoTime();
                    insert.execute();
                    worst = Math.max(worst, (System.nanoTime() - t0) / 1_000_000);
                    written++;
                    Thread.sleep(20); // pace the writer: the point is how long each insert waits
                }
            }
            System.out.println("the previous release's writer: " + written + " inserts while the set-up waited, the "
                    + "slowest " + worst + " ms");
            assertTrue(worst < 1_500, "a writer waited " + worst + " ms behind the set-up's table lock");
            assertFalse(build.isDone(), "the set-up still waits for the reader's transaction");
            reader.rollback();
        }
        PG.keep(build.get(60, TimeUnit.SECONDS));
        assertLayoutIsCurrent(table);
        assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")),
                "the previous release's claims were dropped with the upgrade");
    }

    /** Backends of the test server waiting for a lock in a statement that names the table. */
    private static long waitingOnLocks(String table) {
        try {
            return count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ? "
                    + "AND pid <> pg_backend_pid()", "%" + table + "%");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String waitingOnLocksSafe(String table) {
        try {
            return waitingOnLocks(table) + " waiting";
        } catch (RuntimeException e) {
            return e.toString();
        }
    }

    /** Whether a session waits for an exclusive lock of the claims table (as an ALTER TABLE must). */
    private static boolean exclusiveLockAsked(String table) {
        try {
            return count("SELECT count(*) FROM pg_locks WHERE relation = to_regclass(?) AND mode = "
                    + "'AccessExclusiveLock' AND NOT granted", PG.qualified(table + "_claims")) > 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

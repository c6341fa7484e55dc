package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The stored form of a quorum's contributions ({@link BreakerState#contributors()}), against a real server: a state
 * with contributions is written in layout 3 with its {@code contributors} column, on every path (atomic write,
 * put, get, both feed kinds); a state without them keeps layouts 1 and 2 and a NULL column, exactly as the release
 * before quorums wrote it; a {@code contributors} value that is not the store's, or that does not match the
 * layout, is a malformed row; the column is added to the tables of the release before quorums.
 */
class PostgresQuorumLayoutTest {
    private static final long T0 = 1_764_900_000_000L;
    private static final Duration TTL = Duration.ofHours(1);
    /** The tables of the release before quorum opening: no contributors column. */
    private static final String QUORUMLESS_RELEASE = "quorumless-release-schema.sql";

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_quorum");

    private static PostgresStore open(String table, String params) {
        return PG.keep(PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table
                + (params.isEmpty() ? "" : "&" + params))));
    }

    private static Policy quorum() {
        return Policy.builder().failureThreshold(3).quorum(2).jitter(0.0).build();
    }

    /** The row's layout and contributors column, as {@code "layout|contributors"} ("null" for NULL). */
    private static String row(String table, String key) throws SQLException {
        try (Connection c = PgTestSupport.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT layout, contributors FROM " + PG.qualified(table)
                     + " WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no row for " + key);
                return rs.getInt(1) + "|" + rs.getString(2);
            }
        }
    }

    @Test
    void theStoreDeclaresQuorumState() {
        PostgresStore store = open(PG.newTable(), "");
        assertEquals(Optional.of(store), store.capability(QuorumState.class));
    }

    /**
     * Outcomes attributed to instances are written in layout 3, their contributions in the column as
     * {@link Contribution#encodeAll} gives them, and read back equal by get, by a second client, and in the events
     * of a LISTEN and a polled feed; the state a success clears has no contributions and goes back to layout 1.
     */
    @Test
    void contributionsAreWrittenInLayout3OnTheAtomicPathAndTravelInTheFeed() throws Exception {
        String table = PG.newTable();
        PostgresStore a = open(table, "");
        PostgresStore polled = open(table, "feed=poll&pollIntervalMillis=50");
        Collector listening = Collector.subscribe(a);
        Collector polling = Collector.subscribe(polled);
        Policy p = quorum();

        a.apply("k", AtomicOperation.outcome(false, false, "A"), p, T0);
        StateChange second = a.apply("k", AtomicOperation.outcome(false, false, "A"), p, T0 + 1);
        assertEquals(List.of(new Contribution("A", 2, 2, T0 + 1)), second.state().contributors());
        assertEquals("3|A,2,2,1764900000001", row(table, "k"));
        assertEquals(Optional.of(second.state()), polled.get("k"), "a second client reads the contributions");

        StateChange third = polled.apply("k", AtomicOperation.outcome(false, false, "B"), p, T0 + 2);
        assertEquals(TransitionKind.OPENED, third.transition(), "A's and B's failures make the quorum of 2");
        assertEquals("3|B,1,1,1764900000002;A,2,2,1764900000001", row(table, "k"));
        assertEquals(Optional.of(third.state()), a.get("k"));
        for (Collector feed : List.of(listening, polling)) {
            assertTrue(PgTestSupport.eventually(() -> !feed.of("k").isEmpty()), "the opening reaches the feed");
            TransitionEvent e = feed.of("k").get(0);
            assertEquals(third.state(), e.state(), "the event carries the state, contributions included");
        }

        // A state written without contributions (a put of the quorum-less form) goes back to layout 1.
        a.put("k", third.state().toBuilder().contributors(List.of()).build(), TTL);
        assertEquals("1|null", row(table, "k"));
    }

    /**
     * put and get keep contributions beside a window and a mode (layout 3 whatever else the state has); a state
     * without them keeps layout 1 or 2 and a NULL column, as the release before quorums wrote it.
     */
    @Test
    void putAndGetKeepContributionsAndLeaveTheEarlierLayoutsAsTheyWere() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "");
        List<Contribution> two = List.of(new Contribution("B", 1, 1, T0 + 2), new Contribution("A", 2, 2, T0 + 1));
        BreakerState windowed = StoredStates.RICH.toBuilder()
                .window(SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 5).record(false, false, T0)).build();
        record Case(String key, BreakerState state, String row) {
        }
        List<Case> cases = List.of(
                new Case("plain", StoredStates.RICH, "1|null"),
                new Case("mode", StoredStates.RICH.toBuilder().mode(BreakerMode.NORMAL).build(), "2|null"),
                new Case("window", windowed, "2|null"),
                new Case("plain+", StoredStates.RICH.toBuilder().contributors(two).build(),
                        "3|B,1,1,1764900000002;A,2,2,1764900000001"),
                new Case("window+", windowed.toBuilder().mode(BreakerMode.NORMAL).contributors(two).build(),
                        "3|B,1,1,1764900000002;A,2,2,1764900000001"));
        for (Case c : cases) {
            store.put(c.key, c.state, TTL);
            assertEquals(Optional.of(c.state), store.get(c.key), c.key);
            assertEquals(c.row, row(table, c.key), c.key);
        }
    }

    /**
     * A {@code contributors} value the store did not write is a malformed row, like an undecodable window: every
     * read and atomic operation fails with {@link StoreException} and leaves it as it was. That is an undecodable
     * or invalid value, an empty one (none is NULL), contributions in layout 1 or 2 (the releases before quorums
     * read those layouts and would drop them), a layout 3 without contributions, and a placeholder carrying them.
     */
    @Test
    void aContributorsValueTheStoreDidNotWriteIsMalformed() throws Exception {
        String table = PG.newTable();
        PostgresStore store = open(table, "");
        Policy p = quorum();
        List<String> corruptions = List.of(
                "layout = 3, contributors = 'garbage'",
                "layout = 3, contributors = 'A,3,2,5'",
                "layout = 3, contributors = 'A,1,1,5;A,1,1,6'",
                "layout = 3, contributors = 'A B,1,1,5'",
                "layout = 3, contributors = ''",
                "layout = 3",
                "contributors = 'A,1,1,5'",
                "layout = 2, mode = 1, contributors = 'A,1,1,5'");
        for (String corruption : corruptions) {
            String key = "corrupt " + corruption;
            store.put(key, StoredStates.RICH, TTL);
            update("UPDATE " + PG.qualified(table) + " SET " + corruption + " WHERE key = ?", key);
            StoreException e = assertThrows(StoreException.class, () -> store.get(key), corruption);
            assertTrue(e.getMessage().contains("malformed"), e.getMessage());
            assertThrows(StoreException.class,
                    () -> store.apply(key, AtomicOperation.outcome(false, false, "A"), p, T0), corruption);
            assertThrows(StoreException.class, () -> store.claimTrial(key, 1, TTL), corruption);
            assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = ? AND "
                    + corruption.replace(", ", " AND "), key), "left as it was: " + corruption);
        }
        String placeholder = "placeholder";
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) VALUES "
                + "(sha256(convert_to(?, 'UTF8')), ?, 0)", placeholder, placeholder);
        assertEquals(Optional.empty(), store.get(placeholder), "the store's own placeholder reads as absent");
        update("UPDATE " + PG.qualified(table) + " SET contributors = 'A,1,1,5' WHERE key = ?", placeholder);
        StoreException e = assertThrows(StoreException.class, () -> store.get(placeholder));
        assertTrue(e.getMessage().contains("layout 0"), e.getMessage());
    }

    /**
     * The tables of the release before quorums gain {@code contributors} (with createSchema off, the start names it
     * and the statement), catalog only: their rows of layouts 0, 1 and 2 read as they were, with no contributions,
     * and a quorum's outcome on one of them stores it in layout 3.
     */
    @Test
    void theReleaseBeforeQuorumsGetsTheContributorsColumnAndKeepsItsRows() throws Exception {
        String table = PG.newTable();
        String ddl;
        try (InputStream in = PostgresQuorumLayoutTest.class.getResourceAsStream(QUORUMLESS_RELEASE)) {
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        PgTestSupport.exec(ddl.replace("${schema}", PG.name()).replace("${table}", table));
        assertEquals(0, count("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname = "
                + "'contributors' AND NOT attisdropped", PG.qualified(table)), "no contributors column yet");
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout, failures, last_failure_at, samples, "
                + "version, expires_at) VALUES (sha256(convert_to('counted', 'UTF8')), 'counted', 1, 2, 1000, 7, 5, "
                + "clock_timestamp() + interval '1 hour')");
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout, mode, version, expires_at) VALUES "
                + "(sha256(convert_to('moded', 'UTF8')), 'moded', 2, 1, 6, NULL)");
        update("INSERT INTO " + PG.qualified(table) + " (key_hash, key, layout) "
                + "VALUES (sha256(convert_to('placeholder', 'UTF8')), 'placeholder', 0)");
        long node = count("SELECT relfilenode FROM pg_class WHERE oid = to_regclass(?)", PG.qualified(table));

        StoreException off = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.builder(
                PgTestSupport.dataSource()).schema(PG.name()).table(table).createSchema(false).build()));
        assertTrue(off.getMessage().contains(PG.qualified(table) + " lacks column(s) contributors;"),
                off.getMessage());
        assertTrue(off.getMessage().contains("ALTER TABLE " + PG.qualified(table)
                + " ADD COLUMN IF NOT EXISTS contributors text;"), off.getMessage());

        PostgresStore s = open(table, "");
        assertEquals(node, count("SELECT relfilenode FROM pg_class WHERE oid = to_regclass(?)", PG.qualified(table)),
                "adding the column rewrote the state table");
        assertEquals(1, count("SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname = "
                + "'contributors' AND NOT attnotnull AND format_type(atttypid, atttypmod) = 'text'",
                PG.qualified(table)), "contributors is a nullable text column");
        assertEquals(Optional.of(new BreakerState(2, 1000, false, 0, 0, 0, 7, 0, false, 5)), s.get("counted"));
        assertEquals(Optional.of(BreakerState.INITIAL.toBuilder().mode(BreakerMode.fromCode(1)).version(6).build()),
                s.get("moded"));
        assertEquals(Optional.empty(), s.get("placeholder"));
        assertEquals(3, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE contributors IS NULL"),
                "every row kept, without contributions");

        BreakerState recorded = s.apply("counted", AtomicOperation.outcome(false, false, "A"), quorum(), T0 + 1)
                .state();
        assertEquals(List.of(new Contribution("A", 1, 1, T0 + 1)), recorded.contributors());
        assertEquals(Optional.of(recorded), s.get("counted"));
        assertEquals("3|A,1,1,1764900000001", row(table, "counted"), "a state with contributions is layout 3");
    }
}

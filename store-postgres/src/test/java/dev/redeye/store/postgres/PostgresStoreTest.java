package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.Collector.subscribe;
import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.eventually;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static dev.redeye.store.postgres.StoredStates.RICH;
import static dev.redeye.store.postgres.StoredStates.TTL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** PostgreSQL-specific behaviour of {@link PostgresStore}, against a real server, in a random schema. */
class PostgresStoreTest {
    @RegisterExtension
    static final PgSchema SCHEMA = new PgSchema("redeye_pgtest");
    private static String schema;
    private final List<Store> stores = new ArrayList<>();
    private String table;

    @BeforeEach
    void schemaName() {
        schema = SCHEMA.name();
    }

    @AfterEach
    void closeStores() {
        stores.forEach(Store::close);
        stores.clear();
    }

    /** A new store through the provider, on a table of its own per test unless {@code table} is reused. */
    private PostgresStore open() {
        if (table == null) {
            table = "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        }
        PostgresStore s = PostgresStore.open(PgTestSupport.urlWith("schema=" + schema + "&table=" + table));
        stores.add(s);
        return s;
    }

    private String qualified(String suffix) {
        return TableNames.quote(schema) + "." + TableNames.quote(table + suffix);
    }

    private static Policy threshold(int n) {
        return Policy.builder().failureThreshold(n).jitter(0.0).build();
    }

    // ------------------------------------------------------------------ hostile names

    private static List<String> hostileNames() {
        return List.of("'; DROP TABLE sentinel; --", "Robert'); DELETE FROM sentinel; --", "a\"b\"c", "semi;colon;",
                "-- comment", "/* block */", "$1 ? :name ${table}", "back\\slash \\' \\\"", "new\nline\r\n",
                "caf\u00e9 \u4e2d\u6587 \u05e2\u05d1\u05e8\u05d9\u05ea", "emoji \uD83D\uDE00 \uD834\uDD1E",
                "%00 %27 %s", "x".repeat(10 * 1024), "\u00e9".repeat(6000), " leading and trailing ");
    }

    @Test
    void hostileNamesRoundTripVerbatimAndInjectNothing() throws Exception {
        PostgresStore s = open();
        PgTestSupport.exec("CREATE TABLE " + TableNames.quote(schema) + ".sentinel (id int)");
        PgTestSupport.exec("INSERT INTO " + TableNames.quote(schema) + ".sentinel VALUES (1)");
        try {
            List<String> names = hostileNames();
            for (String name : names) {
                s.put(name, RICH, TTL);
                assertEquals(Optional.of(RICH), s.get(name), "round trip of a hostile name");
                StateChange c = s.apply(name, AtomicOperation.failure(), threshold(100), 5);
                assertEquals(RICH.failures() + 1, c.state().failures());
                Optional<String> token = s.claimTrial(name, 1, Duration.ofSeconds(30));
                assertTrue(token.isPresent());
                s.releaseTrial(name, token.get());
            }
            assertEquals(names.size(), new HashSet<>(names).size());
            assertEquals(names.size(), count("SELECT count(*) FROM " + qualified("")), "one row per name, no more");
            Set<String> stored = new HashSet<>();
            try (Connection c = PgTestSupport.dataSource().getConnection(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT key FROM " + qualified(""))) {
                while (rs.next()) {
                    stored.add(rs.getString(1));
                }
            }
            assertEquals(new HashSet<>(names), stored, "the key column holds every name verbatim");
            assertEquals(1, count("SELECT count(*) FROM " + TableNames.quote(schema) + ".sentinel"),
                    "no SQL was injected");
            assertEquals(0, count("SELECT count(*) FROM " + qualified("_claims")));
            for (String name : names) {
                s.delete(name);
                assertEquals(Optional.empty(), s.get(name));
            }
            assertEquals(0, count("SELECT count(*) FROM " + qualified("")));
        } finally {
            PgTestSupport.exec("DROP TABLE " + TableNames.quote(schema) + ".sentinel");
        }
    }

    @Test
    void hostileNamesArriveExactlyInEvents() throws Exception {
        PostgresStore writer = open();
        PostgresStore reader = open();
        Collector c = subscribe(reader);
        Policy p = threshold(1);
        for (String name : hostileNames()) {
            long v = writer.apply(name, AtomicOperation.force(BreakerStatus.OPEN), p, 10).state().version();
            assertTrue(eventually(() -> c.has(name, v)), "the event of a hostile name (length "
                    + name.length() + ") arrived with the name exact");
        }
        assertTrue(count("SELECT count(*) FROM " + qualified("_events")) >= 2,
                "names too long for a NOTIFY payload travelled by reference");
    }

    // ------------------------------------------------------------------ names

    @ParameterizedTest
    @ValueSource(strings = {"", "bad name", "x;drop", "a\"b", "1abc", "t-1", "caf\u00e9", "a.b", "x'--",
            "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefg"})
    void invalidTableNamesAreRefused(String bad) {
        PgSimpleRef ref = new PgSimpleRef();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PostgresStore.builder(ref.ds).table(bad));
        assertTrue(e.getMessage().contains("table name"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PostgresStore.schemaSql("public", bad));
        assertThrows(IllegalArgumentException.class, () -> new PostgresStoreProvider()
                .open(PgTestSupport.urlWith("table=" + java.net.URLEncoder.encode(bad,
                        java.nio.charset.StandardCharsets.UTF_8))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "public; DROP SCHEMA x", "s\"", "9s", "a b",
            "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd"})
    void invalidSchemaNamesAreRefused(String bad) {
        PgSimpleRef ref = new PgSimpleRef();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PostgresStore.builder(ref.ds).schema(bad));
        assertTrue(e.getMessage().contains("schema name"), e.getMessage());
        assertThrows(NullPointerException.class, () -> PostgresStore.builder(ref.ds).schema(null));
    }

    @Test
    void longestNamesAreAcceptedAndGetAShortChannel() {
        String s63 = "s".repeat(63);
        String t56 = "t".repeat(56);
        String ddl = PostgresStore.schemaSql(s63, t56);
        assertTrue(ddl.contains("\"" + t56 + "_claims\""));
        assertFalse(ddl.contains("${schema}") || ddl.contains("${table}"));
        TableNames n = new TableNames(s63, t56);
        assertTrue(n.channel.length() <= 63, n.channel);
        assertNotEquals(new TableNames(s63, "u".repeat(56)).channel, n.channel);
    }

    /** Holds a DataSource that is never connected (for argument validation). */
    private static final class PgSimpleRef {
        final org.postgresql.ds.PGSimpleDataSource ds = PgTestSupport.dataSource();
    }

    // ------------------------------------------------------------------ malformed rows

    @ParameterizedTest
    @ValueSource(strings = {"layout = 99", "failures = -1", "error_rate = 7", "error_rate = 'NaN'",
            "open = false, forced = true", "samples = -5", "version = -2"})
    void malformedRowsAreStoreExceptions(String corruption) throws Exception {
        PostgresStore s = open();
        String k = "corrupt " + corruption;
        s.put(k, RICH, TTL);
        update("UPDATE " + qualified("") + " SET " + corruption + " WHERE key = ?", k);
        StoreException e = assertThrows(StoreException.class, () -> s.get(k));
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
        assertThrows(StoreException.class, () -> s.apply(k, AtomicOperation.failure(), threshold(5), 1));
        assertThrows(StoreException.class, () -> s.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), threshold(5), 1));
        assertThrows(StoreException.class, () -> s.claimTrial(k, 1, Duration.ofSeconds(5)));
        assertEquals(1, count("SELECT count(*) FROM " + qualified("") + " WHERE key = ? AND " + corruption
                .replace(",", " AND"), k), "a malformed row is left as it was, never silently reset");
    }

    // ------------------------------------------------------------------ transactions and NOTIFY

    @Test
    void rolledBackTransitionPublishesNothing() throws Exception {
        PostgresStore s = open();
        PostgresStore other = open();
        Collector c = subscribe(other);
        // Fails at COMMIT, after the store's pg_notify ran in the same transaction.
        PgTestSupport.exec("CREATE FUNCTION " + TableNames.quote(schema) + ".refuse_doomed() RETURNS trigger "
                + "LANGUAGE plpgsql AS $$ BEGIN IF NEW.key LIKE 'doomed%' AND NEW.open THEN "
                + "RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$");
        PgTestSupport.exec("CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT OR UPDATE ON " + qualified("")
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "
                + TableNames.quote(schema) + ".refuse_doomed()");
        try {
            StoreException e = assertThrows(StoreException.class,
                    () -> s.apply("doomed", AtomicOperation.failure(), threshold(1), 100));
            assertTrue(e.getMessage().contains("refused at commit"), e.getMessage());
            assertThrows(StoreException.class, () -> s.apply("doomed-too", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 100));
            assertEquals(Optional.empty(), s.get("doomed"), "the rolled-back transition left no state");
            // Notifications arrive in commit order: once a later marker arrives, the doomed ones never will.
            long v = s.apply("marker", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 100).state().version();
            assertTrue(eventually(() -> c.has("marker", v)), "the marker event arrived");
            assertEquals(List.of(), c.of("doomed"), "a rolled-back transition was published");
            assertEquals(List.of(), c.of("doomed-too"), "a rolled-back transition was published");
        } finally {
            PgTestSupport.exec("DROP TRIGGER refuse_doomed ON " + qualified(""));
            PgTestSupport.exec("DROP FUNCTION " + TableNames.quote(schema) + ".refuse_doomed()");
        }
    }

    @Test
    void aCallInsideTheUsersRolledBackTransactionStillCounts() throws Exception {
        Jdbi userJdbi = Jdbi.create(PgTestSupport.dataSource());
        PostgresStore s = PostgresStore.builder(userJdbi).schema(schema).table("usertx").build();
        stores.add(s);
        Collector c = subscribe(s);
        assertThrows(IllegalStateException.class, () -> userJdbi.useTransaction(h -> {
            h.execute("SELECT 1");
            s.apply("in-user-tx", AtomicOperation.failure(), threshold(1), 5);   // e.g. the breaker recording the failed call
            throw new IllegalStateException("the business transaction fails and rolls back");
        }));
        BreakerState st = s.get("in-user-tx").orElseThrow(() -> new AssertionError(
                "the failure vanished with the user's rolled-back transaction"));
        assertTrue(st.open());
        assertTrue(eventually(() -> c.has("in-user-tx", st.version())), "the transition was published");
        userJdbi.useHandle(h -> assertEquals(Optional.of(st), s.get("in-user-tx"), "inside a user's handle too"));
    }

    @Test
    void listenerSurvivesTerminateBackend() throws Exception {
        PostgresStore s = open();
        PostgresStore writer = open();
        Collector c = subscribe(s);
        long v1 = writer.apply("before", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
        assertTrue(eventually(() -> c.has("before", v1)));
        int pid = s.feedBackendPid();
        assertTrue(pid > 0);
        assertEquals(1, count("SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND query LIKE 'LISTEN%'", pid),
                "the feed pid is a LISTEN connection");
        assertTrue(count("SELECT count(*) FROM (SELECT pg_terminate_backend(?)) t", pid) == 1);
        assertTrue(eventually(() -> c.gaps.get() > 0), "onGap after the backend was terminated");
        assertTrue(eventually(() -> s.feedBackendPid() > 0 && s.feedBackendPid() != pid), "a new LISTEN connection");
        long v2 = writer.apply("after", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 2).state().version();
        assertTrue(eventually(() -> c.has("after", v2)), "events resume after the reconnect");
        assertTrue(s.feedThreadAlive());
    }

    /**
     * The feed backs off while the server refuses reconnects, says so, and resumes; also when a subscriber sets
     * the feed thread's interrupt flag on every callback (issue 12: an interrupt pending on the feed thread
     * used to end its backoff wait, and the thread with it, silently).
     */
    @Test
    void listenerBacksOffWhileTheServerRefusesThenResumesAlsoWhenASubscriberInterruptsIt() throws Exception {
        try (LoginRole role = new LoginRole("redeye_gap", schema)) {
            try {
                PostgresStore s = PostgresStore.builder(role.dataSource()).schema(schema).table("gaps").build();
                stores.add(s);
                PostgresStore writer = PostgresStore.builder(PgTestSupport.dataSource()).schema(schema)
                        .table("gaps").build();
                stores.add(writer);
                AtomicInteger interrupted = new AtomicInteger();
                s.subscribe(e -> {
                    interrupted.incrementAndGet();
                    Thread.currentThread().interrupt(); // a subscriber that cancels "its" work by interrupting
                }, () -> Thread.currentThread().interrupt());
                Collector c = subscribe(s);
                long v1 = writer.apply("before", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
                assertTrue(eventually(() -> c.has("before", v1)));
                int pid = s.feedBackendPid();

                // A real refusal: the role may not connect while its connection limit is 0.
                role.refuseConnections();
                assertEquals(1, count("SELECT count(*) FROM (SELECT pg_terminate_backend(?)) t", pid));
                assertTrue(eventually(() -> c.gaps.get() >= 1), "onGap as soon as the connection is lost");
                assertEquals(-1, s.feedBackendPid(), "no connection while the server refuses");
                long v2 = writer.apply("missed", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 2).state().version();
                Thread.sleep(400); // the thread is in its backoff, with the interrupt flag set by onGap

                role.allowConnections();
                assertTrue(eventually(() -> s.feedBackendPid() > 0), "reconnected after backing off");
                assertTrue(eventually(() -> c.gaps.get() >= 2), "a second onGap once listening again");
                assertFalse(c.has("missed", v2), "an event committed while disconnected is lost (hence onGap)");
                long v3 = writer.apply("after", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 3).state().version();
                assertTrue(eventually(() -> c.has("after", v3)), "events resume");
                assertTrue(s.feedThreadAlive());
                assertTrue(interrupted.get() >= 2, "the interrupting subscriber got the events too");
            } finally {
                stores.forEach(Store::close);
                stores.clear();
            }
        }
    }

    @Test
    void throwingSubscriberIsLoggedAndDoesNotStopTheListener() throws Exception {
        PostgresStore s = open();
        AtomicInteger thrown = new AtomicInteger();
        s.subscribe(e -> {
            thrown.incrementAndGet();
            throw new IllegalStateException("subscriber bug (expected by the test)");
        }, () -> { });
        Collector c = subscribe(s);
        for (int i = 1; i <= 3; i++) {
            String k = "op" + i;
            long v = s.apply(k, AtomicOperation.force(BreakerStatus.OPEN), threshold(1), i).state().version();
            assertTrue(eventually(() -> c.has(k, v)), "event " + i + " delivered after a subscriber threw");
        }
        assertEquals(3, thrown.get(), "the throwing subscriber stays subscribed");
    }

    @Test
    void unsubscribeStopsOnlyThatSubscriber() throws Exception {
        PostgresStore s = open();
        Collector gone = new Collector();
        TransitionFeed.Subscription sub = s.subscribe(gone.events::add, gone.gaps::incrementAndGet);
        Collector kept = subscribe(s);
        sub.close();
        sub.close();
        long v = s.apply("k", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
        assertTrue(eventually(() -> kept.has("k", v)));
        assertEquals(List.of(), gone.events);
    }

    // ------------------------------------------------------------------ lifecycle and connections

    @Test
    void closeStopsTheFeedThreadAndLeaksNoConnection() throws Exception {
        String app = "redeye-leak-" + UUID.randomUUID().toString().substring(0, 8);
        table = "leak";
        PostgresStore s = (PostgresStore) new PostgresStoreProvider().open(
                PgTestSupport.urlWith("schema=" + schema + "&table=leak&ApplicationName=" + app));
        Collector c = subscribe(s);
        long v = s.apply("k", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
        assertTrue(eventually(() -> c.has("k", v)));
        s.put("p", RICH, TTL);
        s.claimTrial("k", 1, Duration.ofSeconds(5)).orElseThrow();
        assertTrue(count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app) >= 1);
        String feedThread = "redeye-pg-feed " + s.channel();
        assertTrue(threadNames("redeye-pg-feed").contains(feedThread));
        assertTrue(s.feedThreadAlive());
        s.close();
        s.close();
        assertFalse(s.feedThreadAlive(), "close() waits for the feed thread");
        assertFalse(threadNames("redeye-pg-feed").contains(feedThread), "feed thread gone");
        assertTrue(eventually(() -> {
            try {
                return count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app) == 0;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }), "every connection of the closed store is gone from pg_stat_activity");
        assertThrows(StoreException.class, () -> s.get("k"));
        assertThrows(StoreException.class, () -> s.subscribe(e -> { }, () -> { }));
        assertThrows(StoreException.class, () -> s.claimTrial("k", 1, Duration.ofSeconds(1)));
    }

    @Test
    void closeFromAFeedCallbackDoesNotHang() throws Exception {
        String app = "redeye-cb-" + UUID.randomUUID().toString().substring(0, 8);
        table = "cbclose";
        PostgresStore s = (PostgresStore) new PostgresStoreProvider().open(
                PgTestSupport.urlWith("schema=" + schema + "&table=cbclose&ApplicationName=" + app));
        CountDownLatch closedInCallback = new CountDownLatch(1);
        s.subscribe(e -> {
            s.close();
            closedInCallback.countDown();
        }, () -> { });
        s.apply("k", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1);
        assertTrue(closedInCallback.await(5, TimeUnit.SECONDS), "close() inside a callback returned");
        assertTrue(eventually(() -> !s.feedThreadAlive()), "the feed thread ended after its callback");
        assertTrue(eventually(() -> {
            try {
                return count("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", app) == 0;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }), "no connection left");
        assertThrows(StoreException.class, () -> s.get("k"));
    }

    @Test
    void userSuppliedPoolGetsTheFeedConnectionBackAndIsNotClosed() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setDataSource(PgTestSupport.dataSource());
        config.setMaximumPoolSize(3);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            PostgresStore s = PostgresStore.builder(pool).schema(schema).table("pooled").build();
            Collector c = subscribe(s);
            long v = s.apply("k", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
            assertTrue(eventually(() -> c.has("k", v)));
            assertTrue(eventually(() -> pool.getHikariPoolMXBean().getActiveConnections() == 1),
                    "the feed holds one connection, calls hold none once they return");
            s.close();
            assertEquals(0, pool.getHikariPoolMXBean().getActiveConnections(), "the feed connection went back");
            assertFalse(pool.isClosed(), "the user's pool is the user's to close");
            try (Connection conn = pool.getConnection(); Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_listening_channels()")) {
                rs.next();
                assertEquals(0, rs.getInt(1), "a pooled connection went back still listening");
            }
        }
    }

    @Test
    void jdbiBuilderWorksWithoutCreatingTablesWhenTheyExist() throws Exception {
        String t = "migrated";
        String ddl = PostgresStore.schemaSql(schema, t);
        try (Connection c = PgTestSupport.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(ddl);
            st.execute(ddl); // idempotent
        }
        PostgresStore s = PostgresStore.builder(Jdbi.create(PgTestSupport.dataSource())).schema(schema).table(t)
                .createSchema(false).build();
        stores.add(s);
        s.put("k", RICH, TTL);
        assertEquals(Optional.of(RICH), s.get("k"));
    }

    @Test
    void concurrentStartsOnAFreshSchemaAllSucceed() throws Exception {
        String fresh = PgTestSupport.randomSchema("redeye_race");
        try {
            int n = 6;
            CountDownLatch go = new CountDownLatch(1);
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                        PostgresStore.builder(PgTestSupport.dataSource()).schema(fresh).build().close();
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                th.start();
                threads.add(th);
            }
            go.countDown();
            for (Thread th : threads) {
                th.join(TimeUnit.SECONDS.toMillis(30));
            }
            assertEquals(List.of(), errors);
        } finally {
            PgTestSupport.dropSchema(fresh);
        }
    }

    // ------------------------------------------------------------------ rows and expiry

    @Test
    void noOpSuccessAndClaimsLeaveNoVisibleState() throws Exception {
        PostgresStore s = open();
        StateChange c = s.apply("quiet", AtomicOperation.success(), threshold(3), 1);
        assertFalse(c.isTransition());
        assertEquals(0, count("SELECT count(*) FROM " + qualified("") + " WHERE key = 'quiet'"),
                "a success with nothing to clear writes nothing");
        String token = s.claimTrial("claimed", 2, Duration.ofSeconds(30)).orElseThrow();
        assertEquals(Optional.empty(), s.get("claimed"), "a claim alone is not a state");
        s.delete("claimed");
        assertEquals(0, count("SELECT count(*) FROM " + qualified("_claims")), "delete removes claims");
        s.releaseTrial("claimed", token);
        assertTrue(s.claimTrial("claimed", 1, Duration.ofSeconds(30)).isPresent());
    }

    @Test
    void forceClosedDropsClaims() throws Exception {
        PostgresStore s = open();
        Policy p = threshold(1);
        s.apply("k", AtomicOperation.failure(), p, 1);
        s.claimTrial("k", 2, Duration.ofSeconds(30)).orElseThrow();
        s.claimTrial("k", 2, Duration.ofSeconds(30)).orElseThrow();
        assertEquals(2, count("SELECT count(*) FROM " + qualified("_claims")));
        s.apply("k", AtomicOperation.force(BreakerStatus.CLOSED), p, 2);
        assertEquals(0, count("SELECT count(*) FROM " + qualified("_claims")));
    }

    @Test
    void expiredStateReadsAsAbsentAndRestarts() throws Exception {
        PostgresStore s = open();
        s.put("short", RICH, Duration.ofMillis(200));
        assertEquals(Optional.of(RICH), s.get("short"));
        assertTrue(eventually(() -> s.get("short").isEmpty()), "state gone after its ttl (database clock)");
        StateChange c = s.apply("short", AtomicOperation.failure(), threshold(5), 7);
        assertEquals(1, c.state().failures(), "an expired state counts as never written");
    }

    @Test
    void purgeExpiredReclaimsOnlyDeadRows() throws Exception {
        PostgresStore s = open();
        s.put("live", RICH, TTL);
        s.put("dead", RICH, TTL);
        s.put("dead-but-claimed", RICH, TTL);
        s.claimTrial("dead-but-claimed", 1, Duration.ofSeconds(60)).orElseThrow();
        s.claimTrial("lock-row-only", 1, Duration.ofSeconds(60)).orElseThrow();
        String stale = s.claimTrial("stale-lock-row", 1, Duration.ofSeconds(60)).orElseThrow();
        update("UPDATE " + qualified("") + " SET expires_at = clock_timestamp() - interval '1 second' "
                + "WHERE key LIKE 'dead%'");
        update("UPDATE " + qualified("_claims") + " SET expires_at = clock_timestamp() - interval '1 second' "
                + "WHERE token = ?", stale);
        assertEquals(2, s.purgeExpired(), "the expired state and the lock row whose claim expired");
        Set<String> left = new HashSet<>();
        try (Connection c = PgTestSupport.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT key FROM " + qualified(""))) {
            while (rs.next()) {
                left.add(rs.getString(1));
            }
        }
        assertEquals(Set.of("live", "dead-but-claimed", "lock-row-only"), left);
        assertEquals(Optional.of(RICH), s.get("live"));
        assertTrue(s.claimTrial("dead-but-claimed", 1, Duration.ofSeconds(60)).isEmpty(), "live claim kept");
        assertEquals(0, s.purgeExpired());
    }

    @Test
    void claimExpiryIsJudgedByTheDatabaseClock() throws Exception {
        PostgresStore s = open();
        s.claimTrial("k", 1, Duration.ofSeconds(60)).orElseThrow();
        assertTrue(s.claimTrial("k", 1, Duration.ofSeconds(60)).isEmpty());
        // Move the claim's expiry into the database's past: no JVM time passes, yet the permit is free.
        update("UPDATE " + qualified("_claims") + " SET expires_at = clock_timestamp() - interval '1 second'");
        assertTrue(s.claimTrial("k", 1, Duration.ofSeconds(60)).isPresent());
    }

    // ------------------------------------------------------------------ forced states never expire

    private static final BreakerState FORCED = BreakerState.builder().open(true).forced(true).openedAt(5)
            .failures(2).version(3).build();

    /** The row's expiry in ms from now by the database clock, or null when {@code expires_at} is NULL. */
    private Long expiresInMillis(String key) throws SQLException {
        try (Connection c = PgTestSupport.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint FROM " + qualified("")
                        + " WHERE key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no row for " + key);
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        }
    }

    /** A policy whose stateTtl is {@code ttl} (reset windows small enough for the policy to accept it). */
    private static Policy stateTtl(Duration ttl) {
        return Policy.builder().failureThreshold(2).jitter(0.0).resetTimeout(Duration.ofMillis(10))
                .maxResetTimeout(Duration.ofMillis(10)).stateTtl(ttl).build();
    }

    @Test
    void putOfAForcedStateStoresNoExpiry() throws Exception {
        PostgresStore s = open();
        s.put("held", FORCED, Duration.ofMillis(150));
        s.put("plain", RICH, Duration.ofMillis(150));
        assertEquals(null, expiresInMillis("held"), "a forced state is stored with expires_at NULL");
        assertNotEquals(null, expiresInMillis("plain"), "an unforced state keeps its ttl");
        Thread.sleep(400); // real time, well past the 150 ms ttl
        assertEquals(Optional.of(FORCED), s.get("held"), "a forced state outlives the ttl put gave it");
        assertEquals(Optional.empty(), s.get("plain"));
        s.put("held", RICH, Duration.ofHours(1));
        long left = expiresInMillis("held");
        assertTrue(left > 3_500_000 && left <= 3_600_000, "unforced again: the ttl applies, " + left + " ms left");
        assertThrows(IllegalArgumentException.class, () -> s.put("held", FORCED, Duration.ZERO),
                "the ignored ttl is still validated");
    }

    @Test
    void atomicWritesOfAForcedStateStoreNoExpiryAndResetRestoresTheTtl() throws Exception {
        PostgresStore s = open();
        Policy p = stateTtl(Duration.ofMillis(150));
        Policy day = stateTtl(Duration.ofDays(1));
        assertTrue(s.apply("op", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 10).state().forced());
        assertEquals(null, expiresInMillis("op"), "force OPEN stores no expiry");
        assertTrue(s.apply("op", AtomicOperation.failure(), p, 11).state().forced());
        assertEquals(null, expiresInMillis("op"), "a failure counted while forced stores no expiry");
        assertTrue(s.apply("op", AtomicOperation.outcome(false), p, 12).state().forced());
        assertEquals(null, expiresInMillis("op"), "an outcome recorded while forced stores no expiry");
        Thread.sleep(400); // real time, well past the policy's 150 ms stateTtl
        BreakerState held = s.get("op").orElseThrow(() -> new AssertionError("the forced state expired"));
        assertTrue(held.forced());
        assertEquals(1, count("SELECT count(*) FROM " + qualified("") + " WHERE key = 'op'"));
        assertEquals(0, s.purgeExpired(), "purge leaves a forced row alone");

        assertFalse(s.apply("op", AtomicOperation.force(BreakerStatus.CLOSED), day, 13).state().forced());
        long left = expiresInMillis("op");
        assertTrue(left > 86_000_000 && left <= 86_400_000, "reset applies stateTtl again, " + left + " ms left");
        s.apply("op", AtomicOperation.force(BreakerStatus.FORCED_OPEN), day, 14);
        assertEquals(null, expiresInMillis("op"));
        assertFalse(s.apply("op", AtomicOperation.force(BreakerStatus.HALF_OPEN), day, 15).state().forced());
        assertNotEquals(null, expiresInMillis("op"), "force HALF_OPEN unforces: the ttl applies again");
    }

    @Test
    void aForcedRowWithAPastExpiryNeverReadsAsExpiredNorIsPurged() throws Exception {
        PostgresStore s = open();
        s.put("legacy", FORCED, TTL);
        s.put("plain", RICH, TTL);
        // As an earlier version of this store wrote a forced state: with an expiry, now in the past.
        update("UPDATE " + qualified("") + " SET expires_at = clock_timestamp() - interval '1 second'");
        assertEquals(Optional.of(FORCED), s.get("legacy"));
        assertEquals(Optional.empty(), s.get("plain"));
        assertEquals(1, s.purgeExpired(), "only the unforced expired row is purged");
        assertEquals(Optional.of(FORCED), s.get("legacy"));
        StateChange c = s.apply("legacy", AtomicOperation.failure(), threshold(2), 20);
        assertTrue(c.state().forced(), "an atomic operation sees the forced state, not an absent one");
        assertEquals(null, expiresInMillis("legacy"), "and rewrites it without expiry");
    }

    @Test
    void aNewLifeStartsAtTheDatabaseClockInMicrosecondsOrAboveAnExpiredVersion() throws Exception {
        PostgresStore s = open();
        long before = count("SELECT " + PostgresStore.NOW_MICROS);
        StateChange first = s.apply("fresh", AtomicOperation.failure(), threshold(1), 1);
        long after = count("SELECT " + PostgresStore.NOW_MICROS);
        long base = first.previous().version();
        assertEquals(BreakerState.initial(base), first.previous(), "a new key starts from initial(base)");
        assertTrue(base >= before && base <= after, "the version base is clock_timestamp() in microseconds, "
                + "between " + before + " and " + after + ": " + base);
        assertEquals(base + 1, first.state().version());
        // An expired row keeps its version until it is reused: a new life starts above it, also when it is
        // ahead of the clock (a clock stepped back, a fail-over to a server whose clock lags; TCK rule R1.12).
        long high = after + 10_000_000_000L;
        s.put("high", BreakerState.INITIAL.toBuilder().failures(1).version(high).build(), TTL);
        update("UPDATE " + qualified("") + " SET expires_at = clock_timestamp() - interval '1 second' "
                + "WHERE key = 'high'");
        assertEquals(Optional.empty(), s.get("high"), "the expired state reads as absent");
        StateChange reborn = s.apply("high", AtomicOperation.failure(), threshold(1), 2);
        assertEquals(BreakerState.initial(high + 1), reborn.previous(), "the new life starts above the expired "
                + "version, never at it");
        assertEquals(high + 2, reborn.state().version());
        // A claim's lock row (layout 0) holds no version: the clock again.
        s.claimTrial("claimed", 1, Duration.ofMinutes(1)).orElseThrow();
        assertTrue(s.apply("claimed", AtomicOperation.failure(), threshold(1), 3).previous().version() >= after);
    }

    @Test
    void aStateTtlBeyondWhatPostgresCanStoreIsCapped() throws Exception {
        PostgresStore s = open();
        // A policy meaning "keep state forever": PostgreSQL refuses such an interval ("interval out of range").
        Policy forever = Policy.builder().failureThreshold(2).stateTtl(Duration.ofMillis(Long.MAX_VALUE)).build();
        assertEquals(1, s.apply("forever", AtomicOperation.failure(), forever, 1).state().failures());
        assertTrue(s.apply("forever", AtomicOperation.failure(), forever, 2).state().open());
        assertTrue(expiresInMillis("forever") > Duration.ofDays(36_000).toMillis(), "capped at ~100 years");
        s.put("forever-put", RICH, Duration.ofMillis(Long.MAX_VALUE));
        assertEquals(Optional.of(RICH), s.get("forever-put"));
    }

    @Test
    void doublesRoundTripBitExact() {
        PostgresStore s = open();
        double[] rates = {0.0, -0.0, Double.MIN_VALUE, 0.1 + 0.2, 1.0 / 3, Math.nextDown(1.0), 1.0};
        for (double r : rates) {
            BreakerState st = BreakerState.builder().errorRate(r).samples(3).version(Long.MAX_VALUE).build();
            s.put("d", st, TTL);
            assertEquals(Double.doubleToRawLongBits(r),
                    Double.doubleToRawLongBits(s.get("d").orElseThrow().errorRate()), "bits of " + r);
            assertEquals(st, s.get("d").orElseThrow());
        }
    }

    // ------------------------------------------------------------------ retries

    private static List<Throwable> hammer(PostgresStore s, String key, int threads, int each) throws Exception {
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < each; i++) {
                        try {
                            s.apply(key, AtomicOperation.failure(), threshold(1_000_000), i);
                        } catch (StoreException e) {
                            errors.add(e);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            th.start();
            all.add(th);
        }
        go.countDown();
        for (Thread th : all) {
            th.join(TimeUnit.SECONDS.toMillis(60));
        }
        return errors;
    }

    @Test
    void serializationFailuresAreRetriedAndBounded() throws Exception {
        try (HikariDataSource pool = PgTestSupport.repeatableReadPool(4)) {
            PostgresStore retrying = PostgresStore.builder(pool).schema(schema).table("rr").maxAttempts(10_000).build();
            stores.add(retrying);
            assertEquals(List.of(), hammer(retrying, "hot", 4, 60));
            assertEquals(240, retrying.get("hot").orElseThrow().failures(), "exact count through retries");

            PostgresStore once = PostgresStore.builder(pool).schema(schema).table("rr").maxAttempts(1).build();
            stores.add(once);
            List<Throwable> errors = hammer(once, "hot2", 4, 60);
            if (errors.isEmpty()) {
                fail("REPEATABLE READ produced no serialization failure in 240 contended calls; this test proves "
                        + "nothing on this server");
            }
            Throwable e = errors.get(0);
            assertTrue(e.getMessage().contains("SQLSTATE 40001"), e.getMessage());
            long failures = once.get("hot2").orElseThrow().failures();
            assertEquals(240 - errors.size(), failures, "every call either counted or threw");
        }
    }

    // ------------------------------------------------------------------ discovery

    @Test
    void storesOpenFindsTheProvider() {
        Store s = Stores.open(PgTestSupport.urlWith("schema=" + schema + "&table=discovered"), dev.redeye.OpenMode.STRICT);
        stores.add(s);
        assertTrue(s instanceof PostgresStore);
        s.put("k", RICH, TTL);
        assertEquals(Optional.of(RICH), s.get("k"));
    }

    private static Set<String> threadNames(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith(prefix)).collect(Collectors.toSet());
    }
}

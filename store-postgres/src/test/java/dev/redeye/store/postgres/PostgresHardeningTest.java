package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.eventually;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static dev.redeye.store.postgres.StoredStates.RICH;
import static dev.redeye.store.postgres.StoredStates.TTL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Production hardening of {@link PostgresStore} (issue 12) against a real server, in a random schema: the
 * server-side bounds (lock, statement, idle in transaction), the clean-up thread and its indexes, rows the
 * store must not read as "no state", a feed that survives its subscribers, connections the server closed, and
 * claims under REPEATABLE READ. The fault tests on a private server are in {@link PostgresFaultTest}.
 */
class PostgresHardeningTest {
    /** Three times the default lock_timeout: what a call blocked by a held row lock may take at most here. */
    private static final long LOCK_BOUND_MILLIS = 3 * Timeouts.DEFAULT_LOCK_MILLIS;

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_hard");
    /** A store through the provider (its own pool, timeouts set per session) with extra URI parameters. */
    private PostgresStore openUri(String table, String params) {
        return PG.keep(PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table
                + (params.isEmpty() ? "" : "&" + params))));
    }

    private static Policy threshold(int n) {
        return Policy.builder().failureThreshold(n).jitter(0.0).build();
    }

    /** An open transaction on a connection of its own that holds the row lock of {@code key} until closed. */
    private static final class RowLock implements AutoCloseable {
        final Connection c;

        RowLock(String table, String key) throws SQLException {
            c = PgTestSupport.dataSource().getConnection();
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + PG.qualified(table)
                    + " WHERE key_hash = sha256(convert_to(?, 'UTF8')) FOR UPDATE")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next(), "no row to lock for " + key);
                }
            }
        }

        @Override
        public void close() throws SQLException {
            c.rollback();
            c.close();
        }
    }

    // ------------------------------------------------------------------ 1. bounds

    /**
     * A session that holds a breaker row's lock (a stalled client, a long manual transaction) makes the
     * store's calls on that key fail fast with lock_timeout, not queue behind it; reads never wait for it.
     * Over a user's DataSource the bound is set per transaction, over a URI per session of the store's pool.
     */
    @ParameterizedTest
    @ValueSource(strings = {"user DataSource", "URI"})
    void aRowLockHeldByAnotherSessionFailsTheCallWithinLockTimeout(String kind) throws Exception {
        String table = PG.newTable();
        PostgresStore s = kind.equals("URI") ? openUri(table, "")
                : PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table).build());
        s.put("held", RICH, TTL);
        s.apply("other", AtomicOperation.failure(), threshold(100), 1);
        try (RowLock lock = new RowLock(table, "held")) {
            for (String call : List.of("recordFailure", "force", "claimTrial")) {
                long t0 = System.nanoTime();
                StoreException e = assertTimeoutPreemptively(Duration.ofSeconds(15), () ->
                        assertThrows(StoreException.class, () -> {
                            switch (call) {
                                case "recordFailure" -> s.apply("held", AtomicOperation.failure(), threshold(100), 2);
                                case "force" -> s.apply("held", AtomicOperation.force(BreakerStatus.OPEN), threshold(100), 2);
                                default -> s.claimTrial("held", 1, Duration.ofSeconds(30));
                            }
                        }), call + " waited for the held row lock without bound");
                long took = (System.nanoTime() - t0) / 1_000_000;
                System.out.println("[" + kind + "] " + call + " under a held row lock failed after " + took + " ms");
                assertTrue(took < LOCK_BOUND_MILLIS, call + " took " + took + " ms");
                assertTrue(e.getMessage().contains("lock_timeout"), e.getMessage());
                // lock_timeout (55P03) ends the wait; on a loaded machine the statement_timeout just above it
                // (57014) may fire first for a probe of 100 ms, which the bound above covers all the same
                assertTrue(e.getMessage().contains("55P03") || e.getMessage().contains("57014"), e.getMessage());
            }
            assertTimeoutPreemptively(Duration.ofSeconds(2), () -> assertEquals(Optional.of(RICH), s.get("held")),
                    "a read never waits for a row lock");
            assertEquals(2, assertTimeoutPreemptively(Duration.ofSeconds(5),
                    () -> s.apply("other", AtomicOperation.failure(), threshold(100), 2)).state().failures(), "other keys unaffected");
        }
        assertEquals(4, s.apply("held", AtomicOperation.failure(), threshold(100), 3).state().failures(),
                "once the lock is released the key works again, and nothing was counted while it was held");
    }

    /** statement_timeout bounds a statement that waits for something else than a row lock (here a table lock). */
    @Test
    void aStatementBlockedByATableLockFailsWithinStatementTimeout() throws Exception {
        String table = PG.newTable();
        PostgresStore s = PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .lockTimeout(Duration.ZERO).statementTimeout(Duration.ofMillis(400)).build());
        s.put("k", RICH, TTL);
        try (Connection c = PgTestSupport.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("LOCK TABLE " + PG.qualified(table) + " IN ACCESS EXCLUSIVE MODE"); // a migration, say
            }
            long t0 = System.nanoTime();
            StoreException e = assertTimeoutPreemptively(Duration.ofSeconds(15),
                    () -> assertThrows(StoreException.class, () -> s.get("k")));
            long took = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(took < 3 * 400 + 1000, "took " + took + " ms");
            assertTrue(e.getMessage().contains("statement_timeout is 400 ms"), e.getMessage());
            c.rollback();
        }
        assertEquals(Optional.of(RICH), s.get("k"));
    }

    /**
     * A client that stalls while holding a row lock (a GC pause, a frozen VM) loses its session after
     * idle_in_transaction_session_timeout, which releases the lock for everyone else; its own call fails.
     */
    @Test
    void aClientStalledWhileHoldingTheRowLockLosesItAfterIdleInTransactionTimeout() throws Exception {
        String table = PG.newTable();
        CountDownLatch stalled = new CountDownLatch(1);
        AtomicBoolean armed = new AtomicBoolean();
        DataSource stalling = stallingBeforeCommit(PgTestSupport.dataSource(), armed, stalled, 3_000);
        PostgresStore victim = PG.keep(PostgresStore.builder(stalling).schema(PG.name()).table(table)
                .idleInTransactionTimeout(Duration.ofMillis(300)).build());
        PostgresStore other = PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .createSchema(false).lockTimeout(Duration.ofSeconds(10)).statementTimeout(Duration.ofSeconds(10))
                .build());
        victim.apply("k", AtomicOperation.failure(), threshold(100), 1);
        armed.set(true);
        List<Throwable> victimResult = new CopyOnWriteArrayList<>();
        Thread t = new Thread(() -> {
            try {
                victim.apply("k", AtomicOperation.failure(), threshold(100), 2);
                victimResult.add(new AssertionError("the stalled call succeeded"));
            } catch (Throwable e) {
                victimResult.add(e);
            }
        });
        t.start();
        assertTrue(stalled.await(10, TimeUnit.SECONDS), "the victim reached its stall, holding the row lock");
        long t0 = System.nanoTime();
        assertEquals(2, other.apply("k", AtomicOperation.failure(), threshold(100), 3).state().failures(),
                "the stalled call counted nothing");
        long waited = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("a call queued behind a stalled lock holder got the lock after " + waited + " ms "
                + "(idle_in_transaction_session_timeout 300 ms, stall 3000 ms)");
        assertTrue(waited < 2_000, "the lock of the stalled client was held " + waited + " ms");
        t.join(10_000);
        assertEquals(1, victimResult.size());
        assertTrue(victimResult.get(0) instanceof StoreException, victimResult.get(0).toString());
        assertEquals(2, other.get("k").orElseThrow().failures());
    }

    /**
     * A DataSource whose connections, while {@code armed}, stall once before committing: before sending a batch
     * that ends in COMMIT, or in {@code commit()}, whichever comes first.
     */
    private static DataSource stallingBeforeCommit(PGSimpleDataSource real, AtomicBoolean armed, CountDownLatch stalled,
                                                   long stallMillis) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (p, m, args) -> {
                    Object r = invoke(m, real, args);
                    if (!m.getName().equals("getConnection")) {
                        return r;
                    }
                    Connection c = (Connection) r;
                    return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                            (cp, cm, cargs) -> {
                                boolean commits = cm.getName().equals("commit") || cm.getName().equals("prepareStatement")
                                        && cargs != null && String.valueOf(cargs[0]).endsWith("COMMIT");
                                if (commits && armed.compareAndSet(true, false)) {
                                    stalled.countDown();
                                    Thread.sleep(stallMillis);
                                }
                                return invoke(cm, c, cargs);
                            });
                });
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The per-transaction bounds end with the store's transaction: they never leak into the user's sessions. */
    @Test
    void perTransactionBoundsNeverLeakIntoTheUsersPooledSessions() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setDataSource(PgTestSupport.dataSource());
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            PostgresStore s = PG.keep(PostgresStore.builder(pool).schema(PG.name()).table(PG.newTable()).build());
            s.apply("k", AtomicOperation.failure(), threshold(5), 1);
            s.get("k");
            s.claimTrial("k", 1, Duration.ofSeconds(5));
            try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT current_setting('lock_timeout'), "
                         + "current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')")) {
                rs.next();
                assertEquals(List.of("0", "0", "0"), List.of(rs.getString(1), rs.getString(2), rs.getString(3)),
                        "the pool's only connection, used by every call above, kept the server defaults");
            }
        }
    }

    @Test
    void timeoutOptionsAreValidatedNamingTheOption() {
        PostgresStore.Builder b = PostgresStore.builder(PgTestSupport.dataSource());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> b.lockTimeout(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("lockTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.statementTimeout(Duration.ofDays(30)));
        assertTrue(e.getMessage().contains("statementTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.idleInTransactionTimeout(Duration.ofNanos(5)));
        assertTrue(e.getMessage().contains("idleInTransactionTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.purgeInterval(Duration.ofMillis(5)));
        assertTrue(e.getMessage().contains("purgeInterval"), e.getMessage());
        assertThrows(NullPointerException.class, () -> b.lockTimeout(null));
    }

    // ------------------------------------------------------------------ 2. a closed connection is replaced

    /**
     * The server closes every connection of the store's pool (pg_terminate_backend, as a failover or restart
     * would): the next calls get fresh connections instead of failing on the dead ones the pool still holds.
     * A call may find every pooled connection dead when the pool validates them, and then waits for the pool to
     * open a new one: the pool's wait is set far above what opening a connection takes on a loaded machine, as
     * this test is about the dead connections, not about how fast the server accepts new ones.
     */
    @Test
    void connectionsTheServerClosedAreReplacedWithoutFailingTheNextCall() throws Exception {
        String app = "redeye-term-" + UUID.randomUUID().toString().substring(0, 8);
        PostgresStore s = openUri(PG.newTable(), "poolSize=4&poolTimeoutMillis=10000&ApplicationName=" + app);
        s.put("k", RICH, TTL);
        for (int round = 0; round < 3; round++) {
            warmConnections(s, 4);
            long killed = count("SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 3000) FROM pg_stat_activity "
                    + "WHERE application_name = ?) t", app);
            assertTrue(killed >= 1, "terminated " + killed + " connections");
            assertEquals(Optional.of(RICH), s.get("k"), "round " + round + ": the next read");
            assertEquals(round + 1, s.apply("counted", AtomicOperation.failure(), threshold(100), round).state().failures(),
                    "round " + round + ": the next write");
        }
    }

    /** Makes the pool hold {@code n} connections, all just used. */
    private static void warmConnections(PostgresStore s, int n) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    for (int k = 0; k < 5; k++) {
                        s.get("k");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(10_000);
        }
    }

    // ------------------------------------------------------------------ 3. clean-up

    @Test
    void theCleanUpThreadPurgesExpiredStatesPlaceholdersClaimsAndOldEvents() throws Exception {
        String table = PG.newTable();
        PostgresStore s = openUri(table, "purgeIntervalMillis=200");
        s.put("live", RICH, TTL);
        s.put("dead", RICH, Duration.ofMillis(1));
        s.put("claimed", RICH, TTL);
        s.claimTrial("claimed", 5, Duration.ofMillis(1)).orElseThrow();          // expires at once
        String kept = s.claimTrial("claimed", 5, Duration.ofHours(1)).orElseThrow();
        s.claimTrial("placeholder", 1, Duration.ofMillis(1)).orElseThrow();      // placeholder row + claim
        BreakerState forced = BreakerState.builder().open(true).forced(true).openedAt(5).version(3).build();
        s.put("forced", forced, TTL);
        update("UPDATE " + PG.qualified(table) + " SET expires_at = clock_timestamp() - interval '1 second' "
                + "WHERE key = 'forced'"); // as an older version wrote it: a forced state never expires
        update("INSERT INTO " + PG.qualified(table + "_events") + " (created_at, line) VALUES "
                + "(clock_timestamp() - interval '11 minutes', 'old'), (clock_timestamp(), 'fresh')");
        assertTrue(eventually(() -> rows(table).equals(Set.of("live", "claimed", "forced"))),
                "expired states and placeholders purged, others kept: " + rows(table));
        assertTrue(eventually(() -> claims(table).equals(List.of(kept))),
                "expired claims purged, the live one kept: " + claims(table));
        assertTrue(eventually(() -> lines(table).equals(List.of("fresh"))), "old events purged: " + lines(table));
        assertEquals(Optional.of(forced), s.get("forced"));
        assertTrue(s.claimTrial("claimed", 1, Duration.ofSeconds(5)).isEmpty(), "the live claim still counts");
        String thread = "redeye-pg-janitor " + PG.qualified(table);
        assertTrue(threadNames().contains(thread), threadNames().toString());
        assertTrue(s.janitorAlive());
        s.close();
        assertFalse(s.janitorAlive(), "close() stops the clean-up thread");
        assertFalse(threadNames().contains(thread));
    }

    @Test
    void withoutAPurgeIntervalNoCleanUpThreadRuns() throws Exception {
        String table = PG.newTable();
        PostgresStore s = openUri(table, "purgeIntervalMillis=0");
        s.put("dead", RICH, Duration.ofMillis(1));
        assertFalse(s.janitorAlive());
        assertFalse(threadNames().contains("redeye-pg-janitor " + PG.qualified(table)));
        Thread.sleep(300);
        assertEquals(Set.of("dead"), rows(table));
        assertEquals(1, s.purgeExpired());
    }

    /** Every clean-up statement finds its rows through an index: the plan names it once scans are priced out. */
    @Test
    void cleanUpStatementsUseTheirIndexes() throws Exception {
        String table = PG.newTable();
        openUri(table, "purgeIntervalMillis=0");
        TableNames names = new TableNames(PG.name(), table);
        for (String index : List.of(names.statesExpiryIndex, names.claimsExpiryIndex, names.eventsAgeIndex)) {
            assertEquals(0, count("SELECT count(*) FROM (SELECT to_regclass(?) IS NULL AS missing) t WHERE missing",
                    index), index + " exists");
        }
        StateSql sql = new StateSql(names, Timeouts.DEFAULTS.perTransaction(false));
        assertPlanUses(sql.lockExpired, table + TableNames.STATES_EXPIRY_INDEX);
        assertPlanUses(sql.purgeClaims, table + TableNames.CLAIMS_EXPIRY_INDEX);
        assertPlanUses(sql.pruneEvents, table + TableNames.EVENTS_AGE_INDEX);
    }

    private static void assertPlanUses(String statement, String index) throws SQLException {
        try (Connection c = PgTestSupport.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("SET enable_seqscan = off");
            StringBuilder plan = new StringBuilder();
            try (ResultSet rs = st.executeQuery("EXPLAIN " + statement)) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
            assertTrue(plan.toString().contains(index) && plan.toString().contains("Index Cond"), "no condition on "
                    + "the index " + index + " in the plan of\n" + statement + "\n" + plan);
        }
    }

    private static Set<String> rows(String table) {
        return strings("SELECT key FROM " + PG.qualified(table)).stream().collect(Collectors.toSet());
    }

    private static List<String> claims(String table) {
        return strings("SELECT token FROM " + PG.qualified(table + "_claims"));
    }

    private static List<String> lines(String table) {
        return strings("SELECT line FROM " + PG.qualified(table + "_events"));
    }

    private static List<String> strings(String sql) {
        try (Connection c = PgTestSupport.dataSource().getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            List<String> out = new ArrayList<>();
            while (rs.next()) {
                out.add(rs.getString(1));
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .collect(Collectors.toSet());
    }

    // ------------------------------------------------------------------ 4. rows that are not "no state"

    /**
     * A store through the provider over {@code table} with the URI parameters {@code params}, holding RICH at "k",
     * whose row SQL then changes: {@code UPDATE table <set> WHERE key = 'k'}.
     */
    private PostgresStore withRowOfKChanged(String table, String params, String set) throws SQLException {
        PostgresStore s = openUri(table, params);
        s.put("k", RICH, TTL);
        update("UPDATE " + PG.qualified(table) + " " + set + " WHERE key = 'k'");
        return s;
    }

    /** A layout-0 row is "no state" only when it is the store's own placeholder, not when it carries state. */
    @Test
    void aLayoutZeroRowCarryingStateIsAStoreExceptionAndIsNeverOverwritten() throws Exception {
        String table = PG.newTable();
        PostgresStore s = withRowOfKChanged(table, "", "SET layout = 0");
        assertRefusedAndUntouched(s, "k", "layout 0 marks the store's placeholder");
        assertThrows(StoreException.class, () -> s.put("k", BreakerState.INITIAL, TTL), "put writes over no such row");
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'k' AND layout = 0 "
                + "AND failures = 3 AND open"), "the row is left exactly as it was");
    }

    /** Malformed data is malformed also when its expiry has passed: never read as absent and reused. */
    @Test
    void anExpiredMalformedRowIsAStoreExceptionNotAFreshStart() throws Exception {
        String table = PG.newTable();
        PostgresStore s = withRowOfKChanged(table, "purgeIntervalMillis=0",
                "SET failures = -1, expires_at = clock_timestamp() - interval '1 second'");
        assertRefusedAndUntouched(s, "k", "malformed");
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'k' AND failures = -1"));
    }

    /** put is an overwrite of this store's own rows only; a row of another layout is refused, then deletable. */
    @Test
    void putNeverOverwritesARowOfAnotherLayout() throws Exception {
        String table = PG.newTable();
        PostgresStore s = withRowOfKChanged(table, "", "SET layout = 99");
        StoreException e = assertThrows(StoreException.class, () -> s.put("k", BreakerState.INITIAL, TTL));
        assertTrue(e.getMessage().contains("layout 99"), e.getMessage());
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'k' AND layout = 99 "
                + "AND failures = 3"), "the foreign row is left as it was");
        s.delete("k");
        s.put("k", BreakerState.INITIAL, TTL);
        assertEquals(Optional.of(BreakerState.INITIAL), s.get("k"), "deleting the row is how a key is reused");
    }

    /** The store's own placeholder (made by a claim on an unknown key) still reads as absent and is taken over. */
    @Test
    void theStoresOwnPlaceholderReadsAsAbsentAndIsTakenOver() throws Exception {
        String table = PG.newTable();
        PostgresStore s = openUri(table, "");
        s.claimTrial("k", 1, Duration.ofMinutes(1)).orElseThrow();
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = 'k' AND layout = 0"));
        assertEquals(Optional.empty(), s.get("k"));
        assertEquals(1, s.apply("k", AtomicOperation.failure(), threshold(5), 1).state().failures());
        s.put("p", RICH, TTL);
        s.delete("p");
        s.claimTrial("p", 1, Duration.ofMinutes(1)).orElseThrow();
        s.put("p", RICH, TTL);
        assertEquals(Optional.of(RICH), s.get("p"), "put takes over the placeholder");
    }

    private static void assertRefusedAndUntouched(PostgresStore s, String k, String why) {
        Policy p = threshold(5);
        for (Runnable call : List.<Runnable>of(() -> s.get(k), () -> s.apply(k, AtomicOperation.failure(), p, 1),
                () -> s.apply(k, AtomicOperation.success(), p, 1), () -> s.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), p, 1),
                () -> s.claimTrial(k, 1, Duration.ofSeconds(5)))) {
            StoreException e = assertThrows(StoreException.class, call::run);
            assertTrue(e.getMessage().contains(why) || e.getMessage().contains("layout"), e.getMessage());
        }
    }

    // ------------------------------------------------------------------ 5. the feed survives its subscribers

    /**
     * A subscriber that throws an Error (which FeedSubscribers does not contain) kills the feed loop: the feed
     * says so with onGap to every subscriber and starts again, so later events still arrive.
     */
    @Test
    void aFeedLoopKilledByAnErrorSignalsAGapAndRestarts() throws Exception {
        String table = PG.newTable();
        PostgresStore s = openUri(table, "");
        PostgresStore writer = openUri(table, "");
        AtomicBoolean thrown = new AtomicBoolean();
        s.subscribe(e -> {
            if (e.operation().equals("boom") && thrown.compareAndSet(false, true)) {
                throw new FeedKiller();
            }
        }, () -> { });
        Collector c = Collector.subscribe(s);
        long v1 = writer.apply("boom", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1).state().version();
        assertTrue(eventually(thrown::get), "the killing event arrived");
        assertTrue(eventually(() -> c.gaps.get() >= 1), "the dead loop said so with onGap");
        assertTrue(eventually(() -> s.feedBackendPid() > 0), "and listens again");
        long v2 = writer.apply("after", AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 2).state().version();
        assertTrue(eventually(() -> c.has("after", v2)), "events flow after the restart");
        assertTrue(s.feedThreadAlive());
        assertNotEquals(v1, v2);
    }

    /** An Error no callback isolation catches (not a LinkageError or AssertionError). */
    private static final class FeedKiller extends Error {
        private static final long serialVersionUID = 1L;

        FeedKiller() {
            super("a subscriber's Error (expected by the test)");
        }
    }

    // ------------------------------------------------------------------ claims under REPEATABLE READ

    /**
     * Under REPEATABLE READ a claimer's snapshot predates the claims of the transactions it queued behind; the
     * store must still grant exactly {@code permits} (the touched row makes late claimers retry).
     */
    @Test
    void aClaimRaceUnderRepeatableReadGrantsExactlyThePermits() throws Exception {
        try (HikariDataSource pool = PgTestSupport.repeatableReadPool(8)) {
            PostgresStore s = PG.keep(PostgresStore.builder(pool).schema(PG.name()).table(PG.newTable())
                    .maxAttempts(10_000).lockTimeout(Duration.ofSeconds(10)).statementTimeout(Duration.ofSeconds(10))
                    .build());
            for (int round = 0; round < 4; round++) {
                String k = "race-" + round;
                s.apply(k, AtomicOperation.force(BreakerStatus.OPEN), threshold(1), 1);
                AtomicInteger winners = new AtomicInteger();
                List<Throwable> errors = new CopyOnWriteArrayList<>();
                CountDownLatch go = new CountDownLatch(1);
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    Thread t = new Thread(() -> {
                        try {
                            go.await();
                            if (s.claimTrial(k, 3, Duration.ofMinutes(1)).isPresent()) {
                                winners.incrementAndGet();
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                    t.start();
                    threads.add(t);
                }
                go.countDown();
                for (Thread t : threads) {
                    t.join(60_000);
                }
                assertEquals(List.of(), errors);
                assertEquals(3, winners.get(), "round " + round + ": winners of 12 claimers for 3 permits");
            }
        }
    }
}

package dev.redeye.store.postgres;

import static dev.redeye.store.postgres.PgTestSupport.count;
import static dev.redeye.store.postgres.PgTestSupport.update;
import static dev.redeye.store.postgres.StoredStates.RICH;
import static dev.redeye.store.postgres.StoredStates.TTL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The store in the configurations production deployments have (issue 22), against a real server in a random
 * schema: pools whose connections default to {@code autoCommit=false}, schema management by the store or by a
 * migration tool, one bound per breaker call on a row another session holds, and claims whose expiry no claim
 * can have.
 */
class PostgresProductionTest {
    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_prod");
    // ------------------------------------------------------------------ 1. autoCommit=false pools

    /**
     * A HikariCP pool with {@code autoCommit=false} rolls back, when a connection comes back, whatever its
     * borrower left uncommitted. Every write of the store must commit whatever the pool's default: seen from
     * another session, put, delete, releaseTrial and every part of the clean-up took effect.
     */
    @Test
    void everyWriteCommitsOverAPoolWhoseConnectionsDefaultToAutoCommitOff() throws Exception {
        String table = PG.newTable();
        HikariDataSource pool = PG.keep(PgTestSupport.autoCommitOffPool(4));
        PostgresStore s = PG.keep(PostgresStore.builder(pool).schema(PG.name()).table(table)
                .purgeInterval(Duration.ZERO).build());
        String byKey = "SELECT count(*) FROM " + PG.qualified(table) + " WHERE key = ?";

        s.put("put", RICH, TTL);
        assertEquals(1, count(byKey, "put"), "put is committed");
        assertEquals(Optional.of(RICH), s.get("put"));

        s.delete("put");
        assertEquals(0, count(byKey, "put"), "delete is committed");

        String token = s.claimTrial("claimed", 1, TTL).orElseThrow();
        s.releaseTrial("claimed", token);
        assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")), "releaseTrial is committed");
        assertTrue(s.claimTrial("claimed", 1, TTL).isPresent(), "the released permit is free again");

        s.put("dead", RICH, Duration.ofMillis(1));
        s.claimTrial("lapsed", 5, Duration.ofMillis(1)).orElseThrow();
        update("INSERT INTO " + PG.qualified(table + "_events") + " (created_at, line) VALUES "
                + "(clock_timestamp() - interval '11 minutes', 'old')");
        Thread.sleep(20); // the 1 ms ttls pass on the database clock
        s.purgeExpired();
        assertEquals(0, count(byKey, "dead"), "the purge of expired states is committed");
        assertEquals(1, count("SELECT count(*) FROM " + PG.qualified(table + "_claims")),
                "the purge of expired claims is committed (the live claim stays)");
        assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_events") + " WHERE line = 'old'"),
                "the pruning of old events is committed");
        assertFalse(pool.isClosed(), "the store never closes the user's pool");
    }

    // ------------------------------------------------------------------ 2. schema management

    /** With createSchema off the store creates nothing: it checks the layout and names the DDL to run. */
    @Test
    void withoutCreateSchemaAMissingLayoutFailsTheBuildWithTheDdlToRun() throws Exception {
        String table = PG.newTable();
        StoreException e = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.builder(
                PgTestSupport.dataSource()).schema(PG.name()).table(table).createSchema(false).build()));
        assertTrue(e.getMessage().contains("dev/redeye/store/postgres/schema.sql"), e.getMessage());
        assertTrue(e.getMessage().contains("CREATE TABLE IF NOT EXISTS " + PG.qualified(table) + " ("), e.getMessage());
        assertEquals(0, count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = ? AND c.relname LIKE ?", PG.name(), table + "%"), "nothing was created");
        StoreException uri = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.open(
                PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table + "&createSchema=false"))));
        assertTrue(uri.getMessage().contains("CREATE TABLE IF NOT EXISTS " + PG.qualified(table) + " ("),
                uri.getMessage());

        // Run what the message says (as a migration tool would), and the same build passes its check.
        PgTestSupport.exec(PostgresStore.schemaSql(PG.name(), table));
        PostgresStore s = PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .createSchema(false).build());
        s.put("k", RICH, TTL);
        assertEquals(Optional.of(RICH), s.get("k"));
    }

    /** A missing column or index is named, with the statement that adds it. */
    @Test
    void withoutCreateSchemaAMissingIndexOrColumnIsNamedWithItsStatement() throws Exception {
        String table = PG.newTable();
        PgTestSupport.exec(PostgresStore.schemaSql(PG.name(), table));
        PgTestSupport.exec("DROP INDEX " + PG.qualified(table + "_exp_at"));
        StoreException e = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.builder(
                PgTestSupport.dataSource()).schema(PG.name()).table(table).createSchema(false).build()));
        assertTrue(e.getMessage().contains("CREATE INDEX CONCURRENTLY IF NOT EXISTS \"" + table + "_exp_at\""),
                e.getMessage());
        PgTestSupport.exec("ALTER TABLE " + PG.qualified(table + "_claims") + " DROP COLUMN ttl_ms");
        e = assertThrows(StoreException.class, () -> PG.keep(PostgresStore.builder(PgTestSupport.dataSource())
                .schema(PG.name()).table(table).createSchema(false).build()));
        assertTrue(e.getMessage().contains("ALTER TABLE " + PG.qualified(table + "_claims")
                + " ADD COLUMN IF NOT EXISTS ttl_ms bigint NOT NULL;"), e.getMessage());
        assertTrue(e.getMessage().contains("CREATE INDEX CONCURRENTLY IF NOT EXISTS \"" + table + "_exp_at\""),
                "the index is still named beside the column: " + e.getMessage());
    }

    /**
     * An index missing from an existing table is built with CREATE INDEX CONCURRENTLY, outside any transaction,
     * so writes go on while it is built. Here the build waits for another session's open write transaction on
     * the table (as every index build must); a plain CREATE INDEX would wait holding its queue position for a
     * SHARE lock, and every write after it would queue behind it.
     */
    @Test
    void anIndexAddedToAnExistingTableNeverBlocksWrites() throws Exception {
        String table = PG.newTable();
        PostgresStore first = PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .build());
        first.apply("held", AtomicOperation.failure(), Policy.builder().failureThreshold(100).build(), 1);
        first.apply("written", AtomicOperation.failure(), Policy.builder().failureThreshold(100).build(), 1);
        PgTestSupport.exec("DROP INDEX " + PG.qualified(table + "_exp_at"));
        CompletableFuture<PostgresStore> second;
        try (Connection x = PgTestSupport.dataSource().getConnection()) {
            x.setAutoCommit(false);
            try (Statement st = x.createStatement()) {
                st.execute("UPDATE " + PG.qualified(table) + " SET updated_at = clock_timestamp() WHERE key = 'held'");
            }
            second = CompletableFuture.supplyAsync(() -> PostgresStore.builder(PgTestSupport.dataSource())
                    .schema(PG.name()).table(table).build());
            assertTrue(PgTestSupport.eventually(() -> indexBuildWaiting(table)), "the index build started");
            for (int i = 2; i <= 4; i++) {
                long t0 = System.nanoTime();
                assertEquals(i, first.apply("written", AtomicOperation.failure(), Policy.builder().failureThreshold(100).build(), i)
                        .state().failures());
                long took = (System.nanoTime() - t0) / 1_000_000;
                // a write queued behind the build would wait for its row lock until lock_timeout and fail; below
                // that, the time is the machine's (over 500 ms seen on a loaded build)
                assertTrue(took < Timeouts.DEFAULT_LOCK_MILLIS, "a write waited " + took + " ms for the index build");
            }
            assertFalse(second.isDone(), "the build still waits for the open transaction");
            x.rollback();
        }
        PG.keep(second.get(30, TimeUnit.SECONDS));
        assertEquals(1, count("SELECT count(*) FROM pg_index i WHERE i.indexrelid = to_regclass(?) AND i.indisvalid",
                PG.qualified(table + "_exp_at")), "the index is built and valid");
    }

    /** Whether a backend builds the index of the table (and waits, as it must, for the open transaction). */
    private static boolean indexBuildWaiting(String table) {
        try {
            return count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%CREATE INDEX%' AND query LIKE ? "
                    + "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()", "%" + table + "_exp_at%") > 0;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ 4. claims no store could have made

    /**
     * A claim whose expiry no claim of the store can have (infinity, or decades ahead for a claim made with a
     * ttl of a few hundred milliseconds) would block every trial of its key silently. It is malformed: a store
     * error naming the key, reported to the breaker's onStoreError, and it counts no longer than the ttl it was
     * made with.
     */
    @Test
    void aClaimWithAnImpossibleExpiryIsAStoreErrorAndLivesNoLongerThanItsTtl() throws Exception {
        String table = PG.newTable();
        PostgresStore s = PG.keep(PostgresStore.builder(PgTestSupport.dataSource()).schema(PG.name()).table(table)
                .purgeInterval(Duration.ZERO).build());
        // the ttl the claims are made with: long enough that the next claim comes within it on a loaded machine
        long ttlMillis = 3_000;
        for (String expiry : List.of("'infinity'", "clock_timestamp() + interval '50 years'")) {
            String k = "garbage " + expiry;
            s.claimTrial(k, 1, Duration.ofMillis(ttlMillis)).orElseThrow();
            update("UPDATE " + PG.qualified(table + "_claims") + " SET expires_at = " + expiry
                    + " WHERE key_hash = sha256(convert_to(?, 'UTF8'))", k);
            long t0 = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> s.claimTrial(k, 1, Duration.ofSeconds(5)),
                    expiry + ": a claim no store makes must not block the key silently");
            assertTrue(e.getMessage().contains("'" + k + "'") && e.getMessage().contains("claim"), e.getMessage());
            assertTrue(PgTestSupport.eventually(() -> claims(s, k)), expiry + ": the claim counted longer than its ttl");
            assertTrue((System.nanoTime() - t0) / 1_000_000 < ttlMillis + 5_000);
            s.purgeExpired();
            assertEquals(0, count("SELECT count(*) FROM " + PG.qualified(table + "_claims") + " WHERE expires_at = "
                    + "'infinity' OR expires_at > clock_timestamp() + interval '1 year'"), "the clean-up deletes it");
        }

        // Through a breaker: the error reaches onStoreError, and under ALLOW the trial runs on the instance's slot.
        String op = "breaker-op";
        s.apply(op, AtomicOperation.failure(), Policy.builder().failureThreshold(1).resetTimeout(Duration.ofMillis(1)).jitter(0).build(), System.currentTimeMillis() - 60_000);
        s.claimTrial(op, 1, Duration.ofMinutes(1)).orElseThrow();
        update("UPDATE " + PG.qualified(table + "_claims") + " SET expires_at = 'infinity'");
        List<String> errors = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().store(s).closeStore(false).failureThreshold(1)
                .resetTimeout(Duration.ofMillis(1)).jitter(0).storeErrorPolicy(StoreErrorPolicy.ALLOW)
                .onStoreError((o, t) -> errors.add(t.getMessage())).build()) {
            assertEquals("ran", b.execute(op, () -> "ran"));
        }
        assertTrue(errors.stream().anyMatch(m -> m.contains("'" + op + "'") && m.contains("claim")), errors.toString());
        assertEquals(BreakerStatus.CLOSED, s.get(op).map(st -> st.open() ? BreakerStatus.OPEN : BreakerStatus.CLOSED)
                .orElseThrow(), "the trial's success closed the breaker");
    }

    /** Whether a claim of {@code k} is granted now (given back at once). */
    private static boolean claims(PostgresStore s, String k) {
        try {
            Optional<String> t = s.claimTrial(k, 1, Duration.ofSeconds(5));
            t.ifPresent(token -> s.releaseTrial(k, token));
            return t.isPresent();
        } catch (StoreException stillMalformed) {
            return false;
        }
    }

    // ------------------------------------------------------------------ 3. one bound per breaker call

    /**
     * A store of either kind with the default bounds but the given lockTimeout and statementTimeout (a URI store's
     * driver then gets a socketTimeout above them, so every wait ends by the server's timeouts these tests are
     * about).
     */
    private PostgresStore store(String kind, String table, long lockMillis, long statementMillis) {
        return PG.keep(kind.equals("URI") ? PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table="
                + table + "&lockTimeoutMillis=" + lockMillis + "&statementTimeoutMillis=" + statementMillis))
                : PostgresStore.builder(PG.keep(PgTestSupport.pool(8))).schema(PG.name()).table(table)
                .lockTimeout(Duration.ofMillis(lockMillis)).statementTimeout(Duration.ofMillis(statementMillis))
                .build());
    }

    /** Holds the row lock of {@code key} in an open transaction of a connection of its own until closed. */
    private static Connection holdRow(String table, String key) throws Exception {
        Connection c = PgTestSupport.dataSource().getConnection();
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + PG.qualified(table)
                + " WHERE key_hash = sha256(convert_to(?, 'UTF8')) FOR UPDATE")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), "no row to hold for " + key);
            }
        }
        return c;
    }

    /**
     * A store opened from a URI whose statementTimeout is longer than the driver's default socketTimeout (2 s):
     * the socket must outlast the statement, or the driver gives up on the connection while the server still
     * waits for the lock, and a held row fails the call as a broken connection (SQLSTATE 08006, the connection
     * lost) instead of by its lock_timeout.
     */
    @Test
    void aUriStoreWaitsItsLockTimeoutEvenWhenItOutlastsTheDefaultSocketTimeout() throws Exception {
        String table = PG.newTable();
        PostgresStore s = PG.keep(PostgresStore.open(PgTestSupport.urlWith("schema=" + PG.name() + "&table=" + table
                + "&lockTimeoutMillis=2500&statementTimeoutMillis=3000")));
        s.apply("held", AtomicOperation.failure(), Policy.builder().failureThreshold(1).build(),
                System.currentTimeMillis());
        try (Connection held = holdRow(table, "held")) {
            StoreException e = assertThrows(StoreException.class,
                    () -> s.claimTrial("held", 1, Duration.ofSeconds(30)));
            assertTrue(e.getMessage().contains("lock_timeout of"), e.getMessage());
            held.rollback();
        }
    }

    /**
     * A half-open trial needs its key's row twice, for the claim and for the outcome. With another session holding
     * the row, under ALLOW, the claim waits its lock budget and fails, the call runs on the instance's slot, and
     * the outcome's write fails after a probe: the breaker call waits one bound, not two lock timeouts. The
     * outcome's error names the probe it was given; and as the server's lock_timeout is a floor on each wait, a
     * second full wait makes the call last at least 2 x lockTimeout, whatever the load, while the probe leaves the
     * round trips 0.8 x lockTimeout of room below that. A lockTimeout of 2 s makes that room 1.6 s.
     */
    @ParameterizedTest
    @ValueSource(strings = {"URI", "user DataSource"})
    void aHalfOpenTrialOnAHeldRowWaitsOneBoundInAll(String kind) throws Exception {
        String table = PG.newTable();
        long lockMillis = 2_000;
        long probeMillis = new LockWaits(Timeouts.DEFAULTS.withLock(lockMillis)).probeMillis();
        PostgresStore s = store(kind, table, lockMillis, lockMillis + 1_000);
        String op = "trial";
        s.apply(op, AtomicOperation.failure(), Policy.builder().failureThreshold(1).build(), System.currentTimeMillis() - 60_000);
        List<String> errors = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = CircuitBreaker.builder().store(s).closeStore(false).failureThreshold(1)
                .resetTimeout(Duration.ofMillis(1)).jitter(0).storeErrorPolicy(StoreErrorPolicy.ALLOW)
                .onStoreError((o, t) -> errors.add(t.getMessage())).build();
             Connection held = holdRow(table, op)) {
            assertEquals("warm", b.execute("warm-up", () -> "warm")); // the pool's connections, the engine's classes
            long t0 = System.nanoTime();
            assertEquals("ran", b.execute(op, () -> "ran"));
            long took = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("[" + kind + "] a half-open trial on a held row took " + took + " ms (two full waits "
                    + "take at least " + 2 * lockMillis + " ms); store errors: " + errors);
            assertEquals(2, errors.size(), "the claim and the outcome each met the held row: " + errors);
            errors.forEach(m -> assertTrue(m.contains("lock_timeout of"), m));
            Matcher outcome = Pattern.compile("lock_timeout of (\\d+) ms")
                    .matcher(errors.get(1));
            assertTrue(outcome.find() && Long.parseLong(outcome.group(1)) <= probeMillis, "the outcome's write "
                    + "must wait at most a probe (" + probeMillis + " ms) on a row the claim found held: " + errors.get(1));
            assertTrue(took < 2 * lockMillis, "the trial waited " + took + " ms on the held row: two full lock "
                    + "waits of " + lockMillis + " ms");
            held.rollback();
        }
        assertTrue(s.claimTrial(op, 1, Duration.ofSeconds(5)).isPresent(), "once the row is free, the key works again");
    }

    /**
     * Several sessions queued on a held row: a waiter queued behind another waits twice inside one statement
     * (for the tuple lock, then for the holder), each wait timed separately by lock_timeout, so only the
     * statement timeout caps the sum. Here the test's own session, with no lock_timeout, waits first and holds the
     * tuple lock; six breaker calls on three stores (statementTimeout 3 x lockTimeout, so that only the store's
     * own cap can end a statement within its budget) queue behind it, and once all six are seen queued the test
     * lets half a lockTimeout pass and cancels its waiter. The tuple lock then goes to a queued statement, which
     * starts waiting for the holder:
     * <ul>
     * <li>with its statement_timeout capped at what is left of the budget plus a slack, every statement ends by
     * lockTimeout + slack after it began, which is at most lockTimeout / 2 + slack after the cancel: the reply's
     * round trip has lockTimeout / 2 - slack of room (1.44 s with lockTimeout 3 s);</li>
     * <li>a statement allowed to wait twice waits a fresh lockTimeout for the holder after the cancel, and as the
     * server's lock_timeout is a floor on each wait, its call ends at least lockTimeout after the cancel,
     * whatever the load.</li>
     * </ul>
     * So every call must end less than lockTimeout after the cancel, and every store error names the lock bound.
     */
    @Test
    void breakerCallsQueuedOnAHeldRowEachEndWithinTheBound() throws Exception {
        String table = PG.newTable();
        String op = "queued";
        long lockMillis = 3_000;
        List<PostgresStore> stores = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            stores.add(store(i % 2 == 0 ? "URI" : "user DataSource", table, lockMillis, 3 * lockMillis));
        }
        stores.get(0).apply(op, AtomicOperation.failure(), Policy.builder().failureThreshold(1_000_000).build(), 1);
        List<String> errors = new CopyOnWriteArrayList<>();
        List<Long> endNanos = new CopyOnWriteArrayList<>();
        List<CircuitBreaker> breakers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        String tupleWaiters = "SELECT count(*) FROM pg_locks WHERE locktype = 'tuple' AND NOT granted"
                + " AND relation = ?::regclass";
        try (Connection held = holdRow(table, op);
             Connection first = PgTestSupport.dataSource().getConnection();
             Connection watcher = PgTestSupport.dataSource().getConnection()) {
            for (PostgresStore s : stores) {
                CircuitBreaker b = CircuitBreaker.builder().store(s).closeStore(false).failureThreshold(1_000_000)
                        .storeErrorPolicy(StoreErrorPolicy.ALLOW).onStoreError((o, t) -> errors.add(t.getMessage()))
                        .build();
                breakers.add(b);
                for (int t = 0; t < 2; t++) {
                    assertEquals("warm", b.execute("warm-up", () -> "warm")); // the pool's connections, the classes
                }
            }
            first.setAutoCommit(false);
            int firstPid;
            try (Statement st = first.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT pg_backend_pid(), set_config('lock_timeout', '0', true),"
                            + " set_config('statement_timeout', '0', true)")) {
                rs.next();
                firstPid = rs.getInt(1);
            }
            CompletableFuture<Void> firstWait = CompletableFuture.runAsync(() -> {
                try (PreparedStatement ps = first.prepareStatement("SELECT 1 FROM " + PG.qualified(table)
                        + " WHERE key_hash = sha256(convert_to(?, 'UTF8')) FOR UPDATE")) {
                    ps.setString(1, op);
                    ps.executeQuery().close();
                } catch (java.sql.SQLException cancelled) {
                    // cancelled by the test, as intended
                }
            });
            assertTrue(PgTestSupport.eventually(() -> countOn(watcher,
                    "SELECT count(*) FROM pg_locks WHERE pid = ? AND NOT granted", firstPid) == 1),
                    "the test's session waits for the held row");
            assertEquals(1, countOn(watcher, "SELECT count(*) FROM pg_locks WHERE pid = ? AND granted"
                    + " AND locktype = 'tuple'", firstPid), "the test's session holds the tuple lock");
            for (CircuitBreaker b : breakers) {
                for (int t = 0; t < 2; t++) {
                    Thread th = new Thread(() -> {
                        try {
                            b.execute(op, () -> {
                                throw new IllegalStateException("the dependency failed (expected)");
                            });
                        } catch (IllegalStateException expected) {
                            // the call's own failure; its record met the held row
                        }
                        endNanos.add(System.nanoTime());
                    });
                    th.start();
                    threads.add(th);
                }
            }
            assertTrue(PgTestSupport.eventually(() -> !endNanos.isEmpty()
                            || countOn(watcher, tupleWaiters, PG.qualified(table)) == 6),
                    "the six calls queue behind the test's session");
            assertTrue(endNanos.isEmpty(), "a call ended before all six were queued: " + errors);
            Thread.sleep(lockMillis / 2);
            long cancelNanos = System.nanoTime();
            try (PreparedStatement ps = watcher.prepareStatement("SELECT pg_cancel_backend(?)")) {
                ps.setInt(1, firstPid);
                ps.executeQuery().close();
            }
            for (Thread th : threads) {
                th.join(10 * lockMillis);
            }
            firstWait.get(10, TimeUnit.SECONDS);
            first.rollback();
            held.rollback();
            long worst = endNanos.stream().mapToLong(e -> (e - cancelNanos) / 1_000_000).max().orElseThrow();
            System.out.println("6 calls on 3 stores queued on a held row behind a session cancelled after "
                    + lockMillis / 2 + " ms: the last ended " + worst + " ms after the cancel (a second full wait "
                    + "ends at least " + lockMillis + " ms after it), " + errors.size() + " store errors, "
                    + errors.stream().filter(m -> m.contains("55P03")).count() + " of them 55P03 (lock_timeout), "
                    + errors.stream().filter(m -> m.contains("57014")).count() + " 57014 (statement_timeout)");
            assertEquals(6, endNanos.size(), "every call ended");
            assertEquals(6, errors.size(), "every call's record met the held row: " + errors);
            errors.forEach(m -> assertTrue(m.contains("lock_timeout of"), m));
            assertTrue(worst < lockMillis, "a call ended " + worst + " ms after the cancel: its statement waited "
                    + "a full lock_timeout of " + lockMillis + " ms for the holder after the tuple lock");
        } finally {
            breakers.forEach(CircuitBreaker::close);
        }
    }

    /** The single number {@code sql} (with {@code args}) answers on {@code c}. */
    private static long countOn(Connection c, String sql, Object... args) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

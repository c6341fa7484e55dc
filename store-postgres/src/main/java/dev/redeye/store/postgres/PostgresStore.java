package dev.redeye.store.postgres;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.StateCodec;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.Transitions;
import dev.redeye.api.TrialClaims;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} on PostgreSQL with every capability: {@link AtomicRecording}, {@link TrialClaims},
 * {@link AtomicTransitions} and {@link TransitionFeed}.
 *
 * <h2>How it works</h2>
 * Every atomic operation is one short transaction on one connection: lock the key's row
 * ({@code SELECT ... FOR UPDATE}, creating it with {@code INSERT ... ON CONFLICT DO NOTHING} when it does
 * not exist yet), apply the shared {@link Transitions} rule in Java (to
 * {@link BreakerState#initial(long)} of the database clock in microseconds when the key has no live state, so
 * versions never go backwards across delete or expiry), write the row only if the state changed, and on a
 * transition {@code pg_notify} the event in the same transaction, so it is delivered at commit, in version
 * order for one key, and never for a rolled-back change. No lock is ever held during a user's call. Serialization
 * failures and deadlocks (SQLSTATE 40001, 40P01), which occur only when the connection's default isolation
 * is stricter than READ COMMITTED, are retried a bounded number of times. Trial claims are rows with a
 * random token and an expiry judged by the database clock, counted under the key's row lock. A state is
 * written with {@link Policy#stateTtl()} (capped at ~100 years) as its clean-up expiry, except a forced
 * state, which is written without expiry until a write makes it unforced again. The
 * transition feed is one dedicated {@code LISTEN} connection per store instance, opened with the first
 * subscription (see {@link #subscribe}). The stored layout is documented in the
 * {@linkplain dev.redeye.store.postgres package description} and shipped as {@code schema.sql}.
 *
 * <h2>Use</h2>
 * <pre>{@code
 * HikariDataSource pool = new HikariDataSource(config);   // your pool, your credentials, your TLS
 * Store store = PostgresStore.builder(pool).schema("app").table("redeye_breakers").build();
 * }</pre>
 * or {@code Stores.open("postgresql://user@db.example:5432/app?schema=app")} through
 * {@link PostgresStoreProvider}. The store never closes a {@link DataSource} or {@link Jdbi} it was given.
 *
 * <h2>Cost</h2>
 * {@link #get} is one indexed {@code SELECT}; an atomic operation is one transaction of three or four
 * statements on one pooled connection; a transition adds one {@code pg_notify}. Each call borrows one
 * connection from the data source for its duration, so pass a pooled {@link DataSource} in production.
 *
 * <p>Thread-safe. Every backend failure is reported as {@link StoreException}; after {@link #close()} every
 * method throws {@link StoreException} at once.
 */
public final class PostgresStore implements Store, AtomicRecording, TrialClaims, AtomicTransitions,
        TransitionFeed {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresStore.class);

    /** The layout code of rows this version writes. */
    static final int LAYOUT = 1;
    /** The layout code of a lock row that carries no state (it exists to hold trial claims). */
    static final int LAYOUT_LOCK_ROW = 0;
    /** Event lines longer than this travel by reference through the events table (NOTIFY caps at 8000). */
    static final int MAX_INLINE_PAYLOAD = 4000;
    /** The NOTIFY payload prefix of an event stored in the events table. */
    static final String REF_PREFIX = "ref:";
    /** Durations beyond ~100 years are capped, so {@code ttl.toMillis()} never overflows. */
    private static final long MAX_TTL_MILLIS = Duration.ofDays(36_500).toMillis();
    private static final int PURGE_BATCH = 1000;
    /**
     * The {@code expires_at} a state write stores: {@code ttl} milliseconds from now by the database clock,
     * or NULL (never expires) when the bound ttl is NULL, which is how a forced state is written.
     */
    private static final String EXPIRES_AT = "clock_timestamp() + CAST(? AS bigint) * interval '1 millisecond'";

    /**
     * The database clock in microseconds since the epoch: the version base of a key's new life (contract v2;
     * see {@link RawRow#versionBase()}).
     */
    static final String NOW_MICROS = "CAST(floor(extract(epoch FROM clock_timestamp()) * 1000000) AS bigint)";

    private static final String STATE_COLUMNS = "layout, failures, last_failure_at, open, opened_at, "
            + "open_count, error_rate, samples, trial_successes, forced, version, "
            + "(" + Sql.EXPIRED + ") AS expired, " + NOW_MICROS + " AS now_micros";

    private final Jdbi jdbi;
    private final TableNames names;
    private final int maxAttempts;
    private final PgFeed feed;
    private final AutoCloseable owned;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final String selectState;
    private final String selectStateForUpdate;
    private final String insertLockRow;
    private final String updateState;
    private final String upsertState;
    private final String deleteState;
    private final String deleteExpiredClaims;
    private final String countClaims;
    private final String insertClaim;
    private final String deleteClaim;
    private final String deleteAllClaims;
    private final String insertEvent;
    private final String pruneEvents;
    private final String lockExpired;
    private final String purgeLocked;

    private PostgresStore(Builder b) {
        this.jdbi = b.jdbi;
        this.names = new TableNames(b.schema, b.table);
        this.maxAttempts = b.maxAttempts;
        this.owned = b.owned;
        String t = names.states;
        selectState = "SELECT " + STATE_COLUMNS + " FROM " + t + " WHERE key_hash = ?";
        selectStateForUpdate = selectState + " FOR UPDATE";
        insertLockRow = "INSERT INTO " + t + " (key_hash, key, layout, expires_at) VALUES (?, ?, "
                + LAYOUT_LOCK_ROW + ", clock_timestamp()) ON CONFLICT (key_hash) DO NOTHING";
        updateState = "UPDATE " + t + " SET layout = " + LAYOUT + ", failures = ?, last_failure_at = ?, "
                + "open = ?, opened_at = ?, open_count = ?, error_rate = ?, samples = ?, trial_successes = ?, "
                + "forced = ?, version = ?, expires_at = " + EXPIRES_AT + ", "
                + "updated_at = clock_timestamp() WHERE key_hash = ?";
        upsertState = "INSERT INTO " + t + " (key_hash, key, layout, failures, last_failure_at, open, opened_at, "
                + "open_count, error_rate, samples, trial_successes, forced, version, expires_at, updated_at) "
                + "VALUES (?, ?, " + LAYOUT + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                + EXPIRES_AT + ", clock_timestamp()) "
                + "ON CONFLICT (key_hash) DO UPDATE SET layout = EXCLUDED.layout, failures = EXCLUDED.failures, "
                + "last_failure_at = EXCLUDED.last_failure_at, open = EXCLUDED.open, "
                + "opened_at = EXCLUDED.opened_at, open_count = EXCLUDED.open_count, "
                + "error_rate = EXCLUDED.error_rate, samples = EXCLUDED.samples, "
                + "trial_successes = EXCLUDED.trial_successes, forced = EXCLUDED.forced, "
                + "version = EXCLUDED.version, expires_at = EXCLUDED.expires_at, "
                + "updated_at = EXCLUDED.updated_at";
        deleteState = "DELETE FROM " + t + " WHERE key_hash = ?";
        deleteExpiredClaims = "DELETE FROM " + names.claims
                + " WHERE key_hash = ? AND expires_at <= clock_timestamp()";
        countClaims = "SELECT count(*) FROM " + names.claims + " WHERE key_hash = ?";
        insertClaim = "INSERT INTO " + names.claims + " (key_hash, token, expires_at) "
                + "VALUES (?, ?, clock_timestamp() + ? * interval '1 millisecond')";
        deleteClaim = "DELETE FROM " + names.claims + " WHERE key_hash = ? AND token = ?";
        deleteAllClaims = "DELETE FROM " + names.claims + " WHERE key_hash = ?";
        insertEvent = "INSERT INTO " + names.events + " (line) VALUES (?) RETURNING id";
        pruneEvents = "DELETE FROM " + names.events + " WHERE created_at < clock_timestamp() - interval '10 minutes'";
        lockExpired = "SELECT encode(key_hash, 'hex') FROM " + t + " WHERE " + Sql.EXPIRED + " "
                + "LIMIT " + PURGE_BATCH + " FOR UPDATE SKIP LOCKED";
        purgeLocked = "DELETE FROM " + t + " s WHERE s.key_hash IN (SELECT decode(x, 'hex') FROM unnest(?::text[]) x) "
                + "AND " + Sql.expired("s") + " AND NOT EXISTS (SELECT 1 FROM " + names.claims
                + " c WHERE c.key_hash = s.key_hash AND c.expires_at > clock_timestamp())";
        this.feed = new PgFeed(jdbi, names);
    }

    /**
     * A builder over a user-supplied {@link DataSource} (ideally a pool such as HikariCP). The store borrows
     * one connection per call and one for the feed, and never closes the data source.
     *
     * @param dataSource where connections come from; its connections must be PostgreSQL JDBC connections
     * @return a builder with the defaults: schema {@code public}, table {@code redeye_breakers}
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return new Builder(Jdbi.create(dataSource));
    }

    /**
     * A builder over a user-supplied {@link Jdbi}. The store uses {@code jdbi.open()} and transactions
     * only (no plugins or mappers are registered on it) and never closes it. Every call runs on a handle of
     * its own, so a call made inside the caller's own Jdbi transaction is never part of it: breaker state
     * survives the rollback of the business transaction that failed.
     *
     * @param jdbi where connections come from
     * @return a builder with the defaults: schema {@code public}, table {@code redeye_breakers}
     * @throws NullPointerException if {@code jdbi} is null
     */
    public static Builder builder(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        return new Builder(jdbi);
    }

    /**
     * Opens a store from a {@code postgresql://} or {@code jdbc:postgresql://} URI, exactly as
     * {@code Stores.open(uri)} does through {@link PostgresStoreProvider} (which documents the parameters),
     * with the concrete type. The store owns its small connection pool and closes it in {@link #close()}.
     *
     * @param uri the store URI; its password never appears in a message or log line
     * @return a new store; the caller closes it
     * @throws IllegalArgumentException if the URI is malformed
     * @throws StoreException           if the database cannot be reached or the tables cannot be created
     */
    public static PostgresStore open(String uri) {
        return PostgresStoreProvider.openStore(uri);
    }

    /**
     * The DDL a store with these names runs on start ({@code schema.sql} with the names filled in), for teams
     * that create tables through their own migrations.
     *
     * @param schema the schema name, as for {@link Builder#schema(String)}
     * @param table  the table name, as for {@link Builder#table(String)}
     * @return the DDL, several statements separated by semicolons
     * @throws IllegalArgumentException if a name is not a plain SQL identifier (see {@link Builder#table})
     * @throws NullPointerException     if a name is null
     */
    public static String schemaSql(String schema, String table) {
        return new TableNames(schema, table).ddl();
    }

    /**
     * The schema this store's tables live in.
     *
     * @return the schema name as configured
     */
    public String schema() {
        return names.schema;
    }

    /**
     * The name of this store's state table (claims and events tables add {@code _claims} and {@code _events}).
     *
     * @return the table name as configured
     */
    public String table() {
        return names.table;
    }

    /**
     * The NOTIFY channel this store publishes transitions on and listens to.
     *
     * @return {@code redeye:<schema>.<table>}, or {@code redeye:} and a hash when that exceeds 63 bytes
     */
    public String channel() {
        return names.channel;
    }

    // ---------------------------------------------------------------- Store

    @Override
    public Optional<BreakerState> get(String key) {
        byte[] h = keyHash(key);
        ensureOpen();
        RawRow row = run("get", key, () -> ownHandle(handle -> selectRow(handle, selectState, h)));
        return row == null ? Optional.empty() : Optional.ofNullable(row.stateOrNull(key));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Writes every field (upsert) and sets the row to expire {@code ttl} from now by the database clock;
     * an expired state reads as absent. A forced state ({@link BreakerState#forced()}) is stored with no
     * expiry ({@code expires_at} NULL) whatever {@code ttl} says, which is still validated: while forced, every
     * call is rejected at the gate and nothing would refresh a ttl (TCK rule R1.9). Publishes nothing: a
     * plain write is not a transition.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code ttl} is not positive or the key cannot be stored (see
     *                                  {@linkplain dev.redeye.store.postgres the package description})
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        byte[] h = keyHash(key);
        Objects.requireNonNull(state, "state");
        Long expiry = expiryMillis(state, ttlMillis(ttl));
        ensureOpen();
        run("put", key, () -> ownHandle(handle -> {
            int i = 0;
            var u = handle.createUpdate(upsertState).bind(i++, h).bind(i++, key);
            i = bindState(u, i, state);
            return u.bind(i, expiry).execute();
        }));
    }

    /** {@inheritDoc} Deleting the state row also deletes the key's trial claims (foreign key cascade). */
    @Override
    public void delete(String key) {
        byte[] h = keyHash(key);
        ensureOpen();
        run("delete", key, () -> ownHandle(handle -> handle.createUpdate(deleteState).bind(0, h).execute()));
    }

    // ---------------------------------------------------------------- AtomicRecording

    @Override
    public StateChange recordFailure(String key, Policy policy, long now) {
        Objects.requireNonNull(policy, "policy");
        return transact("recordFailure", key, policy, now, false, s -> Transitions.recordFailure(s, policy, now));
    }

    @Override
    public StateChange recordSuccess(String key, Policy policy, long now) {
        Objects.requireNonNull(policy, "policy");
        return transact("recordSuccess", key, policy, now, false, s -> Transitions.recordSuccess(s, policy, now));
    }

    @Override
    public StateChange recordOutcome(String key, boolean success, Policy policy, long now) {
        Objects.requireNonNull(policy, "policy");
        return transact("recordOutcome", key, policy, now, false,
                s -> Transitions.recordOutcome(s, success, policy, now));
    }

    // ---------------------------------------------------------------- AtomicTransitions

    @Override
    public StateChange trialSucceeded(String key, long trialVersion, Policy policy, long now) {
        Objects.requireNonNull(policy, "policy");
        return transact("trialSucceeded", key, policy, now, false, s -> Transitions.trialSucceeded(s, trialVersion, policy, now));
    }

    @Override
    public StateChange trialFailed(String key, long trialVersion, Policy policy, long now) {
        Objects.requireNonNull(policy, "policy");
        return transact("trialFailed", key, policy, now, false, s -> Transitions.trialFailed(s, trialVersion, policy, now));
    }

    @Override
    public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(policy, "policy");
        return transact("force", key, policy, now, status == BreakerStatus.CLOSED,
                s -> Transitions.force(s, status, policy, now));
    }

    // ---------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc}
     *
     * <p>One transaction: lock the key's row, delete its expired claims, count the live ones, insert a claim
     * with a random UUID token if fewer than {@code permits} remain. Expiry is judged by the database clock
     * ({@code clock_timestamp()}), never the JVM's.
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        byte[] h = keyHash(key);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be >= 1, was " + permits);
        }
        long ttlMillis = ttlMillis(ttl);
        ensureOpen();
        return run("claimTrial", key, () -> ownTransaction(handle -> {
            boolean inserted = lockRow(handle, key, h, null).insertedNow;
            handle.createUpdate(deleteExpiredClaims).bind(0, h).execute();
            long live = handle.createQuery(countClaims).bind(0, h).mapTo(Long.class).one();
            if (live >= permits) {
                if (inserted) {
                    handle.createUpdate(deleteState).bind(0, h).execute();
                }
                return Optional.<String>empty();
            }
            String token = UUID.randomUUID().toString();
            handle.createUpdate(insertClaim).bind(0, h).bind(1, token).bind(2, ttlMillis).execute();
            return Optional.of(token);
        }));
    }

    /** {@inheritDoc} One {@code DELETE ... WHERE key_hash = ? AND token = ?}. */
    @Override
    public void releaseTrial(String key, String token) {
        byte[] h = keyHash(key);
        Objects.requireNonNull(token, "token");
        ensureOpen();
        run("releaseTrial", key, () -> ownHandle(handle ->
                handle.createUpdate(deleteClaim).bind(0, h).bind(1, token).execute()));
    }

    // ---------------------------------------------------------------- maintenance

    /**
     * Deletes every row whose state has expired (and lock rows) that holds no live trial claim, with their
     * expired claims, and events older than ten minutes. A forced state never expires, so its row is never
     * deleted here (see the {@linkplain dev.redeye.store.postgres package description}). Expired rows already read as absent, so this only
     * reclaims space: run it now and then (a scheduler, {@code pg_cron}), from any one instance. Works in
     * transactions of up to 1,000 rows, each locking its rows first ({@code FOR UPDATE SKIP LOCKED}) so that
     * a claim being made concurrently is never deleted; safe to run concurrently with every other call.
     *
     * @return the number of state and lock rows deleted
     * @throws StoreException if the database fails or the store is closed
     */
    public int purgeExpired() {
        ensureOpen();
        int total = 0;
        while (true) {
            ensureOpen();
            int[] batch = run("purgeExpired", "", () -> ownTransaction(handle -> {
                // Statement 1 locks the candidates (a claim in flight holds its row and is skipped); statement
                // 2 then sees, in its own snapshot, every claim committed before those locks.
                List<String> locked = handle.createQuery(lockExpired).mapTo(String.class).list();
                if (locked.isEmpty()) {
                    return new int[] {0, 0};
                }
                int deleted = handle.createUpdate(purgeLocked).bindByType(0, locked.toArray(new String[0]),
                        String[].class).execute();
                return new int[] {locked.size(), deleted};
            }));
            total += batch[1];
            if (batch[0] < PURGE_BATCH) {
                break;
            }
            if (batch[1] == 0) {
                break; // a full batch of rows that all hold live claims: leave them for a later run
            }
        }
        run("purgeExpired", "", () -> ownHandle(handle -> handle.createUpdate(pruneEvents).execute()));
        return total;
    }

    // ---------------------------------------------------------------- TransitionFeed

    /**
     * {@inheritDoc}
     *
     * <p>The first subscription opens this store's dedicated {@code LISTEN} connection (borrowed from the
     * data source for the store's lifetime) and starts one daemon thread; it returns once the connection
     * listens, so every transition committed after this call returns is delivered. Later subscriptions share
     * both. When the connection is lost, every subscriber gets {@code onGap}, and the thread reconnects with
     * exponential backoff (100 ms up to 10 s) and listens again.
     *
     * @throws NullPointerException if an argument is null
     * @throws StoreException       if the store is closed or the first connection cannot be opened
     */
    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        ensureOpen();
        return feed.subscribe(listener, onGap);
    }

    /** The backend pid of the feed's LISTEN connection, or -1 when none is open (for tests and operators). */
    int feedBackendPid() {
        return feed.backendPid();
    }

    /** Whether the feed thread is running (for tests). */
    boolean feedThreadAlive() {
        return feed.threadAlive();
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Stops the feed thread (waiting for it, at most a few seconds), closes the feed connection and makes
     * every later call throw {@link StoreException}. Idempotent. Never closes the user's {@link DataSource}
     * or {@link Jdbi}; calls already running finish normally.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            feed.close();
            closeOwned();
            LOG.debug("closed PostgreSQL store on {}", names.states);
        }
    }

    private void closeOwned() {
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                LOG.warn("closing the connection pool of {} failed", names.states, e);
            }
        }
    }

    @Override
    public String toString() {
        return "PostgresStore[" + names.states + (closed.get() ? ", closed]" : "]");
    }

    // ---------------------------------------------------------------- internals

    private void ensureOpen() {
        if (closed.get()) {
            throw new StoreException("PostgresStore on " + names.states + " is closed");
        }
    }

    /**
     * One atomic read-modify-write, as described in the class Javadoc. A call that changes nothing writes
     * nothing and takes no lock when it can tell from a plain read: it is then linearized at that read.
     */
    private StateChange transact(String op, String key, Policy policy, long now, boolean dropClaims,
                                 Function<BreakerState, StateChange> rule) {
        byte[] h = keyHash(key);
        ensureOpen();
        return run(op, key, () -> ownTransaction(handle -> {
            LockedRow row = lockRow(handle, key, h, dropClaims ? null : rule);
            if (row.unchanged != null) {
                return row.unchanged;
            }
            // An absent (or expired) state starts a new life above every version the key had (contract v2).
            StateChange change = rule.apply(row.state != null ? row.state : BreakerState.initial(row.versionBase));
            if (change.changed()) {
                var u = handle.createUpdate(updateState);
                int i = bindState(u, 0, change.state());
                Long expiry = expiryMillis(change.state(), cappedMillis(policy.stateTtlMillis()));
                u.bind(i++, expiry).bind(i, h).execute();
            } else if (row.insertedNow && !dropClaims) {
                // Defensive: lockRow inserts only when the absent state needs a write, but never leave a
                // lock row behind for a call that stored nothing.
                handle.createUpdate(deleteState).bind(0, h).execute();
            }
            if (dropClaims) {
                handle.createUpdate(deleteAllClaims).bind(0, h).execute();
            }
            if (change.isTransition()) {
                publish(handle, change.toEvent(key, policy, now));
            }
            return change;
        }));
    }

    /**
     * Locks the key's row for this transaction, creating a lock row (layout 0) if there is none, and returns
     * the stored state (null for a lock row or an expired state). When {@code noWriteCheck} is given and the
     * key has no row, it is applied to the absent state first: if that changes nothing, nothing is inserted
     * and the unchanged result is returned (the call is linearized at the read that found no row).
     */
    private LockedRow lockRow(Handle handle, String key, byte[] h, Function<BreakerState, StateChange> noWriteCheck) {
        boolean inserted = false;
        for (int attempt = 0; attempt < 5; attempt++) {
            RawRow row = selectRow(handle, selectStateForUpdate, h);
            if (row != null) {
                return new LockedRow(row.stateOrNull(key), row.versionBase(), inserted, null);
            }
            if (noWriteCheck != null) {
                StateChange onAbsent = noWriteCheck.apply(null);
                if (!onAbsent.changed()) {
                    return new LockedRow(null, 0, false, onAbsent);
                }
            }
            // READ COMMITTED: the next statement sees a row another transaction committed meanwhile; a
            // concurrent uncommitted insert makes this wait for it, then do nothing.
            inserted = handle.createUpdate(insertLockRow).bind(0, h).bind(1, key).execute() == 1;
        }
        throw new StoreException("the row of '" + abbreviate(key) + "' was deleted five times while being "
                + "locked; giving up");
    }

    /**
     * Runs {@code callback} on a handle of its own. Never {@code jdbi.withHandle}: Jdbi reuses a handle
     * already open on the calling thread, which would put the store's work inside the caller's transaction
     * (a failure recorded while the caller's transaction rolls back would vanish with it).
     */
    private <R> R ownHandle(HandleCallback<R, RuntimeException> callback) {
        try (Handle handle = jdbi.open()) {
            return callback.withHandle(handle);
        }
    }

    /** Runs {@code callback} in a transaction on a handle of its own (see {@link #ownHandle}). */
    private <R> R ownTransaction(HandleCallback<R, RuntimeException> callback) {
        try (Handle handle = jdbi.open()) {
            return handle.inTransaction(callback);
        }
    }

    private RawRow selectRow(Handle handle, String sql, byte[] h) {
        return handle.createQuery(sql).bind(0, h).map((rs, ctx) -> RawRow.read(rs)).findOne().orElse(null);
    }

    private void publish(Handle handle, TransitionEvent event) {
        String line = StateCodec.eventToLine(event);
        String payload = line;
        if (line.length() > MAX_INLINE_PAYLOAD) {
            long id = handle.createQuery(insertEvent).bind(0, line).mapTo(Long.class).one();
            handle.createUpdate(pruneEvents).execute();
            payload = REF_PREFIX + id;
        }
        handle.createQuery("SELECT pg_notify(?, ?)::text").bind(0, names.channel).bind(1, payload)
                .mapTo(String.class).one();
    }

    private static int bindState(org.jdbi.v3.core.statement.Update u, int i, BreakerState s) {
        u.bind(i++, s.failures()).bind(i++, s.lastFailureAt()).bind(i++, s.open()).bind(i++, s.openedAt())
                .bind(i++, s.openCount()).bind(i++, s.errorRate()).bind(i++, s.samples())
                .bind(i++, s.trialSuccesses()).bind(i++, s.forced()).bind(i++, s.version());
        return i;
    }

    /**
     * Runs one database call, wrapping every failure in {@link StoreException} and retrying serialization
     * failures and deadlocks up to {@code maxAttempts} times in all.
     */
    private <T> T run(String op, String key, Supplier<T> body) {
        for (int attempt = 1; ; attempt++) {
            try {
                return body.get();
            } catch (StoreException e) {
                throw e;
            } catch (RuntimeException e) {
                SQLException sql = Sql.find(e);
                String state = sql == null ? null : sql.getSQLState();
                boolean retryable = Sql.isRetryable(state);
                if (retryable && attempt < maxAttempts) {
                    ensureOpen();
                    pauseBeforeRetry(attempt);
                    continue;
                }
                String reason = sql != null ? sql.getMessage() : e.toString();
                throw new StoreException("PostgreSQL " + op + " of '" + abbreviate(key) + "' on " + names.states
                        + " failed" + (retryable ? " after " + attempt + " attempts" : "")
                        + (state == null ? "" : " [SQLSTATE " + state + "]") + ": " + reason, e);
            }
        }
    }

    private static void pauseBeforeRetry(int attempt) {
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(1, 1 + 5L * attempt));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while retrying a serialization failure", e);
        }
    }

    /**
     * SHA-256 of the key's UTF-8 bytes: the row's primary key.
     *
     * @throws NullPointerException     if key is null
     * @throws IllegalArgumentException if the key holds U+0000 or an unpaired surrogate, which PostgreSQL
     *                                  text cannot store
     */
    static byte[] keyHash(String key) {
        Objects.requireNonNull(key, "key");
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '\0') {
                throw new IllegalArgumentException("operation name contains U+0000 at index " + i
                        + ", which PostgreSQL text cannot store");
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("operation name has an unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("operation name has an unpaired surrogate at index " + i);
            }
        }
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    private static long ttlMillis(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        return ttl.compareTo(Duration.ofMillis(MAX_TTL_MILLIS)) > 0 ? MAX_TTL_MILLIS : Math.max(1, ttl.toMillis());
    }

    /**
     * A ttl in milliseconds capped at ~100 years: PostgreSQL refuses a larger interval or timestamp
     * ("interval out of range"), which would fail every write of a policy whose stateTtl means "forever".
     */
    static long cappedMillis(long ttlMillis) {
        return Math.max(1, Math.min(ttlMillis, MAX_TTL_MILLIS));
    }

    /**
     * The ttl bound into {@link #EXPIRES_AT} for a write of {@code state}: null (no expiry) for a forced state,
     * which a store never expires, else {@code ttlMillis}.
     */
    static Long expiryMillis(BreakerState state, long ttlMillis) {
        return state.forced() ? null : ttlMillis;
    }

    static String abbreviate(String key) {
        return key.length() <= 60 ? key : key.substring(0, 60) + "...(" + key.length() + " chars)";
    }

    /** A state row as read, before validation. */
    private record RawRow(int layout, int failures, long lastFailureAt, boolean open, long openedAt, int openCount,
                          double errorRate, long samples, int trialSuccesses, boolean forced, long version,
                          boolean expired, long nowMicros) {

        static RawRow read(ResultSet rs) throws SQLException {
            return new RawRow(rs.getInt(1), rs.getInt(2), rs.getLong(3), rs.getBoolean(4), rs.getLong(5),
                    rs.getInt(6), rs.getDouble(7), rs.getLong(8), rs.getInt(9), rs.getBoolean(10), rs.getLong(11),
                    rs.getBoolean(12), rs.getLong(13));
        }

        /**
         * The version a new life of the key starts at when this row holds no live state: the database clock in
         * microseconds (every earlier life started at an earlier clock and moved by one per transition, each a
         * committed transaction, far longer than a microsecond), and at least the version of an expired state
         * still in the row.
         */
        long versionBase() {
            return layout == LAYOUT && expired ? Math.max(nowMicros, version) : nowMicros;
        }

        /**
         * The stored state, or null for a lock row or an expired state (never a forced one, see
         * {@link Sql#EXPIRED}).
         *
         * @throws StoreException if the row has an unknown layout or breaks an invariant of BreakerState
         */
        BreakerState stateOrNull(String key) {
            if (layout == LAYOUT_LOCK_ROW) {
                return null;
            }
            if (layout != LAYOUT) {
                throw new StoreException("malformed breaker state for '" + abbreviate(key)
                        + "': unknown row layout " + layout + " (this version reads layout " + LAYOUT + ")");
            }
            if (expired) {
                return null;
            }
            try {
                return new BreakerState(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples,
                        trialSuccesses, forced, version);
            } catch (IllegalArgumentException e) {
                throw new StoreException("malformed breaker state for '" + abbreviate(key) + "': "
                        + e.getMessage(), e);
            }
        }
    }

    /**
     * A locked row: its state (null if none), the version a new life starts at when there is none, and
     * whether this transaction created the row; or, with {@code unchanged} set, the result of a call that
     * found no row and needs none.
     */
    private record LockedRow(BreakerState state, long versionBase, boolean insertedNow, StateChange unchanged) {
    }

    /**
     * Builder for {@link PostgresStore}; every setter validates its argument at once. Not thread-safe.
     */
    public static final class Builder {
        private final Jdbi jdbi;
        private String schema = "public";
        private String table = "redeye_breakers";
        private boolean createTables = true;
        private int maxAttempts = 5;
        private AutoCloseable owned;

        private Builder(Jdbi jdbi) {
            this.jdbi = jdbi;
        }

        /** A resource the store closes last in {@link PostgresStore#close()} (the provider's own pool). */
        Builder closeWithStore(AutoCloseable resource) {
            this.owned = Objects.requireNonNull(resource, "resource");
            return this;
        }

        /**
         * The schema of the tables (default {@code public}); created if missing when
         * {@link #createTables(boolean)} is on.
         *
         * @param schema a plain SQL identifier
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException unless it matches {@code [A-Za-z_][A-Za-z0-9_]*} and has at most
         *                                  63 characters
         */
        public Builder schema(String schema) {
            this.schema = TableNames.validate("schema", schema, TableNames.MAX_IDENTIFIER);
            return this;
        }

        /**
         * The state table's name (default {@code redeye_breakers}); the claims and events tables are named
         * after it with {@code _claims} and {@code _events}, and the NOTIFY channel derives from schema and
         * table. Names are always double-quoted, so their case is kept.
         *
         * @param table a plain SQL identifier
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException unless it matches {@code [A-Za-z_][A-Za-z0-9_]*} and has at most
         *                                  56 characters
         */
        public Builder table(String table) {
            this.table = TableNames.validate("table", table, TableNames.MAX_TABLE);
            return this;
        }

        /**
         * Whether {@link #build()} creates the schema and the tables when they are missing (default on).
         * Turn it off when a migration tool owns the schema ({@link PostgresStore#schemaSql}).
         *
         * @param createTables whether to create missing tables
         * @return this builder
         */
        public Builder createTables(boolean createTables) {
            this.createTables = createTables;
            return this;
        }

        /**
         * How many times in all an atomic operation runs when it meets a serialization failure or deadlock
         * (default 5).
         *
         * @param maxAttempts attempts in all, at least 1
         * @return this builder
         * @throws IllegalArgumentException if below 1
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Builds the store; with {@link #createTables(boolean)} on, first creates the schema and tables that
         * are missing (one short transaction, serialized across processes by an advisory lock).
         *
         * @return a new store; the caller closes it
         * @throws StoreException if the database cannot be reached or the DDL fails
         */
        public PostgresStore build() {
            PostgresStore store = new PostgresStore(this);
            if (createTables) {
                try {
                    store.createTables();
                } catch (RuntimeException e) {
                    store.close();
                    throw e;
                }
            }
            return store;
        }
    }

    private void createTables() {
        run("create tables", "", () -> ownTransaction(handle -> {
            // Skip the DDL when every table exists, so a role without CREATE privilege can use existing tables.
            var q = handle.createQuery("SELECT to_regnamespace(?) IS NULL, to_regclass(?) IS NULL "
                            + "OR to_regclass(?) IS NULL OR to_regclass(?) IS NULL")
                    .bind(0, TableNames.quote(names.schema)).bind(1, names.states).bind(2, names.claims)
                    .bind(3, names.events)
                    .map((rs, ctx) -> new boolean[] {rs.getBoolean(1), rs.getBoolean(2)}).one();
            boolean schemaMissing = q[0];
            boolean tableMissing = q[1];
            if (tableMissing) {
                // Concurrent CREATE ... IF NOT EXISTS can still collide in the catalog; serialize them.
                handle.createQuery("SELECT pg_advisory_xact_lock(hashtext(?))::text").bind(0, names.states)
                        .mapTo(String.class).one();
                try (Statement st = handle.getConnection().createStatement()) {
                    st.execute(schemaMissing ? names.ddl() : names.tablesDdl());
                } catch (SQLException e) {
                    throw new StoreException("cannot create the tables of " + names.states + ": "
                            + e.getMessage(), e);
                }
                LOG.info("created the redeye tables {} (and _claims, _events) where missing", names.states);
            }
            return null;
        }));
    }
}

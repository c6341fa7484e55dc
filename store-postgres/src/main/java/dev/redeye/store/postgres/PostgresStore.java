package dev.redeye.store.postgres;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.Arguments;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} on PostgreSQL with every capability: {@link AtomicUpdates}, {@link TrialClaims},
 * {@link TransitionFeed}, {@link QuorumState} (a state's contributions are stored in its row, layout 3) and
 * {@link OutcomeBatches} (a batch is folded by {@link dev.redeye.spi.AtomicOperation#apply} under the row lock, one
 * transaction for the whole batch).
 *
 * <h2>How it works</h2>
 * Every atomic operation is one short transaction on one connection that holds the key's row lock for one
 * round trip: round trip 1 locks the row ({@code SELECT ... FOR UPDATE}, with the transaction's timeouts set
 * in the same round trip), the shared {@link Transitions} rule runs in Java (on
 * {@link BreakerState#initial(long)} of the database clock in microseconds when the key has no live state, so
 * versions never go backwards across delete or expiry), and round trip 2 sends the {@code UPDATE}, on a
 * transition the {@code pg_notify}, and the {@code COMMIT} together, so an event is delivered at commit, in
 * version order for one key, and never for a rolled-back change. A key without a row takes one more round trip
 * to insert its placeholder row (layout 0) and lock it. No lock is ever held during a user's call.
 * Serialization failures and deadlocks (SQLSTATE 40001, 40P01), which occur only when the connection's default
 * isolation is stricter than READ COMMITTED, are retried a bounded number of times; a call whose connection
 * the server had closed is retried once on a fresh one, unless its commit may have reached the server. Trial
 * claims are rows with a random token and an expiry judged by the database clock, counted under the key's row
 * lock. A state is written with {@link Policy#stateTtl()} (capped at ~100 years) as its clean-up expiry,
 * except a pinned state ({@link BreakerState#pinned()}: forced, or with a stored mode), which is written without
 * expiry until a write unpins it again. The
 * transition feed is one dedicated {@code LISTEN} connection per store instance, opened with the first
 * subscription (see {@link #subscribe}). The stored layout is documented in the
 * {@linkplain dev.redeye.store.postgres package description} and shipped as {@code schema.sql}.
 *
 * <h2>Bounds</h2>
 * Every call sets, for its own transaction and in the round trip of its first statement,
 * {@code lock_timeout} (what is left of the breaker call's lock budget, {@link Builder#lockTimeout}, default 1 s:
 * one budget for every wait on a row lock another session holds), {@code statement_timeout} (1.5 s) and
 * {@code idle_in_transaction_session_timeout} (2 s: a client stalled while holding a row lock loses its session,
 * and the lock, on the server); see {@link Builder#timeoutsPerTransaction(boolean)} to set the last two on your
 * sessions instead. A call that hits one
 * fails with {@link StoreException} naming the bound. Client-side bounds (how long to wait for a connection,
 * for a reply from a server that vanished) belong to the {@link DataSource}: a store opened from a URI
 * configures its own pool ({@link PostgresStoreProvider}).
 *
 * <h2>Clean-up</h2>
 * A daemon thread of the store ({@code redeye-pg-janitor <table>}) runs {@link #purgeExpired()} about once a
 * {@link Builder#purgeInterval(Duration) purgeInterval} (default 1 minute): expired states, placeholder rows
 * without live claims, expired claims and feed events older than ten minutes, in batches that skip rows other
 * sessions hold ({@code SKIP LOCKED}), along indexes on the expiry columns. {@link #close()} stops it.
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
 * {@link #get}, {@link #put}, {@link #delete} and {@link #releaseTrial} are one round trip each; an atomic
 * operation and {@link #claimTrial} two (three for a key without a row); a call that changes nothing ends with
 * a {@code ROLLBACK} instead of writing. Each call borrows one connection from the data source for its
 * duration, so pass a pooled {@link DataSource} in production. The hot path is plain JDBC with prepared
 * statements (see the {@linkplain dev.redeye.store.postgres package description} for why).
 *
 * <p>Thread-safe. Every backend failure is reported as {@link StoreException}; after {@link #close()} every
 * method throws {@link StoreException} at once.
 */
public final class PostgresStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed, QuorumState,
        OutcomeBatches, OperationListing {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresStore.class);

    /** Event lines longer than this travel by reference through the events table (NOTIFY caps at 8000). */
    static final int MAX_INLINE_PAYLOAD = 4000;
    /** The NOTIFY payload prefix of an event stored in the events table. */
    static final String REF_PREFIX = "ref:";
    /** Events rows older than this many minutes are purged. */
    static final int EVENT_RETENTION_MINUTES = 10;
    /** Durations beyond ~100 years are capped, so {@code ttl.toMillis()} never overflows. */
    static final long MAX_TTL_MILLIS = Duration.ofDays(36_500).toMillis();
    /** The database clock in microseconds: the version base of a key's new life. */
    static final String NOW_MICROS = StateSql.NOW_MICROS;
    /** One digest per thread: {@code MessageDigest.getInstance} costs a provider lookup on every call. */
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    });
    /** The bounds and default of {@link Builder#pollFeed(Duration)}'s interval (the URI's pollIntervalMillis). */
    static final long MIN_POLL_MILLIS = 10;
    static final long MAX_POLL_MILLIS = 60_000;
    static final long DEFAULT_POLL_MILLIS = 250;
    /** The default {@link Builder#purgeInterval(Duration)}. */
    static final Duration DEFAULT_PURGE_INTERVAL = Duration.ofMinutes(1);

    private final TableNames names;
    private final Timeouts timeouts;
    private final StateSql sql;
    private final SqlRunner runner;
    private final RowTransactions rows;
    private final LockWaits lockWaits;
    private final PgFeed feed;
    private final Janitor janitor;
    private final AutoCloseable owned;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final int prefixStatements;

    private PostgresStore(Builder b) {
        this.names = new TableNames(b.schema, b.table);
        this.timeouts = b.timeouts;
        this.owned = b.owned;
        this.sql = new StateSql(names, timeouts);
        this.prefixStatements = timeouts.perTransaction ? 1 : 0;
        this.lockWaits = new LockWaits(timeouts);
        this.runner = new SqlRunner(b.source, names.states, timeouts, lockWaits, b.maxAttempts, b.onBrokenConnection,
                this::ensureOpen);
        this.rows = new RowTransactions(sql, names.channel, lockWaits, b.synchronousCounts);
        this.feed = new PgFeed(b.source, names, sql, b.pollFeedMillis);
        this.janitor = b.purgeIntervalMillis > 0
                ? new Janitor(names.states, b.purgeIntervalMillis, this::purgeExpired) : null;
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
        return new Builder(SqlRunner.Source.of(dataSource));
    }

    /**
     * A builder over a user-supplied {@link Jdbi}, for applications that configure their connections there.
     * The store takes connections through {@code jdbi.open()} only (one handle per call, its connection used
     * with plain JDBC; no plugins or mappers are registered on it) and never closes it. Every call runs on a
     * handle of its own, so a call made inside the caller's own Jdbi transaction is never part of it: breaker
     * state survives the rollback of the business transaction that failed. Opening a handle costs a little more
     * per call than {@link #builder(DataSource)} over the same pool.
     *
     * @param jdbi where connections come from
     * @return a builder with the defaults: schema {@code public}, table {@code redeye_breakers}
     * @throws NullPointerException if {@code jdbi} is null
     */
    public static Builder builder(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        return new Builder(SqlRunner.Source.of(jdbi));
    }

    /** A builder over the store's own connections (the provider's pool). */
    static Builder builder(SqlRunner.Source source) {
        return new Builder(Objects.requireNonNull(source, "source"));
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
        return new PostgresStoreProvider().open(uri);
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

    /**
     * {@inheritDoc}
     *
     * <p>By primary key ({@code key_hash}, an index range scan): the cursor is the hex primary key of the last row
     * of the page before. Each entry carries its state, read with the name. A row this store cannot read (see
     * {@link #get}) is listed by name without a state, so that one malformed row does not end the listing;
     * {@code get} of it reports the fault.
     */
    @Override
    public Page page(String cursor, int limit) {
        OperationListing.checkLimit(limit);
        byte[] after = cursor == null ? new byte[0] : listingCursor(cursor);
        ensureOpen();
        return runner.call("page", "", (c, a) -> {
            try (PreparedStatement ps = c.prepareStatement(sql.list)) {
                ps.setBytes(1, after);
                ps.setInt(2, limit);
                List<OperationListing.Entry> out = new ArrayList<>();
                String last = null;
                int rows = 0;
                try (ResultSet rs = SqlRunner.query(ps, prefixStatements)) {
                    while (rs.next()) {
                        rows++;
                        StoredRow row = StoredRow.readWithoutClock(rs);
                        String key = rs.getString(16);
                        last = rs.getString(17);
                        BreakerState state;
                        try {
                            state = row.stateOrNull(key);
                        } catch (StoreException malformed) {
                            out.add(OperationListing.Entry.nameOnly(key));
                            continue;
                        }
                        if (state != null) {
                            out.add(new OperationListing.Entry(key, state));
                        }
                    }
                }
                return new Page(out, rows < limit ? null : last);
            }
        });
    }

    /** The primary key a listing cursor (64 hex digits) names. */
    private static byte[] listingCursor(String cursor) {
        if (cursor.length() != 64 || !cursor.chars().allMatch(ch -> Character.digit(ch, 16) >= 0)) {
            throw new IllegalArgumentException("not a listing cursor of a PostgreSQL store (64 hex digits): '"
                    + OperationNames.abbreviate(cursor) + "'");
        }
        byte[] out = new byte[32];
        for (int i = 0; i < 32; i++) {
            out[i] = (byte) Integer.parseInt(cursor.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        byte[] h = keyHash(key);
        ensureOpen();
        StoredRow row = runner.call("get", key, (c, a) -> {
            try (PreparedStatement ps = c.prepareStatement(sql.get)) {
                ps.setBytes(1, h);
                try (ResultSet rs = SqlRunner.query(ps, prefixStatements)) {
                    return rs.next() ? StoredRow.readWithoutClock(rs) : null;
                }
            }
        });
        return row == null ? Optional.empty() : Optional.ofNullable(row.stateOrNull(key));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Writes every field (upsert) and sets the row to expire {@code ttl} from now by the database clock;
     * an expired state reads as absent. A pinned state ({@link BreakerState#pinned()}: forced, or with a stored
     * mode) is stored with no expiry ({@code expires_at} NULL) whatever {@code ttl} says, which is still validated:
     * while forced, every call is rejected at the gate and nothing would refresh a ttl (TCK rule R1.9), and an
     * operator's mode must not lapse back to the policy's when a ttl passes. Publishes nothing: a
     * plain write is not a transition. Never overwrites a row of another layout (one this store did not write,
     * or a newer version's): that is a {@link StoreException}, and the row is left as it was.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code ttl} is not positive or the key cannot be stored (see
     *                                  {@linkplain dev.redeye.store.postgres the package description})
     * @throws StoreException           if the database fails, or the key's row has another layout
     */
    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        byte[] h = keyHash(key);
        Objects.requireNonNull(state, "state");
        Long expiry = expiryMillis(state, ttlMillis(ttl));
        ensureOpen();
        int written = runner.call("put", key, (c, a) -> {
            try (PreparedStatement ps = c.prepareStatement(sql.put)) {
                int i = lockWaits.bind(ps, a, key);
                ps.setBytes(i++, h);
                ps.setString(i++, key);
                i = RowTransactions.bindState(ps, i, state);
                RowTransactions.bindNullableLong(ps, i, expiry);
                int n = SqlRunner.update(ps, 1);
                lockWaits.granted(a, key);
                return n;
            }
        });
        if (written == 0) {
            get(key); // throws, naming what the row is
            throw new StoreException("put of '" + OperationNames.abbreviate(key) + "' on " + names.states
                    + " was refused: the key's row has a layout this store does not write over");
        }
    }

    /**
     * {@inheritDoc} Deleting the state row also deletes the key's trial claims (foreign key cascade). Deletes
     * a row of any layout: this is how a row the store refuses to read is cleared.
     */
    @Override
    public void delete(String key) {
        byte[] h = keyHash(key);
        ensureOpen();
        runner.call("delete", key, (c, a) -> {
            try (PreparedStatement ps = c.prepareStatement(sql.delete)) {
                ps.setBytes(lockWaits.bind(ps, a, key), h);
                int n = SqlRunner.update(ps, 1);
                lockWaits.granted(a, key);
                return n;
            }
        });
    }

    // ---------------------------------------------------------------- AtomicUpdates

    /**
     * {@inheritDoc} One transaction of two round trips: lock (or create) the key's row and read it, apply the
     * rule in Java, then write it (with {@code pg_notify} for a transition, and the claims' removal for a forced
     * close) and commit.
     */
    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(policy, "policy");
        return transact(operation.kind().method(), key, policy, now, operation.removesClaims(),
                st -> operation.apply(st, policy, now));
    }

    // ---------------------------------------------------------------- TrialClaims

    /**
     * {@inheritDoc}
     *
     * <p>One transaction of two round trips: lock the key's row and count its live claims, then insert a claim
     * with a random UUID token and commit if fewer than {@code permits} are live. Expiry is judged by the
     * database clock ({@code clock_timestamp()}), never the JVM's.
     */
    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        byte[] h = keyHash(key);
        Arguments.atLeast("permits", permits, 1);
        long ttlMillis = ttlMillis(ttl);
        ensureOpen();
        return runner.transaction("claimTrial", key, (c, a) -> rows.claim(c, a, key, h, permits, ttlMillis));
    }

    /** {@inheritDoc} One {@code DELETE ... WHERE key_hash = ? AND token = ?}. */
    @Override
    public void releaseTrial(String key, String token) {
        byte[] h = keyHash(key);
        Objects.requireNonNull(token, "token");
        ensureOpen();
        runner.call("releaseTrial", key, (c, a) -> {
            try (PreparedStatement ps = c.prepareStatement(sql.release)) {
                ps.setBytes(1, h);
                ps.setString(2, token);
                return SqlRunner.update(ps, prefixStatements);
            }
        });
    }

    // ---------------------------------------------------------------- maintenance

    /**
     * Deletes every row whose state has expired (and placeholder rows) that holds no live trial claim, every
     * expired claim, and feed events older than ten minutes. A pinned state (forced, or with a stored mode) never
     * expires, so its row is never deleted here (see the {@linkplain dev.redeye.store.postgres package description}), and neither is a row of
     * another layout. Expired rows already read as absent, so this only reclaims space. The store's clean-up
     * thread runs it every {@link Builder#purgeInterval(Duration) purgeInterval}; call it yourself only if you
     * turned that off. Works in transactions of up to 1,000 rows, each locking its rows first
     * ({@code FOR UPDATE SKIP LOCKED}) so that a claim being made concurrently is never deleted; safe to run
     * concurrently with every other call, from any number of instances.
     *
     * @return the number of state and placeholder rows deleted
     * @throws StoreException if the database fails or the store is closed
     */
    public int purgeExpired() {
        ensureOpen();
        int total = 0;
        while (true) {
            ensureOpen();
            int[] batch = runner.transaction("purgeExpired", "", (c, a) -> purgeBatch(c));
            total += batch[1];
            if (batch[0] < StateSql.PURGE_BATCH || batch[1] == 0) {
                // the last batch, or a full batch of rows that all hold live claims: leave those for later
                break;
            }
        }
        while (runner.call("purgeExpired", "", (c, a) -> execute(c, sql.purgeClaims)) >= StateSql.PURGE_BATCH) {
            ensureOpen();
        }
        while (runner.call("purgeExpired", "", (c, a) -> execute(c, sql.purgeOutlivedClaims)) >= StateSql.PURGE_BATCH) {
            ensureOpen();
        }
        runner.call("purgeExpired", "", (c, a) -> execute(c, sql.pruneEvents));
        return total;
    }

    /** One batch: {candidates locked, rows deleted}. */
    private int[] purgeBatch(Connection c) throws SQLException {
        // Statement 1 locks the candidates (a claim in flight holds its row and is skipped); statement 2 then
        // sees, in its own snapshot, every claim committed before those locks.
        List<String> locked = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.lockExpired);
             ResultSet rs = SqlRunner.query(ps, prefixStatements)) {
            while (rs.next()) {
                locked.add(rs.getString(1));
            }
        }
        if (locked.isEmpty()) {
            c.rollback();
            return new int[] {0, 0};
        }
        try (PreparedStatement ps = c.prepareStatement(sql.purgeLocked)) {
            ps.setArray(1, c.createArrayOf("text", locked.toArray()));
            return new int[] {locked.size(), ps.executeUpdate()};
        }
    }

    private int execute(Connection c, String text) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(text)) {
            return SqlRunner.update(ps, prefixStatements);
        }
    }

    // ---------------------------------------------------------------- TransitionFeed

    /**
     * {@inheritDoc}
     *
     * <p>The first subscription opens this store's dedicated {@code LISTEN} connection (borrowed from the
     * data source for the store's lifetime) and starts one daemon thread; it returns once the connection
     * listens, so every transition committed after this call returns is delivered. Later subscriptions share
     * both. When the connection is lost (or, silent for two seconds, fails a one-second validation), every
     * subscriber gets {@code onGap}, and the thread reconnects with exponential backoff (100 ms up to 10 s)
     * and listens again. A subscriber that sets the thread's interrupt flag, or throws an {@link Error}, does
     * not stop the feed (the latter costs every subscriber an {@code onGap}).
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

    /** Whether the clean-up thread is running (for tests). */
    boolean janitorAlive() {
        return janitor != null && janitor.alive();
    }

    /** The bounds this store sets (for tests and {@link #toString()}). */
    Timeouts timeouts() {
        return timeouts;
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Stops the feed and clean-up threads (waiting for each, at most a few seconds), closes the feed connection
     * and makes every later call throw {@link StoreException}. Idempotent. Never closes the user's
     * {@link DataSource} or {@link Jdbi}; calls already running finish normally.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (janitor != null) {
                janitor.close();
            }
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
        return "PostgresStore[" + names.states + ", " + timeouts + (closed.get() ? ", closed]" : "]");
    }

    // ---------------------------------------------------------------- internals

    private void ensureOpen() {
        if (closed.get()) {
            throw new StoreException("PostgresStore on " + names.states + " is closed");
        }
    }

    /** One atomic read-modify-write, as described in the class Javadoc ({@link RowTransactions#apply}). */
    private StateChange transact(String op, String key, Policy policy, long now, boolean dropClaims,
                                 Function<BreakerState, StateChange> rule) {
        byte[] h = keyHash(key);
        ensureOpen();
        return runner.transaction(op, key, (c, a) -> rows.apply(c, a, key, h, policy, now, dropClaims, rule));
    }

    /**
     * SHA-256 of the key's UTF-8 bytes: the row's primary key.
     *
     * @throws NullPointerException     if key is null
     * @throws IllegalArgumentException if the key holds U+0000 or an unpaired surrogate, which PostgreSQL
     *                                  text cannot store
     */
    static byte[] keyHash(String key) {
        OperationNames.requireWellFormed(key);
        int nul = key.indexOf('\0');
        if (nul >= 0) {
            throw new IllegalArgumentException("operation name contains U+0000 at index " + nul
                    + ", which PostgreSQL text cannot store");
        }
        return SHA256.get().digest(key.getBytes(StandardCharsets.UTF_8));
    }

    private static long ttlMillis(Duration ttl) {
        Arguments.positive("ttl", ttl);
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
     * The ttl bound into a state write's {@code expires_at} for {@code state}: null (no expiry) for a pinned state
     * ({@link BreakerState#pinned()}: forced, or with a stored mode), which a store never expires, else
     * {@code ttlMillis}.
     */
    static Long expiryMillis(BreakerState state, long ttlMillis) {
        return state.pinned() ? null : ttlMillis;
    }

    /**
     * Builder for {@link PostgresStore}; every setter validates its argument at once. Not thread-safe.
     */
    public static final class Builder {
        private final SqlRunner.Source source;
        private String schema = "public";
        private String table = "redeye_breakers";
        private boolean createSchema = true;
        private int maxAttempts = 5;
        private Timeouts timeouts = Timeouts.DEFAULTS;
        private long purgeIntervalMillis = DEFAULT_PURGE_INTERVAL.toMillis();
        private boolean synchronousCounts;
        private long pollFeedMillis;
        private AutoCloseable owned;
        private Runnable onBrokenConnection = () -> { };

        private Builder(SqlRunner.Source source) {
            this.source = source;
        }

        /** A resource the store closes last in {@link PostgresStore#close()} (the provider's own pool). */
        Builder closeWithStore(AutoCloseable resource) {
            this.owned = Objects.requireNonNull(resource, "resource");
            return this;
        }

        /** Told when a connection turned out dead, before the call's one retry (the provider evicts its pool). */
        Builder onBrokenConnection(Runnable action) {
            this.onBrokenConnection = Objects.requireNonNull(action, "action");
            return this;
        }

        /**
         * The schema of the tables (default {@code public}); created if missing when
         * {@link #createSchema(boolean)} is on.
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
         * Whether {@link #build()} creates the schema, the tables, their columns and their indexes when they are
         * missing (default on, for a first run and for upgrades). On: missing tables are created with their indexes
         * in one transaction (serialized across instances by an advisory lock; needs {@code CREATE} on the schema,
         * or on the database for a missing schema); columns missing from a table an earlier version made are added
         * as {@code schema.sql} declares them ({@code ALTER TABLE ... ADD COLUMN IF NOT EXISTS}, needs ownership of
         * the table; the table's exclusive lock is asked for in attempts of 500 ms that give way to the table's
         * calls, for up to 30 s; a NOT NULL column without a DEFAULT is added to the claims table after emptying
         * it, which may let one extra trial run per key, and fails the build on any other table that holds rows);
         * and an index missing from a table that exists is built with {@code CREATE INDEX CONCURRENTLY} outside
         * any transaction, so writes go on meanwhile. Off (a migration tool owns the schema): nothing is created;
         * the build checks that every table, column and index exists and fails with {@link StoreException} naming
         * what is missing and the statements to run (the jar's {@code dev/redeye/store/postgres/schema.sql},
         * {@link PostgresStore#schemaSql}, for missing tables; the {@code ALTER TABLE} statements for missing
         * columns).
         *
         * @param createSchema whether to create what is missing
         * @return this builder
         */
        public Builder createSchema(boolean createSchema) {
            this.createSchema = createSchema;
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
            this.maxAttempts = Arguments.atLeast("maxAttempts", maxAttempts, 1);
            return this;
        }

        /**
         * How long a breaker call waits in all for row locks another session holds (default 1 s) before its store
         * call fails with {@link StoreException}. A breaker's row is locked for one round trip by each atomic call,
         * so a longer wait means the holder is stuck; failing fast keeps an incident from queueing every instance
         * on that row. One budget, however many waits: every statement that may wait for a lock gets what is left
         * of it since its store call began as its {@code lock_timeout} (and a {@code statement_timeout} a fiftieth
         * above), and once a call's budget ran out on a row, later calls on that row wait only a tenth of it until
         * one gets the lock, so a half-open trial (claim, then outcome) waits at most about 1.2 times this in all.
         *
         * @param timeout at least 1 ms, or zero to wait without bound
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException if negative, below 1 ms but not zero, or over {@code Integer.MAX_VALUE} ms
         */
        public Builder lockTimeout(Duration timeout) {
            this.timeouts = timeouts.withLock(Timeouts.millis("lockTimeout", timeout));
            return this;
        }

        /**
         * How long one statement may run on the server ({@code statement_timeout}; default 1.5 s), lock waits
         * included.
         *
         * @param timeout at least 1 ms, or zero for no bound
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException if negative, below 1 ms but not zero, or over {@code Integer.MAX_VALUE} ms
         */
        public Builder statementTimeout(Duration timeout) {
            this.timeouts = timeouts.withStatement(Timeouts.millis("statementTimeout", timeout));
            return this;
        }

        /**
         * How long the server lets a session of the store sit idle inside its transaction before ending the
         * session ({@code idle_in_transaction_session_timeout}; default 2 s). The store's transactions are idle
         * only while the JVM runs the rule between two round trips, so this fires only for a client that
         * stalled (a long GC pause, a frozen VM) while holding a row lock: the server then releases the lock.
         *
         * @param timeout at least 1 ms, or zero for no bound
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException if negative, below 1 ms but not zero, or over {@code Integer.MAX_VALUE} ms
         */
        public Builder idleInTransactionTimeout(Duration timeout) {
            this.timeouts = timeouts.withIdleInTransaction(Timeouts.millis("idleInTransactionTimeout", timeout));
            return this;
        }

        /**
         * Whether every call sets the three timeouts for its own transaction (default on): one small
         * {@code SELECT set_config(..., true), ...} sent in the same round trip as the call's first statement,
         * ended with the transaction, so the bounds hold on any data source (also behind PgBouncer in
         * transaction mode). Turn it off only when every session of the data source already carries them, for
         * example HikariCP's {@code connectionInitSql} set to
         * {@code SET lock_timeout = 1000; SET statement_timeout = 1500; SET idle_in_transaction_session_timeout = 2000};
         * the store then sends nothing extra (it still names the configured values in error messages). A store
         * opened from a URI does exactly that with its own pool.
         *
         * @param perTransaction whether to set the timeouts on every call
         * @return this builder
         */
        public Builder timeoutsPerTransaction(boolean perTransaction) {
            this.timeouts = timeouts.perTransaction(perTransaction);
            return this;
        }

        /**
         * Whether an atomic write that is not a transition waits for the WAL flush at commit (default
         * {@code false}: it does not). Such a write is a failure counted below the threshold, a success that
         * clears failures, an error-rate sample, or a trial success short of {@code successThreshold}; by default
         * it commits with {@code synchronous_commit = off} for its own transaction only, so its {@code COMMIT}
         * returns, and the key's row lock passes to the next caller queued on it, without waiting for the disk
         * (or a synchronous standby). Transitions (they move the version and publish the event every instance
         * relies on), forced changes that drop claims, trial claims, {@code put} and {@code delete} always commit
         * with the session's own setting.
         *
         * <p>Why: the row lock is held until the commit returns. When a dependency dies, every instance's
         * failures queue on the breaker's one row, and with a flush per count the failure that opens the breaker
         * commits only after one flush per failure before it; meanwhile the fleet keeps calling the dead
         * dependency. The trade: a database crash (or a failover to an asynchronous standby) can lose the counts
         * written in its last moments (at most about three {@code wal_writer_delay}s, 600 ms by default): after
         * the crash the breaker counts a few failures again. It never loses a transition, never moves a version
         * backwards, and a transition's commit also makes every earlier count durable (the WAL is flushed in
         * order). Turn it on if your counts must survive a crash of the database.
         *
         * @param synchronousCounts whether counts wait for the WAL flush like transitions do
         * @return this builder
         */
        public Builder synchronousCounts(boolean synchronousCounts) {
            this.synchronousCounts = synchronousCounts;
            return this;
        }

        /**
         * Reads the transition feed by polling instead of {@code LISTEN} (default: {@code LISTEN}): every
         * {@code interval}, one indexed query of the events table (where every transition writes its event, in
         * the transaction that makes it) for the events after the last one read. For PgBouncer in transaction
         * mode, where {@code LISTEN} cannot work (a notification goes to whichever client holds the server
         * session then), and for fleets that share a small pool. Costs one query per interval per store, and
         * delivers within about one interval; the feed still holds one connection of the data source while
         * anyone subscribes (behind PgBouncer a client connection, which holds a server session only during each
         * poll). Stores of both kinds can share a table: every store writes both the row and the notification.
         *
         * @param interval between polls, 10 ms to 1 minute
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException if out of range
         */
        public Builder pollFeed(Duration interval) {
            Objects.requireNonNull(interval, "pollFeed");
            if (interval.compareTo(Duration.ofMillis(MIN_POLL_MILLIS)) < 0
                    || interval.compareTo(Duration.ofMillis(MAX_POLL_MILLIS)) > 0) {
                throw new IllegalArgumentException("pollFeed interval must be between " + MIN_POLL_MILLIS + " ms and "
                        + MAX_POLL_MILLIS + " ms, was " + interval);
            }
            this.pollFeedMillis = interval.toMillis();
            return this;
        }

        /**
         * How often, on average, the store's clean-up thread runs {@link PostgresStore#purgeExpired()}
         * (default 1 minute; each wait is drawn between half and one and a half of it). Zero turns the
         * thread off: then run {@code purgeExpired()} yourself now and then, or expired rows, claims and
         * feed events stay (they read as absent, but take space).
         *
         * @param interval at least 100 ms, or zero for no clean-up thread
         * @return this builder
         * @throws NullPointerException     if null
         * @throws IllegalArgumentException if negative or between zero and 100 ms
         */
        public Builder purgeInterval(Duration interval) {
            Objects.requireNonNull(interval, "purgeInterval");
            if (interval.isNegative() || (!interval.isZero() && interval.toMillis() < 100)) {
                throw new IllegalArgumentException("purgeInterval must be 0 (off) or at least 100 ms, was "
                        + interval);
            }
            this.purgeIntervalMillis = interval.isZero() ? 0 : Math.min(interval.toMillis(), Long.MAX_VALUE / 4);
            return this;
        }

        /**
         * Builds the store: creates what is missing of its tables, or with {@link #createSchema(boolean)} off
         * checks that nothing is, then starts the clean-up thread (unless {@link #purgeInterval(Duration)} is
         * zero).
         *
         * @return a new store; the caller closes it
         * @throws StoreException if the database cannot be reached, the DDL fails, or (createSchema off) the
         *                        layout is incomplete; the message names what is missing and the DDL to run
         */
        public PostgresStore build() {
            PostgresStore store = new PostgresStore(this);
            try {
                new SchemaSetup(store.names).prepare(store.runner, createSchema);
            } catch (RuntimeException e) {
                store.close();
                throw e;
            }
            if (store.janitor != null) {
                store.janitor.start();
            }
            return store;
        }
    }
}

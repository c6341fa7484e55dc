package dev.redeye.store.postgres;

/**
 * Every SQL text one store runs, built once from its validated table names (identifiers are never user
 * input, values are always bound). Several texts hold more than one statement: the driver sends all of them
 * with one Sync, so each text is one network round trip, and the statements run in order in one transaction.
 * Immutable.
 */
final class StateSql {
    /** The database clock in microseconds since the epoch. */
    static final String NOW_MICROS = "CAST(floor(extract(epoch FROM clock_timestamp()) * 1000000) AS bigint)";

    /**
     * The columns {@link StoredRow#read} reads for a plain read, in order: the state and whether it has expired
     * by the database clock.
     */
    static final String READ_COLUMNS = "layout, failures, last_failure_at, open, opened_at, open_count, "
            + "error_rate, samples, trial_successes, forced, version, sliding_window, mode, contributors, ("
            + Sql.EXPIRED + ") AS expired";

    /**
     * The columns an atomic operation reads under the row lock: {@link #READ_COLUMNS} and the database clock in
     * microseconds (the version base of a new life).
     */
    static final String STATE_COLUMNS = READ_COLUMNS + ", " + NOW_MICROS + " AS now_micros";

    /**
     * The SQL condition "this row is the store's placeholder" ({@link StoredRow#isPlaceholder()}), for the
     * table alias {@code s}.
     */
    static final String PLACEHOLDER = "s.layout = " + StoredRow.LAYOUT_PLACEHOLDER + " AND s.failures = 0 "
            + "AND s.last_failure_at = 0 AND NOT s.open AND s.opened_at = 0 AND s.open_count = 0 "
            + "AND s.error_rate = 0 AND s.samples = 0 AND s.trial_successes = 0 AND NOT s.forced AND s.version = 0 "
            + "AND s.sliding_window IS NULL AND s.mode = 0 AND s.contributors IS NULL";

    /** The SQL condition "this row holds a state of a layout this version writes", for the table alias {@code s}. */
    static final String STATE_LAYOUT = "s.layout IN (" + StoredRow.LAYOUT + ", " + StoredRow.LAYOUT_WINDOW_OR_MODE
            + ", " + StoredRow.LAYOUT_CONTRIBUTORS + ")";

    /** A state row's {@code expires_at}: a bound ttl in milliseconds from now, or NULL (never) when it is NULL. */
    private static final String EXPIRES_AT = "clock_timestamp() + CAST(? AS bigint) * interval '1 millisecond'";

    static final int PURGE_BATCH = 1000;
    /** The most events one poll of a polled feed reads. */
    static final int POLL_BATCH = 500;

    /** How an atomic write publishes its transition. */
    enum Notify {
        /** No transition: nothing is published. */
        NONE,
        /** The event goes to the events table, and its line travels as the NOTIFY payload. */
        INLINE,
        /** The event goes to the events table; its line is too long for a payload, which carries its id. */
        REF
    }

    /** The claims table, quoted, for messages. */
    final String claimsTable;
    // Plain calls, autocommit: the timeouts prefix (put and delete: the lock budget) and one statement, one round
    // trip.
    final String get;
    /**
     * A page of the listing: the {@link #READ_COLUMNS} then the name and the hex primary key of up to {@code ?}
     * rows holding a live state (no placeholder, nothing expired) after a primary key, in primary-key order.
     */
    final String list;
    final String put;
    final String delete;
    final String release;
    // Atomic operations: round trip 1 sets the lock budget and locks, the last one writes and commits.
    final String lock;
    final String createAndLock;
    final String lockForClaim;
    final String createAndLockForClaim;
    final String claim;
    /**
     * Indexed by {@link #writeIndex}: every combination of dropping claims, updating, publishing, and committing
     * without waiting for the WAL flush.
     */
    private final String[] writes = new String[2 * 2 * 2 * Notify.values().length];
    // Reading a feed event, clean-up.
    final String selectEvent;
    // The polled feed: the events after an id and the holes below it, in id order; the highest id.
    final String pollEvents;
    final String lastEventId;
    final String lockExpired;
    final String purgeLocked;
    final String purgeClaims;
    final String purgeOutlivedClaims;
    final String pruneEvents;

    StateSql(TableNames names, Timeouts timeouts) {
        String t = names.states;
        String prefix = timeouts.prefix;
        // Statements that may wait for a row lock set the call's lock budget (two parameters, see LockWaits).
        String lockPrefix = timeouts.lockPrefix;
        claimsTable = names.claims;
        String select = "SELECT " + STATE_COLUMNS + " FROM " + t + " WHERE key_hash = ?";
        // The count is a statement of its own, after the lock: its snapshot (READ COMMITTED) then holds every
        // claim committed by the transactions this one queued behind. Counted inside the locking statement, it
        // would use the snapshot taken before the wait and miss them.
        // It also finds a live claim no store made (see Sql.malformedClaim), which the claim reports.
        String selectForClaim = select + " FOR UPDATE; SELECT count(*), count(*) FILTER (WHERE " + Sql.malformedClaim("c")
                + "), (array_agg('token ' || c.token || ', created_at ' || c.created_at || ', ttl_ms ' || c.ttl_ms "
                + "|| ', expires_at ' || c.expires_at) FILTER (WHERE " + Sql.malformedClaim("c") + "))[1] FROM "
                + names.claims + " c WHERE c.key_hash = ? AND " + Sql.liveClaim("c");
        // Lock rows of a key without one: the INSERT waits for a concurrent creator and then does nothing; the
        // SELECT after it, a statement of its own, sees (and locks) whichever row now exists.
        String createPlaceholder = "INSERT INTO " + t + " (key_hash, key, layout, expires_at) VALUES (?, ?, "
                + StoredRow.LAYOUT_PLACEHOLDER + ", clock_timestamp()) ON CONFLICT (key_hash) DO NOTHING; ";
        get = prefix + "SELECT " + READ_COLUMNS + " FROM " + t + " WHERE key_hash = ?";
        list = prefix + "SELECT " + READ_COLUMNS + ", s.key, encode(s.key_hash, 'hex') FROM " + t + " s "
                + "WHERE s.key_hash > ? AND NOT (" + PLACEHOLDER + ") AND NOT (" + Sql.expired("s") + ") "
                + "ORDER BY s.key_hash LIMIT ?";
        put = lockPrefix + "INSERT INTO " + t + " AS s (key_hash, key, layout, failures, last_failure_at, open, "
                + "opened_at, open_count, error_rate, samples, trial_successes, forced, version, sliding_window, "
                + "mode, contributors, expires_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                + EXPIRES_AT
                + ", clock_timestamp()) ON CONFLICT (key_hash) DO UPDATE SET layout = EXCLUDED.layout, "
                + "failures = EXCLUDED.failures, last_failure_at = EXCLUDED.last_failure_at, open = EXCLUDED.open, "
                + "opened_at = EXCLUDED.opened_at, open_count = EXCLUDED.open_count, "
                + "error_rate = EXCLUDED.error_rate, samples = EXCLUDED.samples, "
                + "trial_successes = EXCLUDED.trial_successes, forced = EXCLUDED.forced, "
                + "version = EXCLUDED.version, sliding_window = EXCLUDED.sliding_window, mode = EXCLUDED.mode, "
                + "contributors = EXCLUDED.contributors, expires_at = EXCLUDED.expires_at, "
                + "updated_at = EXCLUDED.updated_at "
                // never over a row of another layout: 0 rows updated, reported as malformed
                + "WHERE " + STATE_LAYOUT + " OR (" + PLACEHOLDER + ")";
        delete = lockPrefix + "DELETE FROM " + t + " WHERE key_hash = ?";
        release = prefix + "DELETE FROM " + names.claims + " WHERE key_hash = ? AND token = ?";
        lock = lockPrefix + select + " FOR UPDATE";
        createAndLock = lockPrefix + createPlaceholder + select + " FOR UPDATE";
        lockForClaim = lockPrefix + selectForClaim;
        createAndLockForClaim = lockPrefix + createPlaceholder + selectForClaim;
        // Touching the key's row makes a concurrent claimer under REPEATABLE READ or SERIALIZABLE (whose snapshot
        // cannot see this claim) fail its lock with a serialization failure and retry, instead of over-granting.
        // created_at and expires_at from one reading of the clock: expires_at = created_at + ttl_ms exactly.
        claim = "UPDATE " + t + " SET updated_at = clock_timestamp() WHERE key_hash = ?; INSERT INTO " + names.claims
                + " (key_hash, token, created_at, ttl_ms, expires_at) SELECT ?, ?, x.n, x.t, "
                + "x.n + x.t * interval '1 millisecond' FROM (SELECT clock_timestamp() AS n, CAST(? AS bigint) AS t) x; "
                + "COMMIT";
        String dropClaims = "DELETE FROM " + names.claims + " WHERE key_hash = ?; ";
        String update = "UPDATE " + t + " SET layout = ?, failures = ?, "
                + "last_failure_at = ?, open = ?, opened_at = ?, open_count = ?, error_rate = ?, samples = ?, "
                + "trial_successes = ?, forced = ?, version = ?, sliding_window = ?, mode = ?, contributors = ?, "
                + "expires_at = "
                + EXPIRES_AT + ", updated_at = clock_timestamp() WHERE key_hash = ?; ";
        for (int drop = 0; drop < 2; drop++) {
            for (int upd = 0; upd < 2; upd++) {
                for (Notify n : Notify.values()) {
                    for (int async = 0; async < 2; async++) {
                        writes[writeIndex(drop == 1, upd == 1, n, async == 1)] = writeText(names,
                                drop == 1 ? dropClaims : "", upd == 1 ? update : "", n, async == 1);
                    }
                }
            }
        }
        selectEvent = "SELECT line FROM " + names.events + " WHERE id = ?";
        pollEvents = "SELECT id, line FROM " + names.events + " WHERE id > ? OR id = ANY(?) ORDER BY id LIMIT "
                + POLL_BATCH;
        lastEventId = "SELECT coalesce(max(id), 0) FROM " + names.events;
        String ours = "(" + STATE_LAYOUT + " OR (" + PLACEHOLDER + "))";
        // The clean-up statements compare with statement_timestamp(), not the volatile clock_timestamp(): only a
        // stable value can be an index condition. Rows expiring during the statement wait for the next run.
        lockExpired = prefix + "SELECT encode(s.key_hash, 'hex') FROM " + t + " s WHERE s.expires_at <= "
                + "statement_timestamp() AND NOT s.forced AND s.mode = 0 AND " + ours + " LIMIT " + PURGE_BATCH
                + " FOR UPDATE SKIP LOCKED";
        purgeLocked = "DELETE FROM " + t + " s WHERE s.key_hash IN (SELECT decode(x, 'hex') FROM unnest(?::text[]) x) "
                + "AND " + Sql.expired("s") + " AND " + ours + " AND NOT EXISTS (SELECT 1 FROM " + names.claims
                + " c WHERE c.key_hash = s.key_hash AND " + Sql.liveClaim("c") + ")";
        purgeClaims = prefix + "DELETE FROM " + names.claims + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
                + names.claims + " WHERE expires_at <= statement_timestamp() LIMIT " + PURGE_BATCH
                + " FOR UPDATE SKIP LOCKED))";
        // Claims whose expires_at is still ahead but whose ttl has run out (malformed ones): among the claims
        // not yet expired, which the index finds, few and short-lived.
        purgeOutlivedClaims = prefix + "DELETE FROM " + names.claims + " WHERE ctid = ANY(ARRAY(SELECT c.ctid FROM "
                + names.claims + " c WHERE c.expires_at > statement_timestamp() AND NOT " + Sql.liveClaim("c")
                + " LIMIT " + PURGE_BATCH + " FOR UPDATE SKIP LOCKED))";
        pruneEvents = prefix + "DELETE FROM " + names.events + " WHERE created_at < statement_timestamp() - interval '"
                + PostgresStore.EVENT_RETENTION_MINUTES + " minutes'";
    }

    private static String writeText(TableNames names, String dropClaims, String update, Notify n, boolean async) {
        StringBuilder sb = new StringBuilder(dropClaims).append(update);
        // Every transition's event goes to the events table (polled feeds read it there, in id order) and to the
        // NOTIFY channel (LISTEN feeds), so that stores of both feed kinds can share a table.
        if (n == Notify.INLINE) {
            sb.append("WITH e AS (INSERT INTO ").append(names.events).append(" (line) VALUES (?) RETURNING line) ")
                    .append("SELECT pg_notify(?, e.line) FROM e; ");
        } else if (n == Notify.REF) {
            sb.append("WITH e AS (INSERT INTO ").append(names.events).append(" (line) VALUES (?) RETURNING id) ")
                    .append("SELECT pg_notify(?, '").append(PostgresStore.REF_PREFIX).append("' || e.id) FROM e; ");
        }
        if (async) {
            // this transaction only: its COMMIT returns, and releases the row lock, without waiting for the flush
            sb.append("SET LOCAL synchronous_commit = off; ");
        }
        return sb.append("COMMIT").toString();
    }

    /**
     * The last round trip of an atomic operation: optionally drop the key's claims, optionally update the
     * locked row, optionally publish, then COMMIT. Parameters in order: the key hash (drop); the layout and the
     * thirteen state fields ({@link RowTransactions#bindState}), the ttl in ms (or NULL) and the key hash (update); the
     * event line and the channel (INLINE, REF). With {@code async}, the transaction commits with
     * {@code synchronous_commit = off} (set locally, no parameter).
     */
    String write(boolean dropClaims, boolean update, Notify notify, boolean async) {
        return writes[writeIndex(dropClaims, update, notify, async)];
    }

    private static int writeIndex(boolean dropClaims, boolean update, Notify notify, boolean async) {
        return (((dropClaims ? 1 : 0) * 2 + (update ? 1 : 0)) * Notify.values().length + notify.ordinal()) * 2
                + (async ? 1 : 0);
    }
}

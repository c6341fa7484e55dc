package dev.redeye.store.postgres;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * The atomic operations of one store as plain JDBC on a connection already in a transaction (see
 * {@link SqlRunner#transaction}). Each holds the key's row lock for one round trip plus the Java rule:
 *
 * <ol>
 * <li>round trip 1: the timeouts prefix and {@code SELECT ... FOR UPDATE} of the key's row (the driver sends
 * {@code BEGIN} with it);</li>
 * <li>only for a key without a row: insert the store's placeholder (layout 0) and lock whichever row now
 * exists, one more round trip;</li>
 * <li>the shared rule in Java, then round trip 2: the {@code UPDATE} (when the state changed), the
 * {@code pg_notify} (on a transition) and {@code COMMIT}, all in one batch; or a {@code ROLLBACK} when
 * nothing changed. A write that is not a transition commits with {@code synchronous_commit = off} unless the
 * store is built with {@code synchronousCounts(true)}.</li>
 * </ol>
 * Stateless apart from its SQL; thread-safe.
 */
final class RowTransactions {
    private static final int MAX_LOCK_ATTEMPTS = 5;

    private final StateSql sql;
    private final String channel;
    private final LockWaits lockWaits;
    /** Whether a write that is not a transition waits for the WAL flush (see {@code synchronousCounts}). */
    private final boolean synchronousCounts;

    RowTransactions(StateSql sql, String channel, LockWaits lockWaits, boolean synchronousCounts) {
        this.sql = sql;
        this.channel = channel;
        this.lockWaits = lockWaits;
        this.synchronousCounts = synchronousCounts;
    }

    /**
     * Applies {@code rule} to the key's state under its row lock and writes the result if it changed.
     *
     * @param dropClaims also delete the key's trial claims (a forced close, half-open or mode)
     * @return the rule's result; for a key without a row whose absent state the rule leaves unchanged, that
     *         result, with nothing written (the call is linearized at the read that found no row)
     * @throws StoreException if the row is malformed (nothing is written)
     */
    StateChange apply(Connection c, SqlRunner.Attempt attempt, String key, byte[] h, Policy policy, long now,
                      boolean dropClaims, Function<BreakerState, StateChange> rule) throws SQLException {
        Locked row = lock(c, attempt, key, h, false);
        if (row == null) {
            // No row, so no claims either (they reference it): a call that changes nothing stores nothing.
            StateChange onAbsent = rule.apply(null);
            if (!onAbsent.changed()) {
                c.rollback();
                return onAbsent;
            }
            row = lock(c, attempt, key, h, true);
        }
        BreakerState current = row.row.stateOrNull(key);
        // An absent (or expired) state starts a new life above every version the key had.
        StateChange change = rule.apply(current != null ? current : BreakerState.initial(row.row.versionBase()));
        if (!change.changed() && !dropClaims) {
            c.rollback();
            return change;
        }
        String line = change.isTransition() ? StateCodec.eventToLine(change.toEvent(key, policy, now)) : null;
        StateSql.Notify notify = line == null ? StateSql.Notify.NONE
                : line.length() > PostgresStore.MAX_INLINE_PAYLOAD ? StateSql.Notify.REF : StateSql.Notify.INLINE;
        // A write that is no transition (a count, a quiet clear) commits without waiting for the WAL flush, so the
        // row lock goes at once to the next caller queued on it; a transition always waits (its version and event
        // are what every instance relies on). PostgresStore.Builder#synchronousCounts explains the trade.
        boolean async = !synchronousCounts && notify == StateSql.Notify.NONE && !dropClaims;
        try (PreparedStatement ps = c.prepareStatement(sql.write(dropClaims, change.changed(), notify, async))) {
            int i = 1;
            if (dropClaims) {
                ps.setBytes(i++, h);
            }
            if (change.changed()) {
                i = bindState(ps, i, change.state());
                Long ttl = PostgresStore.expiryMillis(change.state(), PostgresStore.cappedMillis(policy.stateTtlMillis()));
                bindNullableLong(ps, i++, ttl);
                ps.setBytes(i++, h);
            }
            if (notify != StateSql.Notify.NONE) {
                ps.setString(i++, line);
                ps.setString(i, channel);
            }
            attempt.committing();
            ps.execute();
        }
        return change;
    }

    /**
     * Claims a trial permit under the key's row lock: counts the live claims (by the database clock) and
     * inserts one with a random token if fewer than {@code permits} are live.
     *
     * @throws StoreException if the row is malformed
     */
    Optional<String> claim(Connection c, SqlRunner.Attempt attempt, String key, byte[] h, int permits,
                           long ttlMillis) throws SQLException {
        Locked row = lock(c, attempt, key, h, false, true);
        if (row == null) {
            row = lock(c, attempt, key, h, true, true);
        }
        row.row.stateOrNull(key); // a malformed row is an error, never a place to claim
        if (row.malformedClaim != null) {
            // It would block every trial of the key without ever expiring by its own expires_at.
            throw new StoreException("malformed trial claim of '" + OperationNames.abbreviate(key) + "' in "
                    + sql.claimsTable + ": " + row.malformedClaim + " is no claim this store makes (expires_at must be"
                    + " created_at + ttl_ms, a ttl of 1 ms to ~100 years); it counts until created_at + ttl_ms at"
                    + " most; delete it, or reset the breaker, to free the key's trials now");
        }
        if (row.liveClaims >= permits) {
            c.rollback();
            return Optional.empty();
        }
        String token = UUID.randomUUID().toString();
        try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
            ps.setBytes(1, h);
            ps.setBytes(2, h);
            ps.setString(3, token);
            ps.setLong(4, ttlMillis);
            attempt.committing();
            ps.execute();
        }
        return Optional.of(token);
    }

    private Locked lock(Connection c, SqlRunner.Attempt attempt, String key, byte[] h, boolean create)
            throws SQLException {
        return lock(c, attempt, key, h, create, false);
    }

    /**
     * Locks the key's row: with {@code create} false, one {@code SELECT ... FOR UPDATE} (null when there is no
     * row); with {@code create} true, inserts the placeholder if there is still no row and locks whichever row
     * exists, retrying in the rare case that a concurrent creator's row was deleted in between.
     */
    private Locked lock(Connection c, SqlRunner.Attempt attempt, String key, byte[] h, boolean create,
                        boolean forClaim) throws SQLException {
        for (int tries = 0; tries < MAX_LOCK_ATTEMPTS; tries++) {
            String text = forClaim ? (create ? sql.createAndLockForClaim : sql.lockForClaim)
                    : (create ? sql.createAndLock : sql.lock);
            try (PreparedStatement ps = c.prepareStatement(text)) {
                int i = lockWaits.bind(ps, attempt, key);
                ps.setBytes(i++, h);
                if (create) {
                    ps.setString(i++, key);
                    ps.setBytes(i++, h);
                }
                if (forClaim) {
                    ps.setBytes(i, h);
                }
                StoredRow row;
                try (ResultSet rs = SqlRunner.query(ps, create ? 2 : 1)) {
                    row = rs.next() ? StoredRow.read(rs) : null;
                }
                lockWaits.granted(attempt, key);
                if (row != null) {
                    long live = 0;
                    String malformed = null;
                    if (forClaim) {
                        ps.getMoreResults();
                        try (ResultSet count = ps.getResultSet()) {
                            count.next();
                            live = count.getLong(1);
                            malformed = count.getLong(2) > 0 ? count.getString(3) : null;
                        }
                    }
                    return new Locked(row, live, malformed);
                }
            }
            if (!create) {
                return null;
            }
        }
        throw new StoreException("the row of '" + OperationNames.abbreviate(key) + "' was deleted "
                + MAX_LOCK_ATTEMPTS + " times while being locked; giving up");
    }

    /**
     * Binds the layout ({@link StoredRow#layoutOf}) and the state's thirteen fields, in the order of the state
     * columns ({@code layout, failures, ..., version, sliding_window, mode, contributors}); returns the next index.
     */
    static int bindState(PreparedStatement ps, int i, BreakerState s) throws SQLException {
        ps.setShort(i++, (short) StoredRow.layoutOf(s));
        ps.setInt(i++, s.failures());
        ps.setLong(i++, s.lastFailureAt());
        ps.setBoolean(i++, s.open());
        ps.setLong(i++, s.openedAt());
        ps.setInt(i++, s.openCount());
        ps.setDouble(i++, s.errorRate());
        ps.setLong(i++, s.samples());
        ps.setInt(i++, s.trialSuccesses());
        ps.setBoolean(i++, s.forced());
        ps.setLong(i++, s.version());
        if (s.window() == null) {
            ps.setNull(i++, Types.VARCHAR);
        } else {
            ps.setString(i++, s.window().encode());
        }
        ps.setShort(i++, (short) s.mode().code());
        String contributors = StoredRow.contributorsOf(s);
        if (contributors == null) {
            ps.setNull(i++, Types.VARCHAR);
        } else {
            ps.setString(i++, contributors);
        }
        return i;
    }

    static void bindNullableLong(PreparedStatement ps, int i, Long v) throws SQLException {
        if (v == null) {
            ps.setNull(i, Types.BIGINT);
        } else {
            ps.setLong(i, v);
        }
    }

    /**
     * A locked row, and for a claim the number of live claims and a description of one live claim no store made
     * (null when there is none).
     */
    private record Locked(StoredRow row, long liveClaims, String malformedClaim) {
    }
}

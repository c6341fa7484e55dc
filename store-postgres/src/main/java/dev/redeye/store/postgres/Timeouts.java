package dev.redeye.store.postgres;

import java.time.Duration;
import java.util.Objects;

/**
 * The server-side bounds of the store's sessions: {@code lock_timeout}, {@code statement_timeout} and
 * {@code idle_in_transaction_session_timeout}, in milliseconds, and how they reach the server. Immutable.
 *
 * <p>They are set either per transaction, by a {@code set_config(..., true)} statement sent in the same round
 * trip as the call's first statement (so they hold on any data source, pooled or not, PgBouncer included, and
 * end with the transaction), or per session, by the store's own pool when it opens a connection (no statement
 * per call).
 */
final class Timeouts {
    static final long DEFAULT_LOCK_MILLIS = 1_000;
    static final long DEFAULT_STATEMENT_MILLIS = 1_500;
    static final long DEFAULT_IDLE_IN_TRANSACTION_MILLIS = 2_000;
    /** PostgreSQL keeps these settings as int milliseconds. */
    static final long MAX_MILLIS = Integer.MAX_VALUE;

    static final Timeouts DEFAULTS = new Timeouts(DEFAULT_LOCK_MILLIS, DEFAULT_STATEMENT_MILLIS,
            DEFAULT_IDLE_IN_TRANSACTION_MILLIS, true);

    final long lockMillis;
    final long statementMillis;
    final long idleInTransactionMillis;
    /** True: every call sets them for its own transaction; false: the sessions already carry them. */
    final boolean perTransaction;
    /**
     * The statement that sets them for the current transaction (ends with "; ", ready to prefix the call's
     * first statement), or the empty string when the sessions carry them. The values are validated numbers,
     * never user text.
     */
    final String prefix;
    /**
     * The statement that sets, for the current transaction, the {@code lock_timeout} and {@code statement_timeout}
     * of a statement that may wait for a row lock: two bound text parameters, the values of the call's lock budget
     * ({@link LockWaits}); in per-transaction mode also the idle-in-transaction bound. Ends with "; ". Sent in
     * both modes: the budget changes from call to call.
     */
    final String lockPrefix;

    Timeouts(long lockMillis, long statementMillis, long idleInTransactionMillis, boolean perTransaction) {
        this.lockMillis = lockMillis;
        this.statementMillis = statementMillis;
        this.idleInTransactionMillis = idleInTransactionMillis;
        this.perTransaction = perTransaction;
        this.prefix = perTransaction ? "SELECT set_config('lock_timeout', '" + lockMillis + "', true), "
                + "set_config('statement_timeout', '" + statementMillis + "', true), "
                + "set_config('idle_in_transaction_session_timeout', '" + idleInTransactionMillis + "', true); "
                : "";
        this.lockPrefix = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true)"
                + (perTransaction ? ", set_config('idle_in_transaction_session_timeout', '" + idleInTransactionMillis
                + "', true)" : "") + "; ";
    }

    Timeouts withLock(long millis) {
        return new Timeouts(millis, statementMillis, idleInTransactionMillis, perTransaction);
    }

    Timeouts withStatement(long millis) {
        return new Timeouts(lockMillis, millis, idleInTransactionMillis, perTransaction);
    }

    Timeouts withIdleInTransaction(long millis) {
        return new Timeouts(lockMillis, statementMillis, millis, perTransaction);
    }

    Timeouts perTransaction(boolean on) {
        return new Timeouts(lockMillis, statementMillis, idleInTransactionMillis, on);
    }

    /**
     * The session-level {@code SET}s with these values, for a pool's connection-init SQL (HikariCP's
     * {@code connectionInitSql}).
     */
    String sessionSql() {
        return "SET lock_timeout = " + lockMillis + "; SET statement_timeout = " + statementMillis
                + "; SET idle_in_transaction_session_timeout = " + idleInTransactionMillis;
    }

    /**
     * Checks a timeout given as a Duration: 0 turns the bound off (PostgreSQL's meaning of 0), otherwise it is
     * whole milliseconds between 1 and {@link #MAX_MILLIS}.
     *
     * @throws NullPointerException     if {@code d} is null
     * @throws IllegalArgumentException if negative, below a millisecond but not zero, or too long
     */
    static long millis(String option, Duration d) {
        Objects.requireNonNull(d, option);
        if (d.isNegative()) {
            throw new IllegalArgumentException(option + " must not be negative, was " + d);
        }
        if (d.isZero()) {
            return 0;
        }
        if (d.compareTo(Duration.ofMillis(MAX_MILLIS)) > 0 || d.toMillis() < 1) {
            throw new IllegalArgumentException(option + " must be 0 (off) or between 1 ms and " + MAX_MILLIS
                    + " ms, was " + d);
        }
        return d.toMillis();
    }

    @Override
    public String toString() {
        return "lock_timeout=" + lockMillis + "ms statement_timeout=" + statementMillis
                + "ms idle_in_transaction_session_timeout=" + idleInTransactionMillis + "ms ("
                + (perTransaction ? "per transaction" : "per session") + ")";
    }
}

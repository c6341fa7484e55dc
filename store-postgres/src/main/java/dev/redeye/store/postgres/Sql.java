package dev.redeye.store.postgres;

import java.net.SocketTimeoutException;
import java.sql.SQLException;

/** Small helpers for reading JDBC failures. */
final class Sql {
    /** serialization_failure */
    static final String SERIALIZATION_FAILURE = "40001";
    /** deadlock_detected */
    static final String DEADLOCK_DETECTED = "40P01";
    /** lock_not_available: {@code lock_timeout} fired. */
    static final String LOCK_NOT_AVAILABLE = "55P03";
    /** query_canceled: {@code statement_timeout} fired (or someone cancelled the statement). */
    static final String QUERY_CANCELED = "57014";
    /** idle_in_transaction_session_timeout: the server ended a session idle in its transaction. */
    static final String IDLE_IN_TRANSACTION_TIMEOUT = "25P03";
    /** admin_shutdown: {@code pg_terminate_backend} or a server shutting down. */
    static final String ADMIN_SHUTDOWN = "57P01";
    /** crash_shutdown: the server is restarting after a crash. */
    static final String CRASH_SHUTDOWN = "57P02";

    /**
     * The SQL condition "this state row has expired", judged by the database clock. A NULL
     * {@code expires_at} never expires, and neither does a pinned state (forced, or with a stored mode:
     * {@link dev.redeye.api.BreakerState#pinned()}): a store never expires an operator's decision, also one
     * written with an expiry by an older version of this store.
     */
    static final String EXPIRED = expired(null);

    private Sql() {
    }

    /** The longest ttl a claim can be made with, in milliseconds (~100 years, as every ttl the store takes). */
    static final long MAX_CLAIM_TTL_MILLIS = PostgresStore.MAX_TTL_MILLIS;

    /**
     * The SQL expression "the end of this claim's life" for the claims table alias {@code c}: the earlier of its
     * {@code expires_at} and its creation time plus the ttl it was made with, so that no claim outlives its ttl
     * whatever its {@code expires_at} says. Without a valid ttl, only {@code expires_at} (and the claim is
     * malformed, see {@link #malformedClaim}).
     */
    static String claimEnd(String c) {
        return "least(" + c + ".expires_at, CASE WHEN " + c + ".ttl_ms BETWEEN 1 AND " + MAX_CLAIM_TTL_MILLIS
                + " THEN " + c + ".created_at + " + c + ".ttl_ms * interval '1 millisecond' END)";
    }

    /** The SQL condition "this claim still counts", by the database clock (see {@link #claimEnd}). */
    static String liveClaim(String c) {
        return claimEnd(c) + " > clock_timestamp()";
    }

    /**
     * The SQL condition "no store made this claim": the store writes {@code expires_at = created_at + ttl_ms}
     * exactly, with a ttl between 1 ms and {@link #MAX_CLAIM_TTL_MILLIS} and the database clock as
     * {@code created_at}; anything else (an expiry of {@code 'infinity'} or beyond its ttl, an infinite or future
     * creation time, a ttl out of range) is malformed. A CASE, so that an out-of-range ttl is never multiplied.
     */
    static String malformedClaim(String c) {
        return "CASE WHEN " + c + ".ttl_ms BETWEEN 1 AND " + MAX_CLAIM_TTL_MILLIS + " AND isfinite(" + c
                + ".created_at) THEN " + c + ".expires_at IS DISTINCT FROM " + c + ".created_at + " + c
                + ".ttl_ms * interval '1 millisecond' OR " + c + ".created_at > clock_timestamp() + interval '1 minute' "
                + "ELSE true END";
    }

    /** {@link #EXPIRED} for the table alias {@code alias} (none when null). */
    static String expired(String alias) {
        String a = alias == null ? "" : alias + ".";
        return a + "expires_at IS NOT NULL AND " + a + "expires_at <= clock_timestamp() AND NOT " + a + "forced AND "
                + a + "mode = 0";
    }

    /** The first {@link SQLException} in the cause chain of {@code t}, or null. */
    static SQLException find(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException) {
                return (SQLException) c;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }

    /** Whether a failure with this SQLSTATE is worth running the transaction again. */
    static boolean isRetryable(String sqlState) {
        return SERIALIZATION_FAILURE.equals(sqlState) || DEADLOCK_DETECTED.equals(sqlState);
    }

    /**
     * Whether {@code t} says the connection is gone (connection exception class 08, or the server ending the
     * session) rather than slow: a socket timeout anywhere in the chain is never "broken", so that a call on a
     * silent server is not made to wait twice.
     */
    static boolean isBrokenConnection(Throwable t) {
        if (hasTimeout(t)) {
            return false;
        }
        SQLException sql = find(t);
        String state = sql == null ? null : sql.getSQLState();
        return state != null && (state.startsWith("08") || ADMIN_SHUTDOWN.equals(state)
                || CRASH_SHUTDOWN.equals(state));
    }

    private static boolean hasTimeout(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SocketTimeoutException) {
                return true;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * A short reason for a failure that is one of the store's bounds firing (with the bound's value), or the
     * empty string. Starts with ": " when not empty.
     */
    static String explain(Throwable t, Timeouts timeouts) {
        if (hasTimeout(t)) {
            return ": no reply from the server within the driver's socketTimeout";
        }
        SQLException sql = find(t);
        String state = sql == null ? null : sql.getSQLState();
        if (LOCK_NOT_AVAILABLE.equals(state)) {
            return ": the key's row lock was not granted within lock_timeout (" + timeouts.lockMillis
                    + " ms; another session holds it)";
        }
        if (QUERY_CANCELED.equals(state)) {
            return ": the statement was cancelled (statement_timeout is " + timeouts.statementMillis + " ms)";
        }
        if (IDLE_IN_TRANSACTION_TIMEOUT.equals(state)) {
            return ": the server ended the session, idle in its transaction beyond "
                    + "idle_in_transaction_session_timeout (" + timeouts.idleInTransactionMillis + " ms)";
        }
        return "";
    }
}

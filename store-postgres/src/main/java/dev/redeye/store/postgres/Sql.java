package dev.redeye.store.postgres;

import java.sql.SQLException;

/** Small helpers for reading JDBC failures. */
final class Sql {
    /** serialization_failure */
    static final String SERIALIZATION_FAILURE = "40001";
    /** deadlock_detected */
    static final String DEADLOCK_DETECTED = "40P01";

    /**
     * The SQL condition "this state row has expired", judged by the database clock. A NULL
     * {@code expires_at} never expires, and neither does a forced state: a store never expires a state an
     * operator holds open, also one written with an expiry by an older version of this store.
     */
    static final String EXPIRED = expired(null);

    private Sql() {
    }

    /** {@link #EXPIRED} for the table alias {@code alias} (none when null). */
    static String expired(String alias) {
        String a = alias == null ? "" : alias + ".";
        return a + "expires_at IS NOT NULL AND " + a + "expires_at <= clock_timestamp() AND NOT " + a + "forced";
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
}

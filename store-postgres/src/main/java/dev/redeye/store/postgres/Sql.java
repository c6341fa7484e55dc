package dev.redeye.store.postgres;

import java.sql.SQLException;

/** Small helpers for reading JDBC failures. */
final class Sql {
    /** serialization_failure */
    static final String SERIALIZATION_FAILURE = "40001";
    /** deadlock_detected */
    static final String DEADLOCK_DETECTED = "40P01";

    private Sql() {
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

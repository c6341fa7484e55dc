package dev.redeye.store.postgres;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.spi.support.Backoff;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Runs one store call on a connection of its own: borrows it, runs the work (in a transaction when asked),
 * gives it back, and turns every failure into a {@link StoreException} that names the operation, the key, the
 * SQLSTATE and, for a timeout, the bound that fired. Retries a transaction that met a serialization failure or
 * a deadlock (up to {@code maxAttempts} in all), and a call whose connection turned out dead before anything
 * could have been applied (once, after telling the pool; never after a timeout, which would double the wait).
 * Thread-safe.
 */
final class SqlRunner {
    /** Between the tries of a transaction that lost a serialization race: up to 5 ms, doubling to 40 ms. */
    private static final Backoff RETRY_BACKOFF = new Backoff(Duration.ofMillis(5), Duration.ofMillis(40));

    /** Where connections come from: a {@link DataSource}, or a {@link Jdbi} (one handle per call). */
    interface Source {
        Lease open() throws SQLException;

        static Source of(DataSource dataSource) {
            return () -> {
                Connection c = dataSource.getConnection();
                return new Lease(c, c);
            };
        }

        /**
         * Never {@code jdbi.withHandle}: Jdbi reuses a handle already open on the calling thread, which would
         * put the store's work inside the caller's transaction (a failure recorded while the caller's
         * transaction rolls back would vanish with it). {@code open()} is always a handle of its own.
         */
        static Source of(Jdbi jdbi) {
            return () -> {
                Handle h = jdbi.open();
                return new Lease(h.getConnection(), h);
            };
        }
    }

    /** A borrowed connection and what gives it back. */
    static final class Lease implements AutoCloseable {
        final Connection connection;
        private final AutoCloseable owner;

        Lease(Connection connection, AutoCloseable owner) {
            this.connection = connection;
            this.owner = owner;
        }

        @Override
        public void close() throws SQLException {
            try {
                owner.close();
            } catch (SQLException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new SQLException("giving the connection back failed: " + e, e);
            }
        }
    }

    /** The work of one call on a borrowed connection. */
    interface Work<T> {
        T run(Connection c, Attempt attempt) throws SQLException;
    }

    /**
     * What one attempt has sent, so that a failure is retried only when nothing can have been applied, and which
     * lock wait is in flight, so that a timeout is put down to the right bound.
     */
    static final class Attempt {
        /** When the store call (all its attempts) began, by the ticker: its lock budget runs from here. */
        final long callStartNanos;
        private boolean committing;
        private String waitingKey;
        private long waitMillis;
        private boolean probe;

        Attempt(long callStartNanos) {
            this.callStartNanos = callStartNanos;
        }

        /** Called just before sending a round trip that commits a change that is not idempotent. */
        void committing() {
            committing = true;
        }

        /**
         * Called just before sending a statement that may wait for {@code key}'s row lock up to {@code millis}
         * ({@code probe}: only that long because the row was found held).
         */
        void waiting(String key, long millis, boolean probe) {
            this.waitingKey = key;
            this.waitMillis = millis;
            this.probe = probe;
        }

        /** The statement announced by {@link #waiting} returned. */
        void waited() {
            this.waitingKey = null;
        }
    }

    private final Source source;
    private final String table;
    private final Timeouts timeouts;
    private final int maxAttempts;
    private final Runnable onBrokenConnection;
    private final Runnable ensureOpen;
    private final LockWaits lockWaits;

    /**
     * @param table              the state table, for messages
     * @param onBrokenConnection told when a connection turned out dead, before the one retry (the store's own
     *                           pool evicts its idle connections, which are likely dead too)
     * @param ensureOpen         throws {@link StoreException} once the store is closed (checked before a retry)
     */
    SqlRunner(Source source, String table, Timeouts timeouts, LockWaits lockWaits, int maxAttempts,
              Runnable onBrokenConnection, Runnable ensureOpen) {
        this.source = source;
        this.lockWaits = lockWaits;
        this.table = table;
        this.timeouts = timeouts;
        this.maxAttempts = maxAttempts;
        this.onBrokenConnection = onBrokenConnection;
        this.ensureOpen = ensureOpen;
    }

    Source source() {
        return source;
    }

    /**
     * Runs {@code work} in autocommit mode (each round trip is its own transaction), also on a connection whose
     * default is {@code autoCommit=false}.
     */
    <T> T call(String op, String key, Work<T> work) {
        return run(op, key, false, work);
    }

    /**
     * Runs {@code work} in one transaction: the driver sends {@code BEGIN} with its first statement; the work
     * ends it itself (a batch ending in {@code COMMIT}, or {@code rollback()}), and any transaction still open
     * afterwards is committed. Rolled back on any failure.
     */
    <T> T transaction(String op, String key, Work<T> work) {
        return run(op, key, true, work);
    }

    private <T> T run(String op, String key, boolean transaction, Work<T> work) {
        boolean retriedBroken = false;
        long start = System.nanoTime();
        for (int attempt = 1; ; attempt++) {
            Attempt a = new Attempt(start);
            boolean leased = false;
            try (Lease lease = source.open()) {
                leased = true;
                return transaction ? inTransaction(lease.connection, a, work) : autoCommitted(lease.connection, a, work);
            } catch (StoreException e) {
                throw e;
            } catch (SQLException | RuntimeException e) {
                SQLException sql = Sql.find(e);
                String state = sql == null ? null : sql.getSQLState();
                String lockWait = null;
                if (a.waitingKey != null && (Sql.LOCK_NOT_AVAILABLE.equals(state) || Sql.QUERY_CANCELED.equals(state))) {
                    // The statement waited for the key's row lock until its budget ran out: the row is held.
                    lockWaits.ranOut(a.waitingKey);
                    lockWait = ": the key's row lock was not granted within the call's lock_timeout of " + a.waitMillis
                            + " ms (" + (a.probe ? "another session was found holding the row: until it is free, calls "
                            + "on it wait only that long" : "what was left of its lock budget; another session holds "
                            + "the row") + "; lockTimeout " + timeouts.lockMillis + " ms per breaker call)";
                }
                boolean retryable = Sql.isRetryable(state);
                if (retryable && attempt < maxAttempts) {
                    ensureOpen.run();
                    pauseBeforeRetry(attempt);
                    continue;
                }
                if (leased && !retriedBroken && !a.committing && Sql.isBrokenConnection(e)) {
                    // A connection the server closed (restart, pg_terminate_backend, failover) fails at once and
                    // nothing it carried was applied: one retry on a fresh connection, never after a timeout.
                    retriedBroken = true;
                    attempt--;
                    ensureOpen.run();
                    onBrokenConnection.run();
                    continue;
                }
                throw new StoreException("PostgreSQL " + op + " of '" + OperationNames.abbreviate(key) + "' on "
                        + table + " failed" + (retryable ? " after " + attempt + " attempts" : "")
                        + (lockWait != null ? lockWait : Sql.explain(e, timeouts))
                        + (state == null ? "" : " [SQLSTATE " + state + "]") + ": "
                        + (sql != null ? sql.getMessage() : e.toString()), e);
            }
        }
    }

    /**
     * Runs {@code work} with autocommit on, whatever the connection's default: a pool whose connections default
     * to {@code autoCommit=false} (HikariCP's {@code autoCommit}, Spring's usual set-up) would otherwise leave
     * each statement in an open transaction that the pool rolls back when the connection comes back. Switching
     * autocommit on and off again costs no round trip while no transaction is open; the connection goes back
     * with the default it came with.
     */
    private static <T> T autoCommitted(Connection c, Attempt a, Work<T> work) throws SQLException {
        if (c.getAutoCommit()) {
            return work.run(c, a);
        }
        c.setAutoCommit(true); // commits nothing: no transaction is open on a connection just borrowed
        try {
            return work.run(c, a);
        } finally {
            restoreAutoCommit(c, false);
        }
    }

    private static <T> T inTransaction(Connection c, Attempt a, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (autoCommit) {
            c.setAutoCommit(false); // no round trip: the driver sends BEGIN with the first statement
        }
        try {
            T result = work.run(c, a);
            c.commit(); // a no-op when the work's last batch committed: the driver sees the transaction idle
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            restoreAutoCommit(c, autoCommit);
        }
    }

    /** Gives the connection back its autocommit default; a dead connection is the pool's to discard. */
    private static void restoreAutoCommit(Connection c, boolean autoCommit) {
        try {
            c.setAutoCommit(autoCommit);
        } catch (SQLException | RuntimeException ignored) {
            // a dead connection: the pool discards it
        }
    }

    private static void pauseBeforeRetry(int attempt) {
        RETRY_BACKOFF.pause(attempt, Backoff.NO_DEADLINE, "a serialization failure");
    }

    /**
     * Executes {@code ps} and returns the result of its statement number {@code index} (0-based; the earlier
     * ones, such as the timeouts prefix, are skipped).
     */
    static ResultSet query(PreparedStatement ps, int index) throws SQLException {
        ps.execute();
        for (int i = 0; i < index; i++) {
            ps.getMoreResults();
        }
        ResultSet rs = ps.getResultSet();
        if (rs == null) {
            throw new SQLException("statement " + index + " returned no rows where a query was expected");
        }
        return rs;
    }

    /** Executes {@code ps} and returns the update count of its statement number {@code index} (0-based). */
    static int update(PreparedStatement ps, int index) throws SQLException {
        ps.execute();
        for (int i = 0; i < index; i++) {
            ps.getMoreResults();
        }
        return ps.getUpdateCount();
    }
}

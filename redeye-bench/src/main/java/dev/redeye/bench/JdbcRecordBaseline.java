package dev.redeye.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.store.postgres.PostgresStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The plain-JDBC work a PostgreSQL record call cannot beat: on a pooled connection, {@code SELECT <the state
 * columns> ... FOR UPDATE}, {@code UPDATE}, {@code COMMIT} of one row of the store's own table, under a key of
 * its own (written once by the store, so the row has the store's layout). The baseline of the record path in
 * {@link PostgresPathBench} and in {@link RecordPathBench} (through {@link StoreFixture#recordBaseline}).
 * Not thread-safe: one measuring thread.
 */
final class JdbcRecordBaseline {
    /** The state columns the store reads, in its order. */
    static final String COLUMNS = "layout, failures, last_failure_at, open, opened_at, open_count, "
            + "error_rate, samples, trial_successes, forced, version, expires_at";

    private final HikariDataSource pool;
    private final String lock;
    private final String update;
    private final byte[] hash;
    private long now = 2;

    /**
     * Writes the baseline's row through {@code store} (one failure under a policy that never opens) and
     * prepares the statements for the store's table.
     *
     * @param pool the pool the baseline borrows its connection from
     * @param key  the operation whose row the baseline locks and updates; keep it apart from measured ones
     * @throws StoreException if the store cannot write the row
     */
    JdbcRecordBaseline(HikariDataSource pool, PostgresStore store, String key) {
        this.pool = pool;
        String table = table(store);
        this.lock = "SELECT " + COLUMNS + " FROM " + table + " WHERE key_hash = ? FOR UPDATE";
        this.update = "UPDATE " + table + " SET failures = ?, last_failure_at = ?, updated_at = clock_timestamp() "
                + "WHERE key_hash = ?";
        this.hash = sha256(key);
        store.delete(key);
        store.apply(key, AtomicOperation.failure(), Policy.builder().failureThreshold(Integer.MAX_VALUE).build(), 1);
    }

    /** The quoted, schema-qualified name of the store's table. */
    static String table(PostgresStore store) {
        return "\"" + store.schema() + "\".\"" + store.table() + "\"";
    }

    /** The primary key of an operation's row: SHA-256 of its UTF-8 name. */
    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * One transaction: lock and read the row, count one failure, commit.
     *
     * @throws StoreException if JDBC fails or the row is gone
     */
    void once() {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                int failures;
                try (PreparedStatement ps = c.prepareStatement(lock)) {
                    ps.setBytes(1, hash);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new StoreException("the baseline's row is missing");
                        }
                        failures = rs.getInt(2);
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(update)) {
                    ps.setInt(1, failures + 1);
                    ps.setLong(2, now++);
                    ps.setBytes(3, hash);
                    ps.executeUpdate();
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new StoreException("the plain-JDBC record failed: " + e.getMessage(), e);
        }
    }
}

package dev.redeye.store.postgres;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.StoreTck;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The full redeye TCK over PostgreSQL, every client opened through the URI provider (as {@code Stores.open}
 * does), in a random schema dropped afterwards. Every hook is provided: {@link #corrupt} writes an
 * impossible row with plain SQL, {@link #interruptFeed} terminates the feed's backend, {@link #rewind} writes
 * an earlier state back with plain SQL.
 */
class PostgresStoreTckTest extends StoreTck {
    private static String schema;

    @BeforeAll
    static void createSchema() {
        schema = PgTestSupport.randomSchema("redeye_tck");
    }

    @AfterAll
    static void dropSchema() throws Exception {
        PgTestSupport.dropSchema(schema);
    }

    /** This class's random schema (each TCK subclass runs in a schema of its own). */
    static String schema() {
        return schema;
    }

    /**
     * Lock and statement bounds ten times the defaults: the TCK's races put 16 to 32 threads on one key, a
     * queue no breaker row sees in production, and on a loaded CI machine (slow commits) a thread can wait
     * longer than the default 1 s for its turn. The TCK proves atomicity; the default bounds are proven by
     * PostgresFaultTest and PostgresTimeoutsTest.
     */
    @Override
    protected Store newClient() {
        return new PostgresStoreProvider().open(PgTestSupport.urlWith("schema=" + schema + "&table=breakers"
                + "&lockTimeoutMillis=10000&statementTimeoutMillis=15000"));
    }

    @Override
    protected void corrupt(Store client, String key) throws Exception {
        PostgresStore s = (PostgresStore) client;
        // A row of the current layout holding values no BreakerState can have (the columns have no CHECK).
        String sql = "UPDATE " + TableNames.quote(s.schema()) + "." + TableNames.quote(s.table())
                + " SET failures = -3, error_rate = 7 WHERE key_hash = sha256(convert_to(?, 'UTF8'))";
        try (Connection c = PgTestSupport.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, key);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("no row to corrupt for " + key);
            }
        }
    }

    /** R6.12: the state columns of the key's row written back as {@code state} with plain SQL (no NOTIFY). */
    @Override
    protected void rewind(Store client, String key, BreakerState state) throws Exception {
        PostgresStore s = (PostgresStore) client;
        String sql = "UPDATE " + TableNames.quote(s.schema()) + "." + TableNames.quote(s.table())
                + " SET failures = ?, last_failure_at = ?, open = ?, opened_at = ?, open_count = ?, error_rate = ?, "
                + "samples = ?, trial_successes = ?, forced = ?, version = ?, sliding_window = ?, mode = ?, layout = ?, "
                + "contributors = ? WHERE key_hash = sha256(convert_to(?, 'UTF8'))";
        try (Connection c = PgTestSupport.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setInt(1, state.failures());
            ps.setLong(2, state.lastFailureAt());
            ps.setBoolean(3, state.open());
            ps.setLong(4, state.openedAt());
            ps.setInt(5, state.openCount());
            ps.setDouble(6, state.errorRate());
            ps.setLong(7, state.samples());
            ps.setInt(8, state.trialSuccesses());
            ps.setBoolean(9, state.forced());
            ps.setLong(10, state.version());
            ps.setString(11, state.window() == null ? null : state.window().encode());
            ps.setInt(12, state.mode().code());
            ps.setInt(13, StoredRow.layoutOf(state));
            ps.setString(14, StoredRow.contributorsOf(state));
            ps.setString(15, key);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("no row to rewind for " + key);
            }
        }
    }

    @Override
    protected void interruptFeed(Store client) throws Exception {
        int pid = ((PostgresStore) client).feedBackendPid();
        if (pid <= 0) {
            throw new IllegalStateException("the store has no feed connection to cut");
        }
        try (Connection c = PgTestSupport.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            ps.setInt(1, pid);
            ps.executeQuery().close();
        }
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, QuorumState.class,
                OutcomeBatches.class);
    }
}

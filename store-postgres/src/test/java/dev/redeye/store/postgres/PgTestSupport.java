package dev.redeye.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.testsupport.ServiceAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.postgresql.ds.PGSimpleDataSource;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Where the tests find PostgreSQL ({@link #POSTGRES}: {@code REDEYE_POSTGRES_URL}, a {@code jdbc:postgresql://}
 * or {@code postgresql://} URL, else a Testcontainers PostgreSQL, else a failure saying how to provide one) and
 * the raw access they check it with. Each test class works in its own random schema and drops it.
 */
final class PgTestSupport {
    static final String ENV = "REDEYE_POSTGRES_URL";
    /** How long {@link #eventually} waits. */
    static final Duration PATIENCE = Duration.ofSeconds(10);
    static final ServiceAddress POSTGRES = ServiceAddress.of(ENV, "postgres:16-alpine", 5432,
            "jdbc:postgresql://%s:%d/postgres?user=postgres", "for example export " + ENV
                    + "='jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres'; see store-postgres/README.md.")
            .withContainer(c -> c.withEnv("POSTGRES_HOST_AUTH_METHOD", "trust")
                    .waitingFor(Wait.forLogMessage(".*database system is ready to accept connections.*", 2)));

    private PgTestSupport() {
    }

    /** A URL (jdbc: or postgresql:) of the server the tests use. */
    static String url() {
        return POSTGRES.url();
    }

    /** The test server's URL with extra query parameters appended (for the provider). */
    static String urlWith(String params) {
        String u = url();
        return u + (u.contains("?") ? "&" : "?") + params;
    }

    /** An unpooled DataSource on the test server, built by the provider's own parser. */
    static PGSimpleDataSource dataSource() {
        return PostgresStoreProvider.plainDataSource(PostgresStoreProvider.parse(url()));
    }

    /** Creates a schema with a fresh random name (dropped by the test class with {@link #dropSchema}). */
    static String createSchema(String prefix) throws SQLException {
        String schema = randomSchema(prefix);
        exec("CREATE SCHEMA " + TableNames.quote(schema));
        return schema;
    }

    /** A fresh random schema name. */
    static String randomSchema(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** Runs SQL as an admin statement on its own connection. */
    static void exec(String sql) throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static void dropSchema(String schema) throws SQLException {
        exec("DROP SCHEMA IF EXISTS " + TableNames.quote(TableNames.validate("schema", schema, 63)) + " CASCADE");
    }

    /** The first column of the first row of a query run on its own connection (a count, a number). */
    static long count(String sql, Object... args) throws SQLException {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Runs one statement with parameters on its own connection. */
    static void update(String sql, Object... args) throws SQLException {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.execute();
        }
    }

    /** Polls {@code condition} every 10 ms for up to {@link #PATIENCE}; whether it became true. */
    static boolean eventually(BooleanSupplier condition) throws InterruptedException {
        return eventually(PATIENCE, condition);
    }

    /** Polls {@code condition} every 10 ms for up to {@code patience}; whether it became true. */
    static boolean eventually(Duration patience, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** A plain HikariCP pool on the test server, as an application would hand the store. */
    static HikariDataSource pool(int size) {
        return pool(size, config -> { });
    }

    /**
     * A HikariCP pool whose connections default to {@code autoCommit=false}, as Spring applications often
     * configure theirs: HikariCP rolls back whatever a borrower left uncommitted when the connection comes back.
     */
    static HikariDataSource autoCommitOffPool(int size) {
        return pool(size, config -> config.setAutoCommit(false));
    }

    /** A pool whose transactions run REPEATABLE READ, where concurrent row locks raise SQLSTATE 40001. */
    static HikariDataSource repeatableReadPool(int size) {
        return pool(size, config -> config.setTransactionIsolation("TRANSACTION_REPEATABLE_READ"));
    }

    /** A HikariCP pool of {@code size} connections on the test server, configured further by {@code settings}. */
    private static HikariDataSource pool(int size, Consumer<HikariConfig> settings) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(dataSource());
        config.setMaximumPoolSize(size);
        settings.accept(config);
        return new HikariDataSource(config);
    }
}

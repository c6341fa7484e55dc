package dev.redeye.store.postgres;

import java.sql.SQLException;
import java.util.UUID;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A login role of a test's own on the test server, allowed to create tables in one schema, whose connections
 * the test can refuse and allow again (a server refusing reconnects). {@link #close()} ends its sessions and
 * drops it with everything it owns; close every store using it first.
 */
final class LoginRole implements AutoCloseable {
    private final String name;

    LoginRole(String prefix, String schema) throws SQLException {
        this.name = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        PgTestSupport.exec("CREATE ROLE " + name + " LOGIN");
        PgTestSupport.exec("GRANT USAGE, CREATE ON SCHEMA " + TableNames.quote(schema) + " TO " + name);
    }

    /** An unpooled data source that connects as this role. */
    PGSimpleDataSource dataSource() {
        PGSimpleDataSource ds = PgTestSupport.dataSource();
        ds.setUser(name);
        return ds;
    }

    /** From now on the server refuses new connections of this role (a connection limit of 0). */
    void refuseConnections() throws SQLException {
        PgTestSupport.exec("ALTER ROLE " + name + " CONNECTION LIMIT 0");
    }

    void allowConnections() throws SQLException {
        PgTestSupport.exec("ALTER ROLE " + name + " CONNECTION LIMIT -1");
    }

    @Override
    public void close() throws SQLException {
        PgTestSupport.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + name + "'");
        PgTestSupport.exec("DROP OWNED BY " + name);
        PgTestSupport.exec("DROP ROLE " + name);
    }
}

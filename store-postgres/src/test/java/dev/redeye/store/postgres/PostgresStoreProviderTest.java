package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StoreProvider;
import dev.redeye.tck.TcpRelay;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.Driver;

/** URI parsing, discovery and redaction of {@link PostgresStoreProvider}. */
class PostgresStoreProviderTest {
    private static final String SECRET = "s3cr3t-Pa55";

    @Test
    void isRegisteredForItsSchemes() {
        Set<String> schemes = ServiceLoader.load(StoreProvider.class).stream()
                .filter(p -> p.type() == PostgresStoreProvider.class)
                .flatMap(p -> p.get().schemes().stream()).collect(Collectors.toSet());
        assertEquals(Set.of("postgresql", "postgres", "jdbc:postgresql"), schemes);
    }

    @Test
    void parsesAPostgresqlUri() {
        PostgresStoreProvider.Parsed p = PostgresStoreProvider.parse(
                "postgresql://app%40corp:p%40ss%3Aw0rd@db.example:5433/my%20db?schema=ops&table=breakers"
                        + "&sslmode=require&poolSize=3&poolTimeoutMillis=900&createSchema=false");
        assertEquals("jdbc:postgresql://db.example:5433/my%20db?sslmode=require", p.jdbcUrl);
        assertEquals("app@corp", p.user);
        assertEquals("p@ss:w0rd", p.password);
        assertEquals("ops", p.schema);
        assertEquals("breakers", p.table);
        assertFalse(p.createSchema);
        assertEquals(3, p.poolSize);
        assertEquals(900, p.poolTimeoutMillis);
        assertFalse(p.hasApplicationName);
    }

    @Test
    void namesItsConnectionsRedeyeUnlessTold() throws Exception {
        String schema = PgTestSupport.randomSchema("redeye_prov");
        try (PostgresStore s = (PostgresStore) new PostgresStoreProvider()
                .open(PgTestSupport.urlWith("schema=" + schema));
             java.sql.Connection probe = PgTestSupport.dataSource().getConnection()) {
            s.subscribe(e -> { }, () -> { });
            try (java.sql.PreparedStatement ps = probe.prepareStatement(
                    "SELECT application_name FROM pg_stat_activity WHERE pid = ?")) {
                ps.setInt(1, s.feedBackendPid());
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals(PostgresStoreProvider.DEFAULT_APPLICATION_NAME, rs.getString(1));
                }
            }
        } finally {
            PgTestSupport.dropSchema(schema);
        }
    }

    @Test
    void defaultsWithoutCredentialsOrParameters() {
        PostgresStoreProvider.Parsed p = PostgresStoreProvider.parse("postgres://localhost/app");
        assertEquals("jdbc:postgresql://localhost/app", p.jdbcUrl);
        assertNull(p.user);
        assertNull(p.password);
        assertEquals("public", p.schema);
        assertEquals("redeye_breakers", p.table);
        assertTrue(p.createSchema);
        assertEquals(8, p.poolSize);
        assertEquals(1000, p.poolTimeoutMillis);
    }

    @Test
    void boundsDefaultToTheDocumentedValuesAndAreOverridable() throws Exception {
        PostgresStoreProvider.Parsed d = PostgresStoreProvider.parse("postgresql://h/db");
        assertEquals(1000, d.timeouts.lockMillis);
        assertEquals(1500, d.timeouts.statementMillis);
        assertEquals(2000, d.timeouts.idleInTransactionMillis);
        assertFalse(d.timeouts.perTransaction, "a URI store's own pool sets them once per connection");
        assertEquals(60_000, d.purgeIntervalMillis);
        var ds = PostgresStoreProvider.driverDataSource(d);
        assertEquals(2, ds.getSocketTimeout(), "socketTimeout");
        assertEquals(2, ds.getConnectTimeout(), "connectTimeout");
        assertEquals(2, ds.getLoginTimeout(), "loginTimeout");
        assertTrue(ds.getTcpKeepAlive(), "tcpKeepAlive");
        // the socket outlasts the server's own bounds, whichever is longer, by at least half a second
        assertEquals(4, PostgresStoreProvider.driverDataSource(PostgresStoreProvider.parse(
                "postgresql://h/db?statementTimeoutMillis=3000")).getSocketTimeout(), "statementTimeout 3 s");
        assertEquals(3, PostgresStoreProvider.driverDataSource(PostgresStoreProvider.parse(
                "postgresql://h/db?lockTimeoutMillis=2500&statementTimeoutMillis=0")).getSocketTimeout(),
                "no statementTimeout, lockTimeout 2.5 s");

        PostgresStoreProvider.Parsed o = PostgresStoreProvider.parse("postgresql://h/db?LockTimeoutMillis=250"
                + "&statementTimeoutMillis=0&idleInTransactionTimeoutMillis=9000&timeoutsPerTransaction=true"
                + "&purgeIntervalMillis=0&socketTimeout=7&connectTimeout=3&tcpKeepAlive=false&loginTimeout=4");
        assertEquals(250, o.timeouts.lockMillis);
        assertEquals(0, o.timeouts.statementMillis);
        assertEquals(9000, o.timeouts.idleInTransactionMillis);
        assertTrue(o.timeouts.perTransaction);
        assertEquals(0, o.purgeIntervalMillis);
        var ods = PostgresStoreProvider.driverDataSource(o);
        assertEquals(7, ods.getSocketTimeout());
        assertEquals(3, ods.getConnectTimeout());
        assertEquals(4, ods.getLoginTimeout());
        assertFalse(ods.getTcpKeepAlive());
        assertEquals("jdbc:postgresql://h/db?socketTimeout=7&connectTimeout=3&tcpKeepAlive=false&loginTimeout=4",
                o.jdbcUrl, "the store's own parameters never reach the driver");
    }

    @ParameterizedTest
    @ValueSource(strings = {"lockTimeoutMillis=-1", "statementTimeoutMillis=soon", "purgeIntervalMillis=50",
        "idleInTransactionTimeoutMillis=99999999999", "timeoutsPerTransaction=perhaps"})
    void badBoundsAreRefusedNamingTheParameter(String param) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PostgresStoreProvider.parse("postgresql://u:" + SECRET + "@h/db?" + param));
        String name = param.substring(0, param.indexOf('='));
        assertTrue(e.getMessage().contains(name), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void passesJdbcUrlsToTheDriverWithoutTheStoreParameters() {
        PostgresStoreProvider.Parsed p = PostgresStoreProvider.parse(
                "jdbc:postgresql://h1:5432,h2:5433/db?user=u&schema=s1&ApplicationName=svc&table=t1&password=x");
        assertEquals("jdbc:postgresql://h1:5432,h2:5433/db?user=u&ApplicationName=svc&password=x", p.jdbcUrl);
        assertEquals("s1", p.schema);
        assertEquals("t1", p.table);
        assertTrue(p.hasApplicationName);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "postgresql://u:" + SECRET + "@h/db?table=bad;name",
        "postgresql://u:" + SECRET + "@h/db?schema=1x",
        "postgresql://u:" + SECRET + "@h/db?poolSize=one",
        "postgresql://u:" + SECRET + "@h/db?poolSize=1",
        "postgresql://u:" + SECRET + "@h/db?createSchema=maybe",
        "postgresql://u:" + SECRET + "@/db",
        "postgresql:u:" + SECRET + "@h/db",
        "jdbc:postgresql://h/db?password=" + SECRET + "&poolTimeoutMillis=5",
        "redis://u:" + SECRET + "@h:6379"})
    void malformedUrisAreRefusedWithoutThePassword(String uri) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PostgresStoreProvider().open(uri));
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void anUnreachableServerIsAStoreExceptionWithoutThePassword() {
        StoreException e = assertThrows(StoreException.class, () -> new PostgresStoreProvider().open(
                "postgresql://u:" + SECRET + "@127.0.0.1:1/db?connectTimeout=1&poolTimeoutMillis=500"));
        for (Throwable t = e; t != null; t = t.getCause()) {
            assertFalse(String.valueOf(t.getMessage()).contains(SECRET), t.toString());
        }
    }

    /**
     * Guards the SPI's promise: a backend failure in any method is a StoreException, never a driver type. The
     * store is opened through a relay to the test server (opening checks its tables), which then goes away.
     */
    @Test
    void everyCallOnAnUnreachableServerIsAStoreExceptionWithoutThePassword() throws Exception {
        String schema = PgTestSupport.randomSchema("redeye_unreach");
        Properties server = Driver.parseURL(PostgresStoreProvider.parse(PgTestSupport.url()).jdbcUrl, null);
        TcpRelay relay = new TcpRelay(server.getProperty("PGHOST"), Integer.parseInt(server.getProperty("PGPORT")),
                (connection, fromClient, bytes) -> { });
        PostgresStore s = PostgresStore.open("postgresql://postgres:" + SECRET + "@127.0.0.1:" + relay.port()
                + "/" + server.getProperty("PGDBNAME") + "?connectTimeout=1&poolTimeoutMillis=250&schema=" + schema);
        relay.close();
        try {
            Policy p = Policy.builder().build();
            BreakerState st = BreakerState.builder().open(true).forced(true).build();
            Duration ttl = Duration.ofSeconds(5);
            List<Executable> calls = List.of(() -> s.get("k"),
                    () -> s.put("k", st, ttl), () -> s.delete("k"), () -> s.apply("k", AtomicOperation.failure(), p, 1),
                    () -> s.apply("k", AtomicOperation.success(), p, 1), () -> s.apply("k", AtomicOperation.outcome(false), p, 1),
                    () -> s.apply("k", AtomicOperation.trialSucceeded(1), p, 1), () -> s.apply("k", AtomicOperation.trialFailed(1), p, 1),
                    () -> s.apply("k", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 1),
                    () -> s.claimTrial("k", 1, ttl), () -> s.releaseTrial("k", "t"), s::purgeExpired,
                    () -> s.subscribe(e -> { }, () -> { }));
            for (Executable call : calls) {
                Throwable e = assertThrows(Throwable.class, call);
                assertEquals(StoreException.class, e.getClass(), "a backend failure escaped as " + e);
                for (Throwable t = e; t != null; t = t.getCause()) {
                    assertFalse(String.valueOf(t.getMessage()).contains(SECRET), t.toString());
                }
            }
        } finally {
            s.close();
            PgTestSupport.dropSchema(schema);
        }
    }
}

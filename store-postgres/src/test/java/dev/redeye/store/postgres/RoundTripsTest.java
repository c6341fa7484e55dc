package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.Driver;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Network round trips per store operation, counted by a {@link TurnCountingRelay} between the driver and the
 * server on one long-lived connection (so connection set-up and pool validation are not counted). The
 * figures are the ones the README's table quotes; the test prints them.
 */
class RoundTripsTest {
    private static final Duration TTL = Duration.ofHours(1);
    private static String schema;
    private static TurnCountingRelay relay;
    private static Connection connection;
    private static PostgresStore perTransaction;
    private static PostgresStore perSession;
    private PostgresStore store;

    @BeforeAll
    static void open() throws Exception {
        schema = PgTestSupport.randomSchema("redeye_rt");
        Properties p = Driver.parseURL(PostgresStoreProvider.parse(PgTestSupport.url()).jdbcUrl, null);
        relay = new TurnCountingRelay(p.getProperty("PGHOST"), Integer.parseInt(p.getProperty("PGPORT")));
        PGSimpleDataSource ds = PgTestSupport.dataSource();
        ds.setServerNames(new String[] {"127.0.0.1"});
        ds.setPortNumbers(new int[] {relay.port()});
        connection = ds.getConnection();
        perTransaction = PostgresStore.builder(new OneConnection(connection)).schema(schema).table("rt").build();
        perSession = PostgresStore.builder(new OneConnection(connection)).schema(schema).table("rt_session")
                .timeoutsPerTransaction(false).build();
    }

    @AfterAll
    static void close() throws Exception {
        for (PostgresStore s : new PostgresStore[] {perTransaction, perSession}) {
            if (s != null) {
                s.close();
            }
        }
        if (connection != null) {
            connection.close();
        }
        if (relay != null) {
            relay.close();
        }
        PgTestSupport.dropSchema(schema);
    }

    private int trips(Runnable call) {
        call.run(); // warm: the driver prepares statements server-side after a few uses, which changes nothing
        relay.reset();
        call.run();
        return relay.roundTrips();
    }

    private static Policy threshold(int n) {
        return Policy.builder().failureThreshold(n).jitter(0.0).build();
    }

    /**
     * The default store sets its timeouts per transaction, in the first round trip of each call; one whose
     * sessions carry them sends nothing extra. Both take the same round trips.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void everyOperationTakesTheFewestRoundTrips(boolean timeoutsPerTransaction) {
        store = timeoutsPerTransaction ? perTransaction : perSession;
        Policy high = threshold(1_000_000);
        Map<String, int[]> rows = new LinkedHashMap<>(); // operation -> {measured, most allowed}
        store.put("existing", BreakerState.INITIAL.toBuilder().version(5).build(), TTL);
        rows.put("get", new int[] {trips(() -> store.get("existing")), 1});
        rows.put("put", new int[] {trips(() -> store.put("p", BreakerState.INITIAL, TTL)), 1});
        rows.put("delete", new int[] {trips(() -> store.delete("gone")), 1});
        rows.put("recordFailure (below the threshold)", new int[] {trips(() -> store.apply("existing", AtomicOperation.failure(), high, 1)), 2});
        rows.put("recordSuccess (clears failures, quiet write)", new int[] {trips(() -> {
            store.apply("clears", AtomicOperation.failure(), high, 1);
            relay.reset();
            store.apply("clears", AtomicOperation.success(), high, 2);
        }), 2});
        store.put("clear", BreakerState.INITIAL, TTL);
        rows.put("recordSuccess (nothing to clear)", new int[] {trips(() -> store.apply("clear", AtomicOperation.success(), high, 1)), 2});
        rows.put("recordSuccess (a key without a row: nothing to write)",
                new int[] {trips(() -> store.apply("no-row", AtomicOperation.success(), high, 1)), 2});
        int[] opening = {0};
        rows.put("recordFailure (opens: transition + NOTIFY)", new int[] {trips(() -> {
            String k = "opens-" + opening[0]++;
            store.apply(k, AtomicOperation.failure(), threshold(2), 1);
            relay.reset();
            store.apply(k, AtomicOperation.failure(), threshold(2), 2);
        }), 2});
        rows.put("recordFailure (a key without a row)", new int[] {trips(() -> {
            store.delete("new");
            relay.reset();
            store.apply("new", AtomicOperation.failure(), high, 1);
        }), 3});
        rows.put("force OPEN (transition + NOTIFY)", new int[] {trips(() -> {
            store.apply("forced", AtomicOperation.force(BreakerStatus.CLOSED), high, 1);
            relay.reset();
            store.apply("forced", AtomicOperation.force(BreakerStatus.OPEN), high, 2);
        }), 2});
        long v = store.apply("trial", AtomicOperation.force(BreakerStatus.OPEN), high, 1).state().version();
        rows.put("trialFailed (stale version: no-op)", new int[] {trips(() -> store.apply("trial", AtomicOperation.trialFailed(v - 1), high, 2)), 2});
        rows.put("claimTrial (granted)", new int[] {trips(() -> store.claimTrial("trial", 1_000, Duration.ofMinutes(1))), 2});
        rows.put("claimTrial (every permit taken)", new int[] {trips(() -> store.claimTrial("trial", 1, Duration.ofMinutes(1))), 2});
        String token = store.claimTrial("release", 1, Duration.ofMinutes(1)).orElseThrow();
        rows.put("releaseTrial", new int[] {trips(() -> store.releaseTrial("release", token)), 1});

        StringBuilder table = new StringBuilder("| operation | round trips | at most |\n|---|---|---|\n");
        rows.forEach((op, n) -> table.append("| ").append(op).append(" | ").append(n[0]).append(" | ").append(n[1])
                .append(" |\n"));
        System.out.println("Round trips per PostgresStore operation (one connection, through a counting relay; "
                + "timeouts " + (timeoutsPerTransaction ? "per transaction" : "per session") + "):\n" + table);
        rows.forEach((op, n) -> assertTrue(n[0] <= n[1], op + ": " + n[0] + " round trips, at most " + n[1]
                + " expected\n" + table));
        assertEquals(0, trips(() -> { }), "the relay counts nothing when nothing is sent");
    }

    /**
     * A DataSource handing out one connection again and again; {@code close()} on it does nothing (the test
     * closes the real one), so every call of the store runs on the same counted connection.
     */
    private static final class OneConnection implements DataSource {
        private final Connection proxy;

        OneConnection(Connection real) {
            this.proxy = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, (p, m, args) -> {
                        if (m.getName().equals("close")) {
                            return null;
                        }
                        try {
                            return m.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection() {
            return proxy;
        }

        @Override
        public Connection getConnection(String user, String password) {
            return proxy;
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }

}

package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Where a scale child's store clients come from: its command line, and the one pool per JVM its PostgreSQL stores
 * share (PostgreSQL from {@code REDEYE_POSTGRES_URL}).
 */
class ScaleInstanceTest {
    private static final String PG = BenchEnv.parse(new String[0]).postgresUrl();

    @Test
    void aCommandLineThatIsNeitherFormIsRefusedBeforeConnecting() {
        assertThrows(IllegalArgumentException.class, ScaleInstance::clients);
        assertThrows(IllegalArgumentException.class, () -> ScaleInstance.clients("a", "b"));
        assertThrows(IllegalArgumentException.class, () -> ScaleInstance.clients("--postgres-pool", "4", "s"));
        assertThrows(IllegalArgumentException.class,
                () -> ScaleInstance.clients("--postgres-pool", "four", "s", PG));
        assertThrows(IllegalArgumentException.class, () -> ScaleInstance.clients("--postgres-pool", "0", "s", PG));
        assertThrows(IllegalArgumentException.class,
                () -> ScaleInstance.clients("--postgres-pool", "4", "s", "redis://127.0.0.1:6379"));
        assertEquals(List.of("--postgres-pool", "4", "s", PG), ScaleInstance.sharedPoolArgs(4, "s", PG));
    }

    /**
     * The bench counts the fleet's sessions by application name, and the stores of one JVM must hold no more than
     * their one pool's connections: twenty subscribed stores over a pool of two hold at most two sessions under the
     * URL's {@code ApplicationName} (at least one: the count sees them), and each hears a transition (a feed
     * holding a connection of its own, {@code LISTEN}, could not subscribe past the pool's two).
     */
    @Test
    void theStoresOfOneSharedPoolHoldItsConnectionsUnderTheApplicationNameAndEachHearsATransition()
            throws Exception {
        String id = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String app = "redeye-scale-test-" + id;
        String schema = "redeye_scale_test_" + id;
        int stores = 20;
        AtomicInteger heard = new AtomicInteger();
        AtomicInteger gaps = new AtomicInteger();
        List<Store> opened = new ArrayList<>();
        int most = 0;
        try (ScaleInstance.Clients clients = ScaleInstance.clients(
                ScaleInstance.sharedPoolArgs(2, schema, ScaleBench.withParameter(PG, "ApplicationName=" + app))
                        .toArray(new String[0]))) {
            try {
                for (int i = 0; i < stores; i++) {
                    Store s = clients.open();
                    opened.add(s);
                    ((TransitionFeed) s).subscribe(e -> {
                        if (e.operation().equals("scale-test")) {
                            heard.incrementAndGet();
                        }
                    }, gaps::incrementAndGet);
                    most = Math.max(most, sessions(app));
                }
                try (CircuitBreaker writer = CircuitBreaker.builder().store(opened.get(0)).closeStore(false).build()) {
                    writer.forceOpen("scale-test");
                }
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (heard.get() < stores && System.nanoTime() < deadline) {
                    most = Math.max(most, sessions(app));
                    Thread.sleep(50);
                }
                assertEquals(stores, heard.get(), "every store's subscriber hears the transition");
                assertEquals(0, gaps.get(), "no poll failed");
                assertTrue(most >= 1 && most <= 2, "the pool's 1 to 2 sessions under " + app + ", saw " + most);
            } finally {
                opened.forEach(Store::close);
            }
        } finally {
            try (Connection c = DriverManager.getConnection(PG); Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
            }
        }
        long deadline = System.nanoTime() + 10_000_000_000L; // a closed session leaves the view when its backend exits
        while (sessions(app) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(0, sessions(app), "closing the clients closes the pool");
    }

    private static int sessions(String app) throws SQLException {
        try (Connection c = DriverManager.getConnection(PG);
                PreparedStatement ps = c.prepareStatement(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, app);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}

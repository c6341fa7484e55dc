package dev.redeye.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A polled feed ({@code feed=poll}) holds no connection between polls: a thousand store instances over one pool of
 * {@value #POOL} connections, each subscribed, never hold more than the pool's connections at the server, and
 * every one of them hears a transition. A feed that kept a connection of its own per store could not even
 * subscribe past the pool's size.
 */
class PostgresPolledFeedScaleTest {
    private static final int STORES = 1_000;
    private static final int POOL = 4;

    @RegisterExtension
    static final PgSchema PG = new PgSchema("redeye_polled_scale");

    @Test
    void aThousandPolledStoresOverOnePoolHoldAtMostItsConnectionsAndEachHearsATransition() throws Exception {
        String app = "redeye-polled-scale-" + UUID.randomUUID().toString().substring(0, 8);
        PGSimpleDataSource driver = PgTestSupport.dataSource();
        driver.setApplicationName(app);
        HikariConfig config = new HikariConfig();
        config.setDataSource(driver);
        config.setMaximumPoolSize(POOL);
        config.setConnectionTimeout(10_000);
        String table = PG.newTable();
        List<PostgresStore> stores = new ArrayList<>(STORES);
        AtomicInteger heard = new AtomicInteger();
        AtomicInteger gaps = new AtomicInteger();
        String op = "scale-op";
        int most = 0;
        try (HikariDataSource pool = new HikariDataSource(config)) {
            try {
                for (int i = 0; i < STORES; i++) {
                    PostgresStore s = PostgresStore.builder(pool).schema(PG.name()).table(table)
                            .createSchema(i == 0).pollFeed(Duration.ofMillis(500)).purgeInterval(Duration.ZERO)
                            .build();
                    stores.add(s);
                    s.subscribe(e -> {
                        if (e.operation().equals(op)) {
                            heard.incrementAndGet();
                        }
                    }, gaps::incrementAndGet);
                    if (i % 100 == 0) {
                        most = Math.max(most, connections(app));
                    }
                }
                stores.get(0).apply(op, AtomicOperation.force(BreakerStatus.FORCED_OPEN), Policy.defaults(),
                        System.currentTimeMillis());
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (heard.get() < STORES && System.nanoTime() < deadline) {
                    most = Math.max(most, connections(app));
                    Thread.sleep(100);
                }
                assertEquals(STORES, heard.get(), "every store's subscriber hears the transition");
                assertEquals(0, gaps.get(), "no poll failed");
                assertTrue(most <= POOL, "at most the pool's " + POOL + " connections at the server, saw " + most);
                assertTrue(most >= 1, "the count sees the pool's connections");
            } finally {
                stores.forEach(PostgresStore::close);
            }
        }
    }

    /** The connections at the server whose application name is {@code app} (this test's pool). */
    private static int connections(String app) throws Exception {
        try (Connection c = PgTestSupport.dataSource().getConnection();
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

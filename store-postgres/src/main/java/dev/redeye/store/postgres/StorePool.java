package dev.redeye.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections of a store opened from a URI: a HikariCP pool over the driver's data source, and a way
 * around the pool while it holds no connection at all.
 *
 * <p>Why the way around: after an outage HikariCP's connection creator sleeps between attempts with a backoff
 * of up to five seconds, however soon the server is back, and a call waiting on the pool would time out
 * although the server answers. So while the pool holds no connection (after an outage, or before its first),
 * a call opens one of its own straight from the driver, bounded by the driver's {@code loginTimeout}, and
 * closes it afterwards (at most the pool's size of them at once; further callers wait for the pool), while one
 * background borrow makes the pool refill; as soon as the pool holds a connection again, calls borrow as usual.
 * The first call after the server is back therefore works.
 *
 * <p>When a call finds its connection closed by the server (a restart, {@code pg_terminate_backend}), every
 * idle connection of the pool is evicted ({@link #evictAll()}): they most likely died the same way. Closing
 * this closes the pool and waits (at most the pool timeout) for a background borrow in flight. Thread-safe.
 */
final class StorePool implements SqlRunner.Source, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorePool.class);
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final PGSimpleDataSource driver;
    private final HikariDataSource pool;
    private final String name;
    private final AtomicReference<Thread> refill = new AtomicReference<>();
    /** Connections open around the pool at once, at most the pool's size. */
    private final Semaphore around;

    /**
     * @param driver            the driver's data source, with its URL, credentials and timeouts set; its
     *                          {@code loginTimeout} bounds a connection opened around the pool
     * @param size              the most connections the pool opens
     * @param waitMillis        how long a call waits for a pooled connection
     * @param validationMillis  how long the pool may spend validating an idle connection before lending it
     * @param connectionInitSql run once on every new pooled connection (the session timeouts), or null
     */
    StorePool(PGSimpleDataSource driver, int size, long waitMillis, long validationMillis, String connectionInitSql) {
        this.driver = driver;
        this.name = "redeye-pg-" + POOLS.incrementAndGet();
        this.around = new Semaphore(size);
        HikariConfig config = new HikariConfig();
        config.setDataSource(driver);
        config.setPoolName(name);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(waitMillis);
        config.setValidationTimeout(Math.min(validationMillis, waitMillis));
        config.setIdleTimeout(60_000);
        config.setInitializationFailTimeout(-1); // the store's first call reports an unreachable server itself
        config.setAutoCommit(true);
        if (connectionInitSql != null) {
            config.setConnectionInitSql(connectionInitSql);
        }
        this.pool = new HikariDataSource(config);
    }

    @Override
    public SqlRunner.Lease open() throws SQLException {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        if (bean != null && bean.getTotalConnections() == 0) {
            refillInBackground();
            // At most the pool's size of such connections at once: a herd of callers after an outage must not
            // open a connection each. The others wait for the pool.
            if (around.tryAcquire()) {
                return openAround();
            }
        }
        Connection c = pool.getConnection();
        return new SqlRunner.Lease(c, c);
    }

    /** A connection straight from the driver, closed (and its permit returned) when the lease is. */
    private SqlRunner.Lease openAround() throws SQLException {
        Connection c;
        try {
            c = driver.getConnection();
            initSession(c);
        } catch (SQLException | RuntimeException e) {
            around.release();
            throw e;
        }
        return new SqlRunner.Lease(c, () -> {
            try {
                c.close();
            } finally {
                around.release();
            }
        });
    }

    /** Runs the pool's connection-init SQL on a connection opened around the pool; closes it if that fails. */
    private void initSession(Connection c) throws SQLException {
        String init = pool.getConnectionInitSql();
        if (init != null) {
            try (var st = c.createStatement()) {
                st.execute(init);
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
        }
    }

    /** One borrow at a time from a daemon thread: a waiting borrower is what makes HikariCP create connections. */
    private void refillInBackground() {
        Thread t = new Thread(() -> {
            try (Connection c = pool.getConnection()) {
                LOG.debug("{} holds connections again", name);
            } catch (SQLException | RuntimeException e) {
                LOG.debug("{} could not refill yet: {}", name, e.getMessage());
            } finally {
                refill.set(null);
            }
        }, name + "-refill");
        t.setDaemon(true);
        if (refill.compareAndSet(null, t)) {
            t.start();
        }
    }

    /**
     * Marks every connection of the pool for eviction (idle ones are closed at once, busy ones when they come
     * back): one connection the server closed means the others from before were most likely closed too.
     */
    void evictAll() {
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        if (bean != null) {
            bean.softEvictConnections();
        }
    }

    @Override
    public void close() {
        pool.close();
        Thread t = refill.get();
        if (t != null) {
            try {
                t.join(pool.getConnectionTimeout() + 1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}

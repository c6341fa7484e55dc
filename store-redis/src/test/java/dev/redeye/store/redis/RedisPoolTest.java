package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import dev.redeye.CircuitBreaker;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.JedisPooled;

/**
 * Pools under pressure: a borrower waits at most the store timeout for a connection, {@code subscribe()} and
 * {@code close()} never hang on an exhausted pool (also a user's pool whose own maxWait is infinite), and
 * pooled connections left stale by a server restart are replaced without failing calls (a private
 * redis-server, killed and restarted on its port).
 */
class RedisPoolTest {
    /** A private server for this class, killed after its last test. */
    @AutoClose
    static final RedisProcess SERVER = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always");

    @Test
    void aUriPoolWaitsAtMostTheTimeoutForAConnectionAndCloseDoesNotWaitForBorrowedOnes() {
        String url = RedisTestSupport.url();
        RedisStore store = RedisStore.open(url + (url.contains("?") ? "&" : "?") + "poolSize=2&timeout=300&prefix="
                + RedisTestSupport.newPrefix());
        JedisPooled client = (JedisPooled) store.client();
        Connection a = client.getPool().getResource();
        Connection b = client.getPool().getResource();
        try {
            long t0 = System.nanoTime();
            StoreException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> assertThrows(StoreException.class, () -> store.get("exhausted")),
                    "a call on an exhausted pool must fail after maxWait, not hang");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 250 && ms < 3_000, "waited about the timeout (300 ms): " + ms + " ms; " + e.getMessage());
            a.close();
            assertTrue(store.get("exhausted").isEmpty(), "works again once a connection is back");
        } finally {
            assertTimeoutPreemptively(Duration.ofSeconds(5), store::close, "close() with a borrowed connection");
            b.close();
        }
    }

    @Test
    void subscribeAndCloseDoNotHangOnAnExhaustedUserPoolWithAnInfiniteMaxWait() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestSupport.url());
        ConnectionPoolConfig one = new ConnectionPoolConfig();
        one.setMaxTotal(1); // maxWait stays at commons-pool's default: forever
        try (JedisPooled user = new JedisPooled(p.address(), p.config(), one)) {
            RedisStore store = RedisStore.builder(user).prefix(RedisTestSupport.newPrefix())
                    .feedBlock(Duration.ofMillis(200)).build();
            Connection held = user.getPool().getResource();
            try {
                StoreException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                        () -> assertThrows(StoreException.class, () -> store.subscribe(ev -> { }, () -> { })),
                        "subscribe() must give up when no pooled connection frees up");
                assertTrue(e.getMessage().contains("feed"), e.getMessage());
                assertTimeoutPreemptively(Duration.ofSeconds(5), store::close);
            } finally {
                held.close();
            }
            assertEquals("PONG", user.ping(), "the user's pool is intact");
        }
    }

    @Test
    void staleConnectionsAfterARestartAreReplacedWithoutFailingReadsOrWrites() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        // idleCheck 200 ms so the test can wait past it quickly; the default is 1000 ms
        try (RedisStore store = RedisStore.open(SERVER.url() + "?idleCheck=200&prefix=" + prefix)) {
            Policy p = Policy.builder().failureThreshold(1_000).build();
            warmPool(store, p);
            int idle = ((JedisPooled) store.client()).getPool().getNumIdle();
            assertTrue(idle >= 2, "several pooled connections before the restart: " + idle);

            SERVER.kill();
            SERVER.restart(); // reloads the AOF: the data is still there
            // at once: the connections are stale but were used less than idleCheck ago, so no PING vets them;
            // the read meets a broken connection, drops the idle ones and is sent again on a fresh one
            assertEquals(8, store.get("warm").orElseThrow().failures(), "a read right after the restart");

            warmPool(store, p);
            SERVER.kill();
            SERVER.restart();
            Thread.sleep(300); // past idleCheck: the PING on borrow finds the connection stale
            assertEquals(17, store.apply("warm", AtomicOperation.failure(), p, 2).state().failures(),
                    "a counting write (never sent twice) after the restart");
        }
    }

    @Test
    void underAllowTheFirstCallAfterARestartMeetsNoStoreError() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        List<Throwable> storeErrors = new CopyOnWriteArrayList<>();
        try (RedisStore store = RedisStore.open(SERVER.url() + "?prefix=" + prefix);
                CircuitBreaker breaker = CircuitBreaker.builder().failureThreshold(1_000).store(store).closeStore(false)
                        .storeErrorPolicy(StoreErrorPolicy.ALLOW).onStoreError((op, t) -> storeErrors.add(t)).build()) {
            warmPool(store, Policy.builder().failureThreshold(1_000).build());
            SERVER.kill();
            SERVER.restart();
            assertThrows(IllegalStateException.class, () -> breaker.execute("after-restart", () -> {
                throw new IllegalStateException("the call's own failure");
            }));
            assertEquals(List.of(), storeErrors, "no store error: the gate's read is re-sent on a fresh connection,"
                    + " the failure's write finds the fresh one");
            assertEquals(1, store.get("after-restart").orElseThrow().failures(), "the failure was recorded");
        }
    }

    /** Fills the pool with several connections by running calls on 8 threads at once. */
    private static void warmPool(RedisStore store, Policy p) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                fs.add(pool.submit(() -> {
                    store.apply("warm", AtomicOperation.failure(), p, 1);
                    store.get("warm");
                }));
            }
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}

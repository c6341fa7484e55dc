package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;

/**
 * What a store checks when it opens from a URI: a node of a Redis Cluster opens a cluster client (the private
 * cluster of {@link RedisTestCluster}), and a server that can evict breaker keys is warned about once (a
 * private redis-server whose eviction settings the test changes).
 */
class RedisServerChecksTest {
    private static final String WARNING = "can evict breaker keys";
    /** A private server for this class, killed after its last test. */
    @AutoClose
    static final RedisProcess SERVER = RedisProcess.start();

    @Test
    void aRedisUriNamingOneClusterNodeOpensAClusterClientThatReachesEverySlot() {
        String url = RedisTestCluster.url();
        String prefix = RedisTestSupport.newPrefix();
        try (RedisStore store = RedisStore.open(url + "?prefix=" + prefix)) {
            assertTrue(store.client() instanceof JedisCluster, "a cluster client, not " + store.client().getClass());
            Policy p = Policy.builder().failureThreshold(100).build();
            for (int i = 0; i < 60; i++) { // 60 operations land on all three masters
                assertEquals(1, store.apply("op-" + i, AtomicOperation.failure(), p, 1).state().failures(), "op-" + i);
                assertEquals(1, store.get("op-" + i).orElseThrow().failures());
            }
            for (int i = 0; i < 60; i++) {
                store.delete("op-" + i);
            }
        }
    }

    @Test
    void aDatabaseOtherThanZeroOnAClusterNodeFailsAtOpenSayingWhy() {
        StoreException e = assertThrows(StoreException.class, () -> RedisStore.open(RedisTestCluster.url() + "/3"));
        assertTrue(e.getMessage().contains("Cluster") && e.getMessage().contains("database"), e.getMessage());
    }

    @Test
    void aServerThatCanEvictBreakerKeysIsWarnedAboutOnceAtOpen() {
        config("maxmemory", "64mb");
        for (String policy : new String[] {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
            "volatile-lfu", "volatile-random", "volatile-ttl"}) {
            config("maxmemory-policy", policy);
            String out = captureStderr(() -> {
                try (RedisStore store = RedisStore.open(SERVER.url() + "?prefix=" + RedisTestSupport.newPrefix())) {
                    store.apply("x", AtomicOperation.failure(), Policy.defaults(), 1);
                    store.get("x");
                }
            });
            assertEquals(1, count(out, WARNING), policy + ": one warning per open: " + out);
            assertTrue(out.contains(policy), out);
        }
    }

    @Test
    void noWarningWithNoevictionOrWithoutMaxmemory() {
        config("maxmemory", "64mb");
        config("maxmemory-policy", "noeviction");
        String out = captureStderr(() -> RedisStore.open(SERVER.url()).close());
        assertEquals(0, count(out, WARNING), out);
        config("maxmemory", "0");
        config("maxmemory-policy", "allkeys-lru");
        out = captureStderr(() -> RedisStore.open(SERVER.url()).close());
        assertEquals(0, count(out, WARNING), "nothing is evicted without maxmemory: " + out);
    }

    @Test
    void infoParsing() {
        assertNull(ServerChecks.evictingPolicy("# Memory\r\nmaxmemory:0\r\nmaxmemory_policy:allkeys-lru\r\n"));
        assertNull(ServerChecks.evictingPolicy("maxmemory:100\r\nmaxmemory_policy:noeviction\r\n"));
        assertEquals("volatile-ttl", ServerChecks.evictingPolicy("maxmemory:100\r\nmaxmemory_policy:volatile-ttl\r\n"));
        assertTrue(ServerChecks.clusterEnabled("# Cluster\r\ncluster_enabled:1\r\n"));
        assertTrue(!ServerChecks.clusterEnabled("# Cluster\r\ncluster_enabled:0\r\n"));
    }

    private static void config(String name, String value) {
        try (Jedis admin = new Jedis("127.0.0.1", SERVER.port())) {
            admin.configSet(name, value);
        }
    }

    private static String captureStderr(Runnable r) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setErr(err);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        err.print(out);
        return out;
    }

    private static int count(String text, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}

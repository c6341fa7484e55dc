package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ServiceLoader;

import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.TransitionFeed;
import redis.clients.jedis.JedisPooled;

/** URI parsing, password redaction and discovery of {@link RedisStoreProvider}. */
class RedisStoreProviderTest {
    private static final String SECRET = "s3cr3t-Pa55";

    @Test
    void parsesEveryPartOfTheUri() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(
                "redis://alice:" + SECRET + "@cache.internal:6380/3?prefix=myapp:&timeout=1500&feedMaxLength=500&poolSize=4");
        assertEquals("cache.internal", p.address().getHost());
        assertEquals(6380, p.address().getPort());
        assertEquals("alice", p.config().getUser());
        assertEquals(SECRET, p.config().getPassword());
        assertEquals(3, p.config().getDatabase());
        assertEquals(1500, p.config().getSocketTimeoutMillis());
        assertEquals(1500, p.config().getConnectionTimeoutMillis());
        assertFalse(p.config().isSsl());
        assertEquals("myapp:", p.prefix());
        assertEquals(500, p.feedMaxLength());
        assertEquals(4, p.poolSize());
    }

    @Test
    void defaultsTlsAndPasswordOnlyForms() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse("redis://localhost");
        assertEquals(6379, p.address().getPort());
        assertEquals(0, p.config().getDatabase());
        assertNull(p.config().getUser());
        assertNull(p.config().getPassword());
        assertEquals("", p.prefix());
        assertEquals(16, p.poolSize());

        RedisStoreProvider.Parsed tls = RedisStoreProvider.parse("rediss://:" + SECRET + "@redis.example.com:6390/");
        assertTrue(tls.config().isSsl());
        assertNull(tls.config().getUser());
        assertEquals(SECRET, tls.config().getPassword());

        RedisStoreProvider.Parsed bare = RedisStoreProvider.parse("redis://" + SECRET + "@h");
        assertEquals(SECRET, bare.config().getPassword());

        RedisStoreProvider.Parsed enc = RedisStoreProvider.parse("redis://u:p%40ss%3Aw+rd@h?prefix=a%7Bb%7D");
        assertEquals("p@ss:w+rd", enc.config().getPassword());
        assertEquals("a{b}", enc.prefix());

        RedisStoreProvider.Parsed v6 = RedisStoreProvider.parse("redis://[::1]:7000");
        assertEquals("::1", v6.address().getHost());
        assertEquals(7000, v6.address().getPort());
    }

    @Test
    void malformedUrisFailWithoutEverShowingThePassword() {
        String[] bad = {
            "redis://u:" + SECRET + "@host:6379/notanumber",
            "redis://u:" + SECRET + "@host:6379?prefx=typo",
            "redis://u:" + SECRET + "@host:6379?timeout=-1",
            "redis://u:" + SECRET + "@ho st:6379",
            "redis://u:" + SECRET + "@:6379",
            "postgresql://u:" + SECRET + "@host/db",
        };
        for (String uri : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new RedisStoreProvider().open(uri), uri);
            assertFalse(e.getMessage().contains(SECRET), "password leaked: " + e.getMessage());
            assertTrue(e.getMessage().contains("u:***@"), "redacted URI named: " + e.getMessage());
            assertNull(e.getCause(), "no cause that could quote the URI");
        }
        assertThrows(IllegalArgumentException.class, () -> new RedisStoreProvider().open(null));
    }

    @Test
    void anUnreachableServerIsAStoreExceptionWithoutThePassword() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            StoreException e = assertThrows(StoreException.class,
                    () -> new RedisStoreProvider().open("redis://u:" + SECRET + "@127.0.0.1:1?timeout=500"));
            assertFalse(e.getMessage().contains(SECRET), e.getMessage());
            assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
        } finally {
            System.setErr(err);
        }
        assertFalse(captured.toString(StandardCharsets.UTF_8).contains(SECRET), "password in the log output");
    }

    @Test
    void serviceLoaderFindsTheProviderForBothSchemes() {
        boolean found = false;
        for (StoreProvider p : ServiceLoader.load(StoreProvider.class)) {
            if (p instanceof RedisStoreProvider) {
                found = true;
                assertEquals(java.util.Set.of("redis", "rediss"), p.schemes());
            }
        }
        assertTrue(found, "META-INF/services registers RedisStoreProvider");
    }

    @Test
    void theEnginesStoresOpenFindsThisProvider() {
        String prefix = RedisTestSupport.newPrefix();
        String url = RedisTestSupport.url();
        String uri = url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
        try (Store store = dev.redeye.Stores.open(uri, dev.redeye.OpenMode.STRICT)) {
            assertTrue(store instanceof RedisStore, "Stores.open picked " + store.getClass());
            assertTrue(store.get("nothing").isEmpty());
        }
        try (Store lazy = dev.redeye.Stores.open(uri)) {
            assertTrue(lazy.get("nothing").isEmpty(), "the default, lazy store reaches the same server");
            assertTrue(lazy.capability(RedisStore.class).isPresent(), "the connected store is reachable by type");
        }
        assertTrue(dev.redeye.Stores.schemes().containsAll(java.util.Set.of("redis", "rediss")));
    }

    @Test
    void opensAWorkingStoreWithPrefixAndFeedFromTheUri() throws Exception {
        String prefix = RedisTestSupport.newPrefix();
        String url = RedisTestSupport.url();
        String uri = url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
        try (JedisPooled raw = RedisTestSupport.raw()) {
            try (Store store = new RedisStoreProvider().open(uri)) {
                assertTrue(store instanceof RedisStore);
                RedisStore rs = (RedisStore) store;
                assertEquals(prefix, rs.prefix());
                java.util.List<dev.redeye.api.TransitionEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
                store.capability(TransitionFeed.class).orElseThrow().subscribe(events::add, () -> { });
                store.put("uri-op", BreakerState.INITIAL, Duration.ofMinutes(1));
                assertTrue(raw.exists(prefix + "{uri-op}:state"));
                rs.apply("uri-op", AtomicOperation.failure(), Policy.builder().failureThreshold(1).build(), 1);
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (events.isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(1, events.size(), "the feed over the URI's own connection details");
                assertEquals(1, RedisTestSupport.clientIds(raw, rs.feedClientName()).size());
            } finally {
                RedisTestSupport.deleteAll(raw, prefix);
            }
        }
    }
}

package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.Stores;
import dev.redeye.spi.Store;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The shared stores these tests run adapters over: a named in-process store ({@code memory://NAME}) and the
 * build's real Redis ({@code REDEYE_REDIS_URL}; a test fails saying how to provide it, never skips), each under
 * a fresh name or key prefix so that tests and parallel runs never meet; and the bounded wait for what a store's
 * feed brings to another instance.
 */
final class TestStores {
    private TestStores() {
    }

    /** The kinds of shared store, for parameterized tests. */
    enum Kind {
        MEMORY,
        REDIS
    }

    /**
     * A fresh location of a shared store of {@code kind}: every {@link #open} of it is another client of one
     * store (another instance of the fleet). {@link Location#cleanUp()} deletes what the tests left there.
     */
    static Location fresh(Kind kind) {
        String id = UUID.randomUUID().toString().substring(0, 12);
        return kind == Kind.MEMORY ? new Location("memory://r4j-" + id, null)
                : redis("redeye-test:resilience4j:" + id + ":");
    }

    private static Location redis(String prefix) {
        String url = redisUrl();
        return new Location(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix, prefix);
    }

    /**
     * Waits, up to 5 s of real time, for what another thread brings (the store's feed delivers on its own
     * thread), polling every 5 ms.
     *
     * @throws AssertionError naming {@code what} if it did not come in time
     */
    static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 5 s: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** The build's Redis, from {@code REDEYE_REDIS_URL}. */
    static String redisUrl() {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            fail("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh, or export "
                    + "REDEYE_REDIS_URL=redis://127.0.0.1:6379)");
        }
        return url.trim();
    }

    /** One store location: its URI, and for Redis the key prefix to delete afterwards. */
    static final class Location {
        private final String uri;
        private final String redisPrefix;

        private Location(String uri, String redisPrefix) {
            this.uri = uri;
            this.redisPrefix = redisPrefix;
        }

        /** A new client of the store (the caller closes it, or hands it to a factory that does). */
        Store open() {
            return Stores.open(uri);
        }

        /** Deletes every Redis key under the prefix (state, trial claims, the feed stream); nothing for memory. */
        void cleanUp() {
            if (redisPrefix == null) {
                return;
            }
            try (JedisPooled jedis = new JedisPooled(URI.create(redisUrl()))) {
                List<String> keys = new ArrayList<>();
                String cursor = ScanParams.SCAN_POINTER_START;
                do {
                    ScanResult<String> page = jedis.scan(cursor, new ScanParams().match(redisPrefix + "*").count(100));
                    keys.addAll(page.getResult());
                    cursor = page.getCursor();
                } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
                keys.forEach(jedis::del);
            }
        }

        @Override
        public String toString() {
            return uri;
        }
    }
}

package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import java.time.Duration;

/**
 * The three cache configurations of the distributed tables. The engine has no switch that turns the
 * open-state cache off: its builder accepts an {@code openCacheRefresh} of 1 ms at the least, so "no caches"
 * is that minimum (a rejection re-reads the store at most once per millisecond) with no local cache.
 */
enum CacheConfig {
    /** {@code openCacheRefresh(1 ms)}, the builder's minimum, and no local cache. */
    NO_CACHES("no caches (openCacheRefresh 1 ms)"),
    /** The reference defaults: open-state cache refreshed every 2 s, no local cache. */
    DEFAULTS("defaults (openCacheRefresh 2 s)"),
    /** Defaults plus {@code localCache()}: a trusted closed state is reused for 100 ms. */
    LOCAL_CACHE("localCache(100 ms)");

    /** The stale tolerance {@code localCache()} uses. */
    static final Duration STALE_TOLERANCE = Duration.ofMillis(100);

    private final String label;

    CacheConfig(String label) {
        this.label = label;
    }

    /** The row label in the tables. */
    String label() {
        return label;
    }

    /** Applies this configuration to a builder and returns it. */
    CircuitBreakerBuilder apply(CircuitBreakerBuilder b) {
        switch (this) {
            case NO_CACHES:
                return b.openCacheRefresh(Duration.ofMillis(1));
            case LOCAL_CACHE:
                return b.localCache(STALE_TOLERANCE);
            default:
                return b;
        }
    }
}

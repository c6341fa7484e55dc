package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import org.junit.jupiter.api.Test;

/**
 * A missing capability is reported once per store instance, however many breakers are built over it (a TCK
 * run over one store used to log the same lines once per breaker); another store instance is reported again.
 */
class CapabilityWarningsTest {

    @Test
    void oncePerStoreInstanceNotOncePerBreaker() {
        InMemoryStore backend = new InMemoryStore();
        try (LogCapture log = LogCapture.start()) {
            SpyStore one = SpyStore.over(backend, AtomicUpdates.class, TrialClaims.class);
            for (int i = 0; i < 5; i++) {
                CircuitBreaker.builder().store(one).closeStore(false).build().close();
            }
            assertEquals(1, log.warnings("lacks AtomicUpdates"));
            assertEquals(1, log.warnings("lacks TrialClaims"));
            SpyStore other = SpyStore.over(backend, AtomicUpdates.class);
            CircuitBreaker.builder().store(other).closeStore(false).build().close();
            assertEquals(2, log.warnings("lacks AtomicUpdates"), "another store instance is reported again");
            assertEquals(1, log.warnings("lacks TrialClaims"));
        } finally {
            backend.close();
        }
    }

    @Test
    void theFeedWarningComesWithTheFirstBreakerThatWantsTheLocalCache() {
        InMemoryStore backend = new InMemoryStore();
        try (LogCapture log = LogCapture.start()) {
            SpyStore s = SpyStore.over(backend, TransitionFeed.class);
            CircuitBreaker.builder().store(s).closeStore(false).build().close();
            assertEquals(0, log.warnings("lacks TransitionFeed"), "no breaker asked for the local cache yet");
            for (int i = 0; i < 3; i++) {
                CircuitBreaker.builder().store(s).closeStore(false).localCache().build().close();
            }
            assertEquals(1, log.warnings("lacks TransitionFeed: the local cache is unavailable"));
        } finally {
            backend.close();
        }
    }
}

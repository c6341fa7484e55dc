package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.QuorumEngineScenario;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;

/**
 * Quorum opening through the engine over Redis: two breakers with different instance ids, each over a store of its
 * own opened with {@code Stores.open("redis://...")} (lazy: it connects on first use, and declares
 * {@link QuorumState} before), on one key prefix. One instance failing alone never opens the fleet (it is tripped
 * locally, as an outlier, reported once); the failure of a second instance opens it, for both.
 */
class RedisQuorumEngineTest extends WithRedisPrefix {
    private static final String OP = "inventory";

    private final List<Outlier> outliers = new CopyOnWriteArrayList<>();

    private String uri() {
        String url = RedisTestSupport.url();
        return url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
    }

    private CircuitBreaker consecutive(Store store, String id) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0).failureThreshold(3).quorum(2)
                .instanceId(id).resetTimeout(Duration.ofSeconds(60)).onOutlier(outliers::add).build();
    }

    @Test
    void oneInstanceFailingAloneNeverOpensTheFleetAndASecondInstanceOpensIt() {
        Store lazy = Stores.open(uri());
        try (CircuitBreaker a = consecutive(lazy, "pod-a"); CircuitBreaker b = consecutive(Stores.open(uri()), "pod-b")) {
            assertTrue(lazy.capability(QuorumState.class).isPresent(), "declared before it connects");
            QuorumEngineScenario.run(a, b, outliers, OP, 100, "the shared key");
            assertTrue(lazy.capability(QuorumState.class).isPresent(), "and once connected");
        }
    }

    /**
     * A time window with a quorum fraction of 0.6: of three instances seen in the window, one failing (however
     * often) opens nothing; the second failing instance makes the quorum and opens the fleet.
     */
    @Test
    void aSlidingWindowWithAQuorumFractionOpensOnlyWithEnoughFailingInstances() {
        try (CircuitBreaker a = window(Stores.open(uri()), "pod-a");
             CircuitBreaker b = window(Stores.open(uri()), "pod-b");
             CircuitBreaker c = window(Stores.open(uri()), "pod-c")) {
            assertEquals("ok", b.execute(OP, () -> "ok"));
            assertEquals("ok", c.execute(OP, () -> "ok"));
            for (int i = 0; i < 20; i++) {
                a.recordFailure(OP);
            }
            assertEquals(BreakerStatus.CLOSED, b.status(OP), "one failing instance of three is below 0.6");
            b.recordFailure(OP);
            assertEquals(BreakerStatus.OPEN, c.status(OP), "two of three make the quorum fraction of 0.6");
        }
    }

    private CircuitBreaker window(Store store, String id) {
        return CircuitBreaker.builder().store(store).closeStore(true).jitter(0)
                .slidingWindow(SlidingWindowType.TIME_BASED, 60).failureRateThreshold(50).minimumNumberOfCalls(5)
                .quorumFraction(0.6).instanceId(id).resetTimeout(Duration.ofSeconds(60)).build();
    }
}

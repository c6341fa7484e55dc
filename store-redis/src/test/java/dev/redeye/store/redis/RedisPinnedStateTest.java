package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;

/**
 * A pinned state (forced, or with a stored mode: an operator's decision) has no expiry, whatever writes it: a
 * mode stored by force_mode, every write while it stays stored (a would_open under METRICS_ONLY), an unchanged
 * call (PERSIST), put, and an operator's opening under a policy mode other than NORMAL (which stores NORMAL); the
 * clean-up ttl applies again from the first write that leaves it unpinned.
 */
class RedisPinnedStateTest extends WithRedisPrefix {
    private static final Policy ONE = Policy.builder().failureThreshold(1).build();

    private RedisStore store;

    @BeforeEach
    void setUp() {
        store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).build();
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private long pttl(String op) {
        return raw.pttl(store.stateKey(op));
    }

    @Test
    void aStoredModeHasNoExpiryUntilTheModeIsCleared() {
        store.apply("m", AtomicOperation.failure(), Policy.builder().failureThreshold(5).build(), 1);
        assertTrue(pttl("m") > 0);
        StateChange c = store.apply("m", AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), ONE, 2);
        assertEquals(TransitionKind.MODE_CHANGED, c.transition());
        assertEquals(-1, pttl("m"), "a stored mode never expires");
        StateChange would = store.apply("m", AtomicOperation.failure(), ONE, 3);
        assertEquals(TransitionKind.WOULD_OPEN, would.transition());
        assertFalse(would.state().open());
        assertEquals(-1, pttl("m"), "nor does any write while it is stored");

        store.apply("m", AtomicOperation.forceMode(BreakerMode.DISABLED), ONE, 4);
        raw.pexpire(store.stateKey("m"), 600_000); // a ttl from elsewhere (an older instance)
        StateChange quiet = store.apply("m", AtomicOperation.failure(), ONE, 5);
        assertFalse(quiet.changed(), "disabled: nothing is recorded");
        assertEquals(-1, pttl("m"), "an unchanged pinned state is persisted");

        StateChange cleared = store.apply("m", AtomicOperation.forceMode(BreakerMode.DEFAULT), ONE, 6);
        assertEquals(BreakerMode.DEFAULT, cleared.state().mode());
        assertTrue(pttl("m") > 0, "the ttl applies again");
    }

    @Test
    void anOperatorsOpeningUnderAnotherPolicyModeStoresNormalWithoutExpiry() {
        Policy metrics = ONE.toBuilder().mode(BreakerMode.METRICS_ONLY).build();
        StateChange h = store.apply("o", AtomicOperation.force(BreakerStatus.HALF_OPEN), metrics, 1);
        assertEquals(BreakerMode.NORMAL, h.state().mode());
        assertFalse(h.state().forced());
        assertEquals(-1, pttl("o"), "not forced, but the stored mode pins it");
        StateChange closed = store.apply("o", AtomicOperation.force(BreakerStatus.CLOSED), metrics, 2);
        assertEquals(BreakerMode.DEFAULT, closed.state().mode());
        assertTrue(pttl("o") > 0);
        StateChange normal = store.apply("n", AtomicOperation.force(BreakerStatus.HALF_OPEN), ONE, 1);
        assertEquals(BreakerMode.DEFAULT, normal.state().mode(), "NORMAL is the policy's: DEFAULT is stored");
        assertTrue(pttl("n") > 0);
    }

    @Test
    void putOfAStateWithAModeIgnoresTheTtl() {
        store.put("p", BreakerState.INITIAL.toBuilder().mode(BreakerMode.METRICS_ONLY).build(), Duration.ofMinutes(1));
        assertEquals(-1, pttl("p"));
        store.put("p", BreakerState.INITIAL, Duration.ofMinutes(1));
        assertTrue(pttl("p") > 0);
    }
}

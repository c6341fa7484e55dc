package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The upgrade path from the hash layout: keys written by the previous release (a hash of ten fields, written
 * here by that release's own Lua library, {@code redeye-hash-layout.lua}, run through the store's library
 * mechanism, or by its put) are read by {@code get} and by every function, and behave as keys of the string
 * layout: the first write of the state replaces the hash with the value, in the same call.
 */
class RedisHashLayoutUpgradeTest extends WithRedisPrefix {
    private static final LuaLibrary PREVIOUS = LuaLibrary.load("redeye-hash-layout.lua");
    private static final Policy THREE = Policy.builder().failureThreshold(3).build();

    private RedisStore store;

    @BeforeEach
    void setUp() {
        store = newStore(LuaRunner.Mode.AUTO);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /**
     * The previous release's state function, with the arguments that release sent (op, now, policy, own argument,
     * removes claims): its atomic writes leave hashes. Its reply is that release's own.
     */
    private Object previous(String op, String wireOp, Policy policy, long now) {
        return new LuaRunner(raw, PREVIOUS, LuaRunner.Mode.AUTO).run(LuaLibrary.Fn.STATE, List.of(store.stateKey(op)),
                List.of(wireOp, Long.toString(now), RedisStore.policyArgument(policy), "", "0"));
    }

    private RedisStore newStore(LuaRunner.Mode mode) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).publishInScript(true)
                .scripting(mode).build();
    }

    /** Two failures recorded by the previous release: a hash, as it left it. */
    private BreakerState previousHash(String op) {
        previous(op, "failure", THREE, 1);
        previous(op, "failure", THREE, 2);
        assertEquals("hash", raw.type(store.stateKey(op)), "the previous release writes a hash");
        assertEquals(10, raw.hlen(store.stateKey(op)));
        BreakerState s = store.get(op).orElseThrow();
        assertEquals(2, s.failures());
        return s;
    }

    private void assertStringLayout(String op) {
        assertEquals("string", raw.type(store.stateKey(op)), "converted to the string layout");
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aSubThresholdFailureOverAHashCountsOnAndConvertsIt(LuaRunner.Mode mode) {
        try (RedisStore s = newStore(mode)) {
            BreakerState before = previousHash("sub");
            assertEquals(Optional.of(before), s.get("sub"), "get reads the hash");
            Policy many = Policy.builder().failureThreshold(100).build();
            StateChange c = s.apply("sub", AtomicOperation.failure(), many, 3);
            assertEquals(before, c.previous());
            assertEquals(3, c.state().failures());
            assertEquals(3, c.state().lastFailureAt());
            assertEquals(before.version(), c.state().version());
            assertStringLayout("sub");
            assertEquals(Optional.of(c.state()), s.get("sub"));
            long ttl = raw.pttl(s.stateKey("sub"));
            assertTrue(ttl > 0 && ttl <= many.stateTtlMillis(), "the ttl is set: " + ttl);
        }
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void theOpeningOverAHashMovesTheVersionByOneAndPublishesIt(LuaRunner.Mode mode) {
        try (RedisStore s = newStore(mode)) {
            BreakerState before = previousHash("op");
            StateChange c = s.apply("op", AtomicOperation.failure(), THREE, 3);
            assertEquals(TransitionKind.OPENED, c.transition());
            assertEquals(before, c.previous());
            assertEquals(before.version() + 1, c.state().version());
            assertStringLayout("op");
            assertEquals(Optional.of(c.state()), s.get("op"));
        }
    }

    @Test
    void aSuccessThatChangesNothingLeavesTheHashAsItIs() {
        previous("quiet", "failure", THREE, 1);
        previous("quiet", "success", THREE, 2); // failures 0 again
        BreakerState before = store.get("quiet").orElseThrow();
        StateChange c = store.apply("quiet", AtomicOperation.success(), THREE, 3);
        assertFalse(c.changed());
        assertEquals(before, c.state());
        assertEquals("hash", raw.type(store.stateKey("quiet")), "nothing written, nothing converted");
    }

    @Test
    void claimsAndTrialOutcomesOverAHashBehaveAsOverAValue() {
        Policy p = Policy.builder().failureThreshold(1).successThreshold(1).build();
        previous("trial", "failure", p, 1);
        assertEquals("hash", raw.type(store.stateKey("trial")));
        BreakerState opened = store.get("trial").orElseThrow();
        assertTrue(opened.open());
        Optional<String> token = store.claimTrial("trial", 1, Duration.ofSeconds(30));
        assertTrue(token.isPresent(), "the claim is won");
        assertTrue(store.claimTrial("trial", 1, Duration.ofSeconds(30)).isEmpty(), "and held");
        assertEquals("hash", raw.type(store.stateKey("trial")), "claims do not touch the state");
        StateChange stale = store.apply("trial", AtomicOperation.trialSucceeded(opened.version() - 1), p, 2);
        assertFalse(stale.changed(), "an outcome of another period changes nothing");
        StateChange closed = store.apply("trial", AtomicOperation.trialSucceeded(opened.version()), p, 3);
        assertEquals(TransitionKind.CLOSED, closed.transition());
        assertEquals(opened.version() + 1, closed.state().version());
        assertStringLayout("trial");
        store.releaseTrial("trial", token.get());
        assertTrue(store.claimTrial("trial", 1, Duration.ofSeconds(30)).isPresent(), "released");
    }

    @Test
    void forcingOverAHashConvertsItWithoutExpiryAndRemovesTheClaims() {
        previousHash("forced");
        assertTrue(store.claimTrial("forced", 2, Duration.ofSeconds(30)).isPresent());
        StateChange f = store.apply("forced", AtomicOperation.force(BreakerStatus.FORCED_OPEN), THREE, 3);
        assertEquals(TransitionKind.FORCED_OPEN, f.transition());
        assertStringLayout("forced");
        assertEquals(-1, raw.pttl(store.stateKey("forced")), "a forced state has no expiry");
        StateChange h = store.apply("forced", AtomicOperation.force(BreakerStatus.HALF_OPEN), THREE, 4);
        assertEquals(TransitionKind.FORCED_HALF_OPEN, h.transition());
        assertFalse(raw.exists(store.claimsKey("forced")), "a forced half-open removes the claims");
        assertTrue(raw.pttl(store.stateKey("forced")) > 0, "unforced: the ttl applies again");
    }

    @Test
    void anUnchangedForcedHashIsConvertedWithoutExpiry() {
        previous("held", "force_open", THREE, 1);
        assertEquals("hash", raw.type(store.stateKey("held")));
        assertEquals(-1, raw.pttl(store.stateKey("held")));
        BreakerState before = store.get("held").orElseThrow();
        assertTrue(before.forced());
        StateChange c = store.apply("held", AtomicOperation.success(), THREE, 2); // a success while open changes nothing
        assertFalse(c.changed());
        assertEquals(before, c.state());
        assertStringLayout("held");
        assertEquals(-1, raw.pttl(store.stateKey("held")));
        assertEquals(Optional.of(before), store.get("held"));
    }

    @Test
    void putAndDeleteReplaceAHashAndVersionsNeverGoBackwards() {
        BreakerState before = previousHash("put");
        BreakerState written = BreakerState.INITIAL.toBuilder().failures(7).version(before.version() + 5).build();
        store.put("put", written, Duration.ofMinutes(5));
        assertStringLayout("put");
        assertEquals(Optional.of(written), store.get("put"));

        BreakerState gone = previousHash("del");
        store.delete("del");
        assertFalse(raw.exists(store.stateKey("del")));
        assertEquals(Optional.empty(), store.get("del"));
        StateChange reborn = store.apply("del", AtomicOperation.failure(), THREE, 10);
        assertTrue(reborn.state().version() > gone.version(), "a new life starts above the hash's version: "
                + reborn.state().version() + " vs " + gone.version());
        assertStringLayout("del");
    }

    /** The previous release's put (DEL, HSET of StateCodec's fields, PEXPIRE), called through its library. */
    @Test
    void aHashWrittenByThePreviousPutIsReadAlike() {
        String k = store.stateKey("oldput");
        BreakerState s = BreakerState.INITIAL.toBuilder().failures(2).lastFailureAt(5).errorRate(0.25).samples(4)
                .version(42).build();
        List<String> args = new ArrayList<>(List.of("600000"));
        StateCodec.toFields(s).forEach((f, v) -> {
            args.add(f);
            args.add(v);
        });
        new LuaRunner(raw, PREVIOUS, LuaRunner.Mode.AUTO).run(LuaLibrary.Fn.PUT, List.of(k), args);
        assertEquals("hash", raw.type(k));
        assertEquals(Optional.of(s), store.get("oldput"));
        StateChange c = store.apply("oldput", AtomicOperation.failure(), Policy.builder().failureThreshold(10).build(), 6);
        assertEquals(s, c.previous());
        assertEquals(3, c.state().failures());
        assertStringLayout("oldput");
        assertEquals(Optional.of(c.state()), store.get("oldput"));
    }

    @Test
    void aHashOfAnOlderLayoutWithoutVersionReadsAsUnknownAndGetsOneOnItsFirstTransition() {
        Map<String, String> f = new HashMap<>(StateCodec.toFields(BreakerState.INITIAL.toBuilder().failures(2)
                .lastFailureAt(1).build()));
        f.remove(StateCodec.VERSION);
        raw.hset(store.stateKey("nover"), f);
        assertEquals(BreakerState.UNKNOWN_VERSION, store.get("nover").orElseThrow().version());
        StateChange c = store.apply("nover", AtomicOperation.failure(), THREE, 2);
        assertEquals(TransitionKind.OPENED, c.transition());
        assertEquals(1, c.state().version());
        assertStringLayout("nover");
    }

    @Test
    void aMalformedHashIsStillAStoreExceptionAndIsLeftAlone() {
        Map<String, String> bad = new HashMap<>(StateCodec.toFields(BreakerState.INITIAL));
        bad.put(StateCodec.FAILURES, "twelve");
        raw.hset(store.stateKey("bad"), bad);
        assertThrows(StoreException.class, () -> store.get("bad"));
        assertThrows(StoreException.class, () -> store.apply("bad", AtomicOperation.failure(), THREE, 1));
        assertEquals("hash", raw.type(store.stateKey("bad")));
        assertEquals("twelve", raw.hget(store.stateKey("bad"), StateCodec.FAILURES));
    }

    /**
     * A fleet upgraded one instance at a time: the previous release's library refuses a key this release
     * converted as data of another type (WRONGTYPE, which that release's store reports as a store error, its
     * breaker's onStoreError), never reading it as a wrong state, and changes nothing.
     */
    @Test
    void thePreviousReleaseRefusesAConvertedKey() {
        previousHash("mixed");
        StateChange c = store.apply("mixed", AtomicOperation.failure(), THREE, 3);
        assertStringLayout("mixed");
        JedisDataException e = assertThrows(JedisDataException.class, () -> previous("mixed", "failure", THREE, 4));
        assertTrue(e.getMessage().contains("WRONGTYPE"), e.getMessage());
        assertEquals(Optional.of(c.state()), store.get("mixed"));
    }
}

package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StateCodec;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A script never half-applies: ttls are capped in Java (a "forever" ttl would make PEXPIRE fail after HSET
 * ran, and Redis does not roll a script back), and every script checks its arguments before its first
 * write, so a malformed call leaves every key exactly as it was (same content, same TTL).
 */
class RedisScriptInputTest {
    private static final Duration FOREVER_MS = Duration.ofMillis(Long.MAX_VALUE);
    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private JedisPooled raw;
    private String prefix;
    private RedisStore store;

    @BeforeEach
    void setUp() {
        raw = RedisTestSupport.raw();
        prefix = RedisTestSupport.newPrefix();
        store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).build();
    }

    @AfterEach
    void tearDown() {
        store.close();
        RedisTestSupport.deleteAll(raw, prefix);
        raw.close();
    }

    @Test
    void aForeverStateTtlIsCappedAndNeverLeavesAHalfWrittenState() {
        Policy forever = Policy.builder().failureThreshold(3).stateTtl(FOREVER_MS).build();
        assertEquals(1, store.recordFailure("f", forever, 1).state().failures(), "a new key");
        assertEquals(2, store.recordFailure("f", forever, 2).state().failures(), "an existing key");
        long ttl = raw.pttl(store.stateKey("f"));
        assertTrue(ttl > RedisStore.MAX_TTL_MILLIS - 60_000 && ttl <= RedisStore.MAX_TTL_MILLIS,
                "capped at 100 years: " + ttl);
        assertTrue(store.recordFailure("f", forever, 3).isTransition(), "opens normally");
    }

    @Test
    void foreverTtlsOfPutAndClaimsAreCappedToo() {
        store.put("p", BreakerState.INITIAL, FOREVER);
        long ttl = raw.pttl(store.stateKey("p"));
        assertTrue(ttl > RedisStore.MAX_TTL_MILLIS - 60_000 && ttl <= RedisStore.MAX_TTL_MILLIS, "put: " + ttl);

        assertTrue(store.claimTrial("c1", 1, FOREVER).isPresent(), "one permit");
        assertTrue(raw.pttl(store.claim1Key("c1")) > 0);
        assertTrue(store.claimTrial("c2", 2, FOREVER).isPresent(), "several permits");
        assertEquals(1, raw.zcard(store.claimsKey("c2")));
        long zttl = raw.pttl(store.claimsKey("c2"));
        assertTrue(zttl > 0 && zttl <= RedisStore.MAX_TTL_MILLIS, "claims key: " + zttl);
    }

    @Test
    void malformedArgumentsOfStateLuaChangeNothing() {
        Policy p = Policy.builder().failureThreshold(5).build();
        store.recordFailure("s", p, 1);
        String k = store.stateKey("s");
        Snapshot before = Snapshot.of(raw, k);
        List<String> keys = List.of(k, store.claimsKey("s"), store.claim1Key("s"));
        LuaScript state = LuaScript.load("state.lua");
        List<String> good = List.of("failure", "2", "0", "5", "0", "0.5", "10", "0.5", "1", "60000", "0", "-1");
        // per argument, values that are malformed or out of range (see the ARGV list of state.lua)
        List<List<String>> bad = List.of(
                List.of("explode", ""),                                  // op
                List.of("", "abc", "1.5"),                               // now
                List.of("3", "-1", "x"),                                 // strategy (0, 1, 2: Strategy.code())
                List.of("0", "x", ""),                                   // failureThreshold
                List.of("-1", "x"),                                      // maxGapBetweenFailures
                List.of("x", "1.5", ""),                                 // errorRateThreshold
                List.of("x", "-1"),                                      // minimumCalls
                List.of("x", "2"),                                       // errorRateDecay
                List.of("0", "x"),                                       // successThreshold
                List.of("0", "-1", "x", "", Long.toString(Long.MAX_VALUE)), // ttl: the "forever" PEXPIRE refused
                List.of("x", ""),                                        // openedAt of a forced half-open
                List.of("-2", "x"));                                     // trial version
        for (int i = 0; i < good.size(); i++) {
            for (String b : bad.get(i)) {
                List<String> args = new ArrayList<>(good);
                args.set(i, b);
                assertRejected(state, keys, args, k, before);
            }
        }
        assertRejected(state, keys, good.subList(0, 9), k, before); // too few arguments
        // and the good arguments do write
        state.run(store.client(), keys, good);
        assertEquals("2", raw.hget(k, StateCodec.FAILURES));
    }

    @Test
    void malformedArgumentsOfPutLuaLeaveTheOldStateInPlace() {
        store.put("p", BreakerState.INITIAL.toBuilder().failures(4).build(), Duration.ofMinutes(5));
        String k = store.stateKey("p");
        Snapshot before = Snapshot.of(raw, k);
        LuaScript put = LuaScript.load("put.lua");
        List<String> pairs = new ArrayList<>();
        StateCodec.toFields(BreakerState.INITIAL).forEach((f, v) -> {
            pairs.add(f);
            pairs.add(v);
        });
        List<String> odd = new ArrayList<>(List.of("60000"));
        odd.addAll(pairs);
        odd.add("dangling-field");
        assertRejected(put, List.of(k), odd, k, before);
        for (String ttl : List.of("-5", "abc", "", Long.toString(Long.MAX_VALUE))) {
            List<String> args = new ArrayList<>(List.of(ttl));
            args.addAll(pairs);
            assertRejected(put, List.of(k), args, k, before);
        }
        assertRejected(put, List.of(k), List.of("60000"), k, before);
    }

    @Test
    void malformedArgumentsOfClaimLuaDoNotEvenPruneExpiredClaims() {
        String k = store.claimsKey("c");
        raw.zadd(k, 1, "long-expired-claim"); // expired: a valid claim call would prune it
        Snapshot before = Snapshot.of(raw, k);
        LuaScript claim = LuaScript.load("claim.lua");
        List<String> keys = List.of(k, store.claim1Key("c"));
        for (List<String> args : List.of(List.of("2", "x", "token"), List.of("2", "", "token"),
                List.of("2", Long.toString(Long.MAX_VALUE), "token"), List.of("0", "1000", "token"),
                List.of("two", "1000", "token"), List.of("2", "1000", ""), List.of("2", "1000"))) {
            assertRejected(claim, keys, args, k, before);
        }
        assertFalse(raw.exists(store.claim1Key("c")));
    }

    @Test
    void malformedArgumentsOfPublishLuaAppendNothing() {
        String k = store.feedKey();
        raw.xadd(k, redis.clients.jedis.StreamEntryID.NEW_ENTRY, Map.of("seed", "1"));
        raw.pexpire(k, 600_000);
        Snapshot before = Snapshot.of(raw, k);
        LuaScript publish = LuaScript.load("publish.lua");
        for (List<String> args : List.of(List.of("100", "forever", "op", "x"), List.of("100", "", "op", "x"),
                List.of("100", Long.toString(Long.MAX_VALUE), "op", "x"), List.of("0", "1000", "op", "x"),
                List.of("100", "1000", "op"), List.of("100", "1000"))) {
            assertRejected(publish, List.of(k), args, k, before);
        }
    }

    private void assertRejected(LuaScript script, List<String> keys, List<String> args, String key, Snapshot before) {
        JedisDataException e = assertThrows(JedisDataException.class, () -> script.run(store.client(), keys, args),
                script.name() + " accepted " + args);
        // first what matters: nothing was written; then that the script said why
        assertTrue(raw.exists(key), script.name() + " " + args + " deleted " + key + " (" + e.getMessage() + ")");
        Snapshot after = Snapshot.of(raw, key);
        assertArrayEquals(before.dump, after.dump, script.name() + " " + args + " changed " + key + " ("
                + e.getMessage() + ")");
        assertEquals(before.persistent, after.persistent, script.name() + " " + args + " changed the TTL of " + key);
        assertTrue(e.getMessage().startsWith("REDEYE_BAD_ARGS"), script.name() + " " + args + ": " + e.getMessage());
    }

    /** The serialized value (DUMP) of a key and whether it has no TTL. */
    private static final class Snapshot {
        final byte[] dump;
        final boolean persistent;

        private Snapshot(byte[] dump, boolean persistent) {
            this.dump = dump;
            this.persistent = persistent;
        }

        static Snapshot of(JedisPooled raw, String key) {
            assertTrue(raw.exists(key), key + " exists");
            return new Snapshot(raw.dump(key), raw.pttl(key) == -1);
        }
    }
}

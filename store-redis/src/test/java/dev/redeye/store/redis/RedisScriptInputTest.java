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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A script never half-applies: ttls are capped in Java (a "forever" ttl would make SET PX fail, or PEXPIRE
 * after a write, and Redis does not roll a script back), and every script checks its arguments before its first
 * write, so a malformed call leaves every key exactly as it was (same content, same TTL).
 */
class RedisScriptInputTest extends WithRedisPrefix {
    private static final Duration FOREVER_MS = Duration.ofMillis(Long.MAX_VALUE);
    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private RedisStore store;

    @BeforeEach
    void setUp() {
        store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).build();
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    @Test
    void aForeverStateTtlIsCappedAndNeverLeavesAHalfWrittenState() {
        Policy forever = Policy.builder().failureThreshold(3).stateTtl(FOREVER_MS).build();
        assertEquals(1, store.apply("f", AtomicOperation.failure(), forever, 1).state().failures(), "a new key");
        assertEquals(2, store.apply("f", AtomicOperation.failure(), forever, 2).state().failures(), "an existing key");
        long ttl = raw.pttl(store.stateKey("f"));
        assertTrue(ttl > RedisStore.MAX_TTL_MILLIS - 60_000 && ttl <= RedisStore.MAX_TTL_MILLIS,
                "capped at 100 years: " + ttl);
        assertTrue(store.apply("f", AtomicOperation.failure(), forever, 3).isTransition(), "opens normally");
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

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfTheStateFunctionChangeNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String k = recordedOnce("s");
        Snapshot before = Snapshot.of(raw, k);
        // the state key alone for an operation that keeps the claims (args[5] 0), with the claim keys otherwise
        List<String> keys = List.of(k);
        List<String> withClaims = List.of(k, store.claimsKey("s"), store.claim1Key("s"));
        String policy = "0,5,0,0.5,10,0.5,1,60000";
        List<String> good = List.of("failure", "2", policy, "", "0");
        // per argument, values that are malformed or out of range (see the args list of the state function)
        List<List<String>> bad = List.of(
                List.of("explode", ""),                                  // op
                List.of("", "abc", "1.5", "1e400"),                      // now
                List.of("", "x", policy + ",1", "0,5,0,0.5,10,0.5,1"),   // policy: eight fields
                List.of(),                                               // a failure has no argument of its own
                List.of("2", "x", ""));                                  // removes claims: 0 or 1
        assertEachRejected(lua, LuaLibrary.Fn.STATE, keys, good, bad, k, before);
        // each policy field (see the policy text of the state function)
        List<List<String>> badPolicy = List.of(
                List.of("3", "-1", "x"),                                 // strategy (0, 1, 2: Strategy.code())
                List.of("0", "x", ""),                                   // failureThreshold
                List.of("-1", "x"),                                      // maxGapBetweenFailures
                List.of("x", "1.5", ""),                                 // errorRateThreshold
                List.of("x", "-1"),                                      // minimumCalls
                List.of("x", "2"),                                       // errorRateDecay
                List.of("0", "x"),                                       // successThreshold
                List.of("0", "-1", "x", "", "1e3", Long.toString(Long.MAX_VALUE))); // ttl: "forever" refused
        String[] fields = policy.split(",");
        for (int i = 0; i < fields.length; i++) {
            for (String b : badPolicy.get(i)) {
                String[] f = fields.clone();
                f[i] = b;
                assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("failure", "2", String.join(",", f), "", "0"),
                        k, before);
            }
        }
        // the argument of its own of a trial outcome (the trial version) and of a forced half-open (openedAt)
        for (String op : List.of("trial_success", "trial_failure", "force_half_open")) {
            for (String b : List.of("", "x", "1.5")) {
                assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of(op, "2", policy, b, "0"), k, before);
            }
        }
        assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("trial_success", "2", policy, "-2", "0"), k, before);
        assertRejected(lua, LuaLibrary.Fn.STATE, keys, good.subList(0, 4), k, before); // too few arguments
        assertRejected(lua, LuaLibrary.Fn.STATE, withClaims, good, k, before); // claim keys it would not touch
        assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("force_closed", "2", policy, "", "1"), k, before);
        // the stream's length and ttl, read only by a transition that appends its event: checked before it writes
        List<String> withFeed = List.of(k, store.feedKey());
        String opens = "0,1,0,0.5,10,0.5,1,60000";
        for (List<String> stream : List.of(List.of("0", "60000"), List.of("x", "60000"), List.of("100", ""),
                List.of("100", Long.toString(Long.MAX_VALUE)))) {
            assertRejected(lua, LuaLibrary.Fn.STATE, withFeed,
                    List.of("failure", "2", opens, "", "0", "s", stream.get(0), stream.get(1)), k, before);
        }
        // and the good arguments do write
        lua.run(LuaLibrary.Fn.STATE, keys, good);
        assertEquals("2", RedisTestSupport.field(raw.get(k), StateCodec.FAILURES));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfTheRecordFunctionChangeNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String k = recordedOnce("r");
        Snapshot before = Snapshot.of(raw, k);
        String stored = raw.get(k);
        List<String> keys = List.of(k);
        String policy = "0,5,0,0.5,10,0.5,1,60000";
        List<String> good = List.of("failure", "2", policy);
        // per argument, values that are malformed or out of range (see the args list of the record function)
        List<List<String>> bad = List.of(
                List.of("explode", "", "trial_success", "force_open"),  // op: failure or success only
                List.of("", "abc", "1.5", "1e400"),                      // now
                List.of("", "x", policy + ",1", "0,5,0,0.5,10,0.5,1")); // policy: eight fields
        assertEachRejected(lua, LuaLibrary.Fn.RECORD, keys, good, bad, k, before);
        assertRejected(lua, LuaLibrary.Fn.RECORD, keys, good.subList(0, 2), k, before); // too few arguments
        assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", policy, "", "0"), k, before);
        assertRejected(lua, LuaLibrary.Fn.RECORD, List.of(k, store.claimsKey("r"), store.claim1Key("r")), good, k,
                before); // keys it would not touch
        // the stream's length and ttl, read only by the opening: checked before it writes
        List<String> withFeed = List.of(k, store.feedKey());
        String opens = "0,1,0,0.5,10,0.5,1,60000";
        for (List<String> stream : List.of(List.of("0", "60000"), List.of("x", "60000"), List.of("100", ""),
                List.of("100", Long.toString(Long.MAX_VALUE)))) {
            assertRejected(lua, LuaLibrary.Fn.RECORD, withFeed,
                    List.of("failure", "2", opens, "r", stream.get(0), stream.get(1)), k, before);
        }
        assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", policy, "r", "100", "60000"), k,
                before); // stream arguments without the stream
        // and the good arguments do write, answering the previous and the next state
        Object reply = lua.run(LuaLibrary.Fn.RECORD, keys, good);
        assertEquals("2", RedisTestSupport.field(raw.get(k), StateCodec.FAILURES));
        RedisStore.Reply r = RedisStore.Reply.parse(reply);
        assertEquals(stored, r.previous);
        assertEquals(raw.get(k), r.next);
        assertEquals(null, r.kind);
    }

    /** The outcomes function's BATCH text, as its header documents it, from the outcomes of a batch. */
    @Test
    void aBatchIsSentAsTheDocumentedText() {
        long t = 1_764_800_000_000L;
        long[] packed = {AtomicOperation.packOutcome(false, false, t), AtomicOperation.packOutcome(true, false, t),
            AtomicOperation.packOutcome(true, false, t + 12), AtomicOperation.packOutcome(false, true, t + 9)};
        assertEquals("17648000000001,0,120,-33", RedisStore.batchText(AtomicOperation.outcomes(packed, 4, null)));
        long[] edges = {AtomicOperation.packOutcome(true, true, 0), AtomicOperation.packOutcome(false, true, -(1L << 61)),
            AtomicOperation.packOutcome(true, false, (1L << 61) - 1)};
        assertEquals("2," + -(1L << 61) + "3," + ((1L << 62) - 1) + "0",
                RedisStore.batchText(AtomicOperation.outcomes(edges, 3, null)), "the widest steps are longs");
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfTheOutcomesFunctionChangeNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String k = recordedOnce("b");
        Snapshot before = Snapshot.of(raw, k);
        String stored = raw.get(k);
        List<String> keys = List.of(k);
        String policy = "0,5,0,0.5,10,0.5,1,60000";
        List<String> good = List.of("21,0,51", policy);
        List<List<String>> bad = List.of(
                // the batch: tokens of an instant step (no leading zero, no sign without digits) and a digit 0 to 3,
                // joined by single commas; 1 to 1,024 of them; instants within the range of every time here
                List.of("", ",", "1,", ",1", "1,,1", "1 ,1", " 1", "4", "14", "01", "-1", "+51", "1.51", "1;1", "x",
                        "2e31", "9".repeat(20) + "1", "9".repeat(19) + "1," + "9".repeat(19) + "1",
                        String.join(",", java.util.Collections.nCopies(AtomicOperation.MAX_BATCH + 1, "1"))),
                List.of("", "x", policy + ",1", "0,5,0,0.5,10,0.5,1"));   // policy: eight fields
        assertEachRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, good, bad, k, before);
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, good.subList(0, 1), k, before); // too few arguments
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, List.of("1", policy, "b", "100"), k, before);
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, List.of("1", policy, "b", "100", "60000", "pod-a", "x"), k,
                before); // too many
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, List.of(k, store.claimsKey("b"), store.claim1Key("b")), good, k,
                before); // keys it would not touch
        // the stream's length and ttl, read only by the opening: checked before it writes
        List<String> withFeed = List.of(k, store.feedKey());
        String opens = "0,1,0,0.5,10,0.5,1,60000";
        for (List<String> stream : List.of(List.of("0", "60000"), List.of("x", "60000"), List.of("100", ""),
                List.of("100", Long.toString(Long.MAX_VALUE)))) {
            assertRejected(lua, LuaLibrary.Fn.OUTCOMES, withFeed,
                    List.of("21,0", opens, "b", stream.get(0), stream.get(1)), k, before);
        }
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, List.of("21", policy, "b", "100", "60000"), k, before);
        assertRejected(lua, LuaLibrary.Fn.OUTCOMES, withFeed, good, k, before); // the stream without its arguments
        // the instance, last: as the record function's
        String quorum = "0,5,0,0.5,10,0.5,1,60000,50.0,100,100.0,c100,1,2,0.0";
        for (String instance : List.of("", "pod a", "pod,a", "x".repeat(65))) {
            assertRejected(lua, LuaLibrary.Fn.OUTCOMES, keys, List.of("21", quorum, instance), k, before);
            assertRejected(lua, LuaLibrary.Fn.OUTCOMES, withFeed, List.of("21", quorum, "b", "100", "60000",
                    instance), k, before);
        }
        // and the good arguments do write: a failure at 2, a success at 2, a failure at 7
        Object reply = lua.run(LuaLibrary.Fn.OUTCOMES, keys, good);
        assertEquals("1", RedisTestSupport.field(raw.get(k), StateCodec.FAILURES), "2, cleared, then 1");
        assertEquals("7", RedisTestSupport.field(raw.get(k), StateCodec.LAST_FAILURE_AT));
        RedisStore.Reply r = RedisStore.Reply.parse(reply);
        assertEquals(stored, r.previous);
        assertEquals(raw.get(k), r.next);
        assertEquals(null, r.kind);
        // a full batch is taken
        lua.run(LuaLibrary.Fn.OUTCOMES, keys, List.of("80" + ",0".repeat(AtomicOperation.MAX_BATCH - 1), policy));
        assertEquals("0", RedisTestSupport.field(raw.get(k), StateCodec.FAILURES));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedWindowModeAndSlowCallArgumentsChangeNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String window = "3,5,0,0.5,10,0.5,1,60000,50.0,10,100.0,c10,1";
        Policy p = Policy.builder().strategy(Strategy.SLIDING_WINDOW).failureThreshold(5).minimumCalls(10)
                .errorRateDecay(0.5).slidingWindow(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(10)
                .stateTtl(Duration.ofMinutes(1)).maxResetTimeout(Duration.ofSeconds(10))
                .resetTimeout(Duration.ofSeconds(10)).build();
        assertEquals(window, RedisStore.policyArgument(p), "the policy text this test varies");
        store.apply("w", AtomicOperation.failure(), p, 1);
        String k = store.stateKey("w");
        assertTrue(raw.get(k).endsWith(",c10.1.1,0"), "a value with a window: " + raw.get(k));
        Snapshot before = Snapshot.of(raw, k);
        List<String> keys = List.of(k);
        List<String> withClaims = List.of(k, store.claimsKey("w"), store.claim1Key("w"));
        // each of the five fields a window or a mode adds to the policy text
        List<List<String>> badPolicy = List.of(
                List.of("0", "100.5", "-1", "x", ""),                      // failureRateThreshold, percent in (0, 100]
                List.of("0", "-1", "x", ""),                               // minimumNumberOfCalls
                List.of("0", "101", "x", ""),                              // slowCallRateThreshold
                List.of("c0", "c1001", "t0", "t86401", "x10", "c", "10", ""), // the window's shape
                List.of("0", "4", "x", ""));                               // the policy's mode: 1 to 3
        String[] fields = window.split(",");
        for (int i = 0; i < badPolicy.size(); i++) {
            for (String b : badPolicy.get(i)) {
                String[] f = fields.clone();
                f[8 + i] = b;
                String text = String.join(",", f);
                assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("failure", "2", text, "", "0"), k, before);
                assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", text), k, before);
            }
        }
        // a sliding window without its fields, a field too many or too few
        for (String text : List.of("3,5,0,0.5,10,0.5,1,60000", window + ",1",
                window.substring(0, window.lastIndexOf(',')))) {
            assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", text), k, before);
        }
        // slow_call_failed's own argument: <slot>:<version>
        for (String b : List.of("", "x", "1", "1:", ":1", "1:-2", "1.5:2", "1:2:3", "x:1")) {
            assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("slow_call_failed", "2", window, b, "0"), k, before);
        }
        // force_mode's own argument: a mode code, 0 to 3
        for (String b : List.of("", "x", "4", "-1", "1.5")) {
            assertRejected(lua, LuaLibrary.Fn.STATE, withClaims, List.of("force_mode", "2", window, b, "1"), k, before);
        }
        // the record function takes the recorded outcomes and the slow call only
        for (String op : List.of("slow_call_failed", "force_mode", "trial_success")) {
            assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of(op, "2", window), k, before);
        }
        // and the good arguments do write
        lua.run(LuaLibrary.Fn.STATE, keys, List.of("slow_call_failed", "2", window, "1:" + store.get("w")
                .orElseThrow().version(), "0"));
        lua.run(LuaLibrary.Fn.RECORD, keys, List.of("slow_call", "3", window));
        assertTrue(raw.get(k).endsWith(",c10.2.12,0"), "a slow call recorded: " + raw.get(k));
        lua.run(LuaLibrary.Fn.STATE, withClaims, List.of("force_mode", "4", window, "2", "1"));
        assertTrue(raw.get(k).endsWith(",,2"), "a stored mode, no window: " + raw.get(k));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedQuorumArgumentsChangeNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String quorum = "0,5,0,0.5,10,0.5,1,60000,50.0,100,100.0,c100,1,2,0.0";
        Policy p = Policy.builder().failureThreshold(5).minimumCalls(10).errorRateDecay(0.5).quorum(2)
                .stateTtl(Duration.ofMinutes(1)).maxResetTimeout(Duration.ofSeconds(10))
                .resetTimeout(Duration.ofSeconds(10)).build();
        assertEquals(quorum, RedisStore.policyArgument(p), "the policy text this test varies");
        store.apply("q", AtomicOperation.outcome(false, false, "pod-a"), p, 1);
        String k = store.stateKey("q");
        assertTrue(raw.get(k).endsWith(",,0,pod-a,1,1,1"), "a value with contributions: " + raw.get(k));
        Snapshot before = Snapshot.of(raw, k);
        List<String> keys = List.of(k);
        List<String> withFeed = List.of(k, store.feedKey());
        // each of the two fields a quorum adds to the policy text
        List<List<String>> badPolicy = List.of(
                List.of("17", "-1", "x", "", "1.5"),                     // quorum: 0 to 16
                List.of("1.5", "-0.1", "x", "", "NaN"));                 // quorumFraction: [0, 1]
        String[] fields = quorum.split(",");
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < badPolicy.size(); i++) {
            for (String b : badPolicy.get(i)) {
                String[] f = fields.clone();
                f[13 + i] = b;
                texts.add(String.join(",", f));
            }
        }
        texts.add(quorum.replace(",2,0.0", ",2,0.5"));   // not both
        texts.add("1" + quorum.substring(1));              // a quorum needs consecutive or sliding windows:
        texts.add("2" + quorum.substring(1));              // not error rate, not leaky
        texts.add(quorum + ",1");                          // a field too many
        texts.add(quorum.substring(0, quorum.lastIndexOf(','))); // or too few
        for (String text : texts) {
            assertRejected(lua, LuaLibrary.Fn.STATE, keys, List.of("failure", "2", text, "", "0"), k, before);
            assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", text, "pod-a"), k, before);
        }
        // the instance, the record function's last argument: 1 to 64 characters of A-Z a-z 0-9 . _ : @ # / -
        for (String instance : List.of("", "pod a", "pod,a", "pod;a", "p\u00e9", "x".repeat(65))) {
            assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", quorum, instance), k, before);
            assertRejected(lua, LuaLibrary.Fn.RECORD, withFeed,
                    List.of("failure", "2", quorum, "q", "100", "60000", instance), k, before);
        }
        assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", quorum, "pod-a", "100"), k, before);
        assertRejected(lua, LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", quorum, "q", "100", "60000",
                "pod-a"), k, before); // the stream's arguments without the stream
        // and the good arguments do write: the instance's contribution, and one of another instance
        lua.run(LuaLibrary.Fn.RECORD, keys, List.of("failure", "2", quorum, "pod-a"));
        lua.run(LuaLibrary.Fn.RECORD, keys, List.of("failure", "3", quorum, "_.:@#/-Az09" + "x".repeat(53)));
        assertTrue(raw.get(k).endsWith(",,0,_.:@#/-Az09" + "x".repeat(53) + ",1,1,3;pod-a,2,2,2"), raw.get(k));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedContributionsOfPutLeaveTheOldStateInPlace(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        store.put("p", BreakerState.INITIAL.toBuilder().failures(4).build(), Duration.ofMinutes(5));
        String k = store.stateKey("p");
        Snapshot before = Snapshot.of(raw, k);
        String twelve = RedisStore.value(BreakerState.INITIAL) + ",,0";
        StringBuilder seventeen = new StringBuilder();
        for (int i = 0; i < 17; i++) {
            seventeen.append(i == 0 ? "" : ";").append("i").append(i).append(",1,1,5");
        }
        for (String bad : List.of("garbage", "A,3,2,5", "A,1,1,5;A,1,1,6", "A B,1,1,5", "", "A,1,1", "A,1,1,5;",
                ";A,1,1,5", "A,-1,1,5", "A,1,1,x", "A,1,2147483648,5", "x".repeat(65) + ",1,1,5",
                seventeen.toString())) {
            assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000", twelve + "," + bad), k, before);
        }
        // contributions need the window and the mode before them, even when the state has neither
        assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000", RedisStore.value(BreakerState.INITIAL)
                + ",A,1,1,5"), k, before);
        String good = twelve + "," + seventeen.substring(seventeen.indexOf(";") + 1);
        lua.run(LuaLibrary.Fn.PUT, List.of(k), List.of("60000", good));
        assertEquals(good, raw.get(k));
        assertEquals(16, store.get("p").orElseThrow().contributors().size());
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfPutLeaveTheOldStateInPlace(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        store.put("p", BreakerState.INITIAL.toBuilder().failures(4).build(), Duration.ofMinutes(5));
        String k = store.stateKey("p");
        Snapshot before = Snapshot.of(raw, k);
        String value = RedisStore.value(BreakerState.INITIAL);
        assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000", value, "extra"), k, before);
        for (String bad : List.of("", "x", value + ",1", value.substring(2), value.replace(",0,", ",true,"))) {
            assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000", bad), k, before);
        }
        for (String ttl : List.of("-5", "abc", "", Long.toString(Long.MAX_VALUE))) {
            assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of(ttl, value), k, before);
        }
        assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000"), k, before);
        // twelve fields: a window in its canonical text only, a mode code 0 to 3
        String windowed = RedisStore.value(BreakerState.INITIAL.toBuilder()
                .window(SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 10).record(true, false, 1))
                .mode(BreakerMode.METRICS_ONLY).build());
        assertTrue(windowed.endsWith(",c10.1.1,2"), windowed);
        for (String bad : List.of(windowed.replace("c10.1.1", "c010.1.1"), windowed.replace("c10.1.1", "c10.1.5"),
                windowed.replace("c10.1.1", "c10.2.1"), windowed.replace("c10.1.1", "t10.1.1"),
                windowed.replace(",2", ",4"), windowed.replace(",2", ","), windowed + ",0")) {
            assertRejected(lua, LuaLibrary.Fn.PUT, List.of(k), List.of("60000", bad), k, before);
        }
        lua.run(LuaLibrary.Fn.PUT, List.of(k), List.of("0", windowed));
        assertEquals(windowed, raw.get(k));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfClaimDoNotEvenPruneExpiredClaims(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String k = store.claimsKey("c");
        raw.zadd(k, 1, "long-expired-claim"); // expired: a valid claim call would prune it
        Snapshot before = Snapshot.of(raw, k);
        List<String> keys = List.of(k, store.claim1Key("c"));
        for (List<String> args : List.of(List.of("2", "x", "token"), List.of("2", "", "token"),
                List.of("2", Long.toString(Long.MAX_VALUE), "token"), List.of("0", "1000", "token"),
                List.of("two", "1000", "token"), List.of("2", "1000", ""), List.of("2", "1000"))) {
            assertRejected(lua, LuaLibrary.Fn.CLAIM, keys, args, k, before);
        }
        assertFalse(raw.exists(store.claim1Key("c")));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void malformedArgumentsOfPublishAppendNothing(LuaRunner.Mode mode) {
        LuaRunner lua = new LuaRunner(store.client(), LuaLibrary.standard(), mode);
        String k = store.feedKey();
        raw.xadd(k, redis.clients.jedis.StreamEntryID.NEW_ENTRY, Map.of("seed", "1"));
        raw.pexpire(k, 600_000);
        Snapshot before = Snapshot.of(raw, k);
        for (List<String> args : List.of(List.of("100", "forever", "op", "x"), List.of("100", "", "op", "x"),
                List.of("100", Long.toString(Long.MAX_VALUE), "op", "x"), List.of("0", "1000", "op", "x"),
                List.of("100", "1000", "op"), List.of("100", "1000"))) {
            assertRejected(lua, LuaLibrary.Fn.PUBLISH, List.of(k), args, k, before);
        }
    }

    /** The state key of {@code op} after one failure recorded under a threshold of 5. */
    private String recordedOnce(String op) {
        store.apply(op, AtomicOperation.failure(), Policy.builder().failureThreshold(5).build(), 1);
        return store.stateKey(op);
    }

    /** {@code good} with each argument in turn replaced by each of its {@code bad} values: every one refused. */
    private void assertEachRejected(LuaRunner lua, LuaLibrary.Fn fn, List<String> keys, List<String> good,
            List<List<String>> bad, String key, Snapshot before) {
        for (int i = 0; i < good.size(); i++) {
            for (String b : bad.get(i)) {
                List<String> args = new ArrayList<>(good);
                args.set(i, b);
                assertRejected(lua, fn, keys, args, key, before);
            }
        }
    }

    private void assertRejected(LuaRunner lua, LuaLibrary.Fn fn, List<String> keys, List<String> args, String key,
            Snapshot before) {
        JedisDataException e = assertThrows(JedisDataException.class, () -> lua.run(fn, keys, args),
                fn + " accepted " + args);
        // first what matters: nothing was written; then that the function said why
        assertTrue(raw.exists(key), fn + " " + args + " deleted " + key + " (" + e.getMessage() + ")");
        Snapshot after = Snapshot.of(raw, key);
        assertArrayEquals(before.dump, after.dump, fn + " " + args + " changed " + key + " (" + e.getMessage() + ")");
        assertEquals(before.persistent, after.persistent, fn + " " + args + " changed the TTL of " + key);
        assertTrue(e.getMessage().startsWith("REDEYE_BAD_ARGS"), fn + " " + args + ": " + e.getMessage());
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

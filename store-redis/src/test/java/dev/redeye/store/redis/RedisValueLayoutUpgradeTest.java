package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * A fleet upgraded one instance at a time, next to the previous release (its own Lua library,
 * {@code redeye-ten-field-layout.lua}, which keeps a state as ten fields): a state with neither a window nor a
 * stored mode keeps that layout, so both releases share it; a state with a window or a mode is written as twelve
 * fields, which the previous release's functions refuse as malformed ({@code REDEYE_MALFORMED}, a
 * {@code StoreException} to its breakers) and leave as they found it, rather than count on it without the window
 * or the mode.
 */
class RedisValueLayoutUpgradeTest extends WithRedisPrefix {
    private static final LuaLibrary PREVIOUS = LuaLibrary.load("redeye-ten-field-layout.lua");
    private static final Policy THREE = Policy.builder().failureThreshold(3).build();
    private static final Policy WINDOW = Policy.builder().strategy(Strategy.SLIDING_WINDOW)
            .slidingWindow(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(5).build();

    private RedisStore store;

    @BeforeEach
    void setUp() {
        store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).publishInScript(true)
                .build();
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /** The previous release's state or record function, with the arguments that release sent. */
    private Object previous(LuaRunner.Mode mode, LuaLibrary.Fn fn, String op, String wireOp, long now) {
        List<String> args = fn == LuaLibrary.Fn.RECORD
                ? List.of(wireOp, Long.toString(now), RedisStore.policyArgument(THREE))
                : List.of(wireOp, Long.toString(now), RedisStore.policyArgument(THREE), "", "0");
        return new LuaRunner(raw, PREVIOUS, mode).run(fn, List.of(store.stateKey(op)), args);
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aStateWithAWindowIsRefusedByThePreviousRelease(LuaRunner.Mode mode) {
        StateChange c = store.apply("w", AtomicOperation.failure(), WINDOW, 1);
        assertRefusedByThePrevious(mode, "w", c.state());
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aStateWithAStoredModeIsRefusedByThePreviousRelease(LuaRunner.Mode mode) {
        store.apply("m", AtomicOperation.failure(), THREE, 1);
        StateChange c = store.apply("m", AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), THREE, 2);
        assertEquals(null, c.state().window());
        assertRefusedByThePrevious(mode, "m", c.state());
    }

    private void assertRefusedByThePrevious(LuaRunner.Mode mode, String op, BreakerState s) {
        String k = store.stateKey(op);
        String value = raw.get(k);
        assertEquals(12, value.split(",", -1).length, "twelve fields: " + value);
        for (LuaLibrary.Fn fn : List.of(LuaLibrary.Fn.STATE, LuaLibrary.Fn.RECORD)) {
            for (String wireOp : List.of("failure", "success")) {
                JedisDataException e = assertThrows(JedisDataException.class, () -> previous(mode, fn, op, wireOp, 3));
                assertTrue(e.getMessage().startsWith("REDEYE_MALFORMED")
                        && e.getMessage().contains("12 comma-separated fields, not 10"), e.getMessage());
            }
        }
        assertEquals(value, raw.get(k), "left as it was");
        assertEquals(Optional.of(s), store.get(op));
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aStateWithNeitherKeepsTheLayoutBothReleasesShare(LuaRunner.Mode mode) {
        StateChange c = store.apply("plain", AtomicOperation.failure(), THREE, 1);
        assertEquals(10, raw.get(store.stateKey("plain")).split(",", -1).length);
        previous(mode, LuaLibrary.Fn.RECORD, "plain", "failure", 2);
        BreakerState counted = store.get("plain").orElseThrow();
        assertEquals(2, counted.failures(), "the previous release counted on it");
        assertEquals(c.state().version(), counted.version());
        assertEquals(3, store.apply("plain", AtomicOperation.failure(), Policy.builder().failureThreshold(9).build(),
                3).state().failures());

        // a window's state, once closed by an operator, has neither again: the previous release reads it
        store.apply("closed", AtomicOperation.failure(), WINDOW, 1);
        store.apply("closed", AtomicOperation.force(BreakerStatus.CLOSED), WINDOW, 2);
        assertEquals(10, raw.get(store.stateKey("closed")).split(",", -1).length);
        previous(mode, LuaLibrary.Fn.STATE, "closed", "failure", 3);
        assertEquals(1, store.get("closed").orElseThrow().failures());
        assertFalse(store.get("closed").orElseThrow().pinned());
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aPutStateWithAWindowOrAModeIsTwelveFieldsToo(LuaRunner.Mode mode) {
        BreakerState s = store.apply("src", AtomicOperation.failure(), WINDOW, 1).state().toBuilder()
                .mode(BreakerMode.DISABLED).build();
        store.put("put", s, Duration.ofMinutes(5));
        assertEquals(Optional.of(s), store.get("put"));
        assertEquals(-1, raw.pttl(store.stateKey("put")), "a stored mode is pinned");
        assertRefusedByThePrevious(mode, "put", s);
    }
    /**
     * A twelve-field value whose window is not SlidingWindow's canonical text, or whose mode is not a mode, is
     * malformed to get and to every function (the record function's window path included), which leave it as
     * they found it.
     */
    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aMalformedWindowOrModeIsAStoreExceptionAndIsLeftAlone(LuaRunner.Mode mode) {
        Policy time = WINDOW.toBuilder().slidingWindow(SlidingWindowType.TIME_BASED, 3).build();
        try (RedisStore s = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .scripting(mode).build()) {
            s.apply("count", AtomicOperation.failure(), WINDOW, 1);
            s.apply("time", AtomicOperation.failure(), time, 1);
            String count = raw.get(s.stateKey("count"));
            String timed = raw.get(s.stateKey("time"));
            assertTrue(count.endsWith(",c10.1.1,0"), count);
            assertTrue(timed.endsWith(",t3.0...1-1,0"), timed);
            String countHead = count.substring(0, count.length() - ",c10.1.1,0".length());
            String timeHead = timed.substring(0, timed.length() - ",t3.0...1-1,0".length());
            for (String bad : List.of("c10.1.4", "c10.2.1", "c010.1.1", "c10.01.1", "c10.1.", "c0.0.", "c1001.0.",
                    "c10.1.1,", "x", "c10.1.1.")) {
                assertMalformed(s, "count", countHead + "," + bad + ",0", WINDOW);
            }
            for (String bad : List.of("t3.0..", "t3.0....", "t3.0...1-0", "t3.0...1-2", "t3.0...1-0-0", "t3.0..0.",
                    "t3.0...01", "t3.00...1", "t3.0..x.1", "t3.0...1-1-", "t3.0.1..1-1x", "t03.0...1")) {
                assertMalformed(s, "time", timeHead + "," + bad + ",0", time);
            }
            for (String bad : List.of(",c10.1.1,4", ",c10.1.1,", ",c10.1.1,x", ",c10.1.1")) {
                assertMalformed(s, "count", countHead + bad, WINDOW);
            }
        }
    }

    private void assertMalformed(RedisStore s, String op, String value, Policy p) {
        String k = s.stateKey(op);
        raw.set(k, value);
        assertThrows(dev.redeye.api.StoreException.class, () -> s.get(op), value);
        for (AtomicOperation o : List.of(AtomicOperation.failure(), AtomicOperation.slowCall(),
                AtomicOperation.force(BreakerStatus.FORCED_OPEN))) {
            assertThrows(dev.redeye.api.StoreException.class, () -> s.apply(op, o, p, 2), o + " on " + value);
        }
        assertEquals(value, raw.get(k), "left as it was");
    }
}

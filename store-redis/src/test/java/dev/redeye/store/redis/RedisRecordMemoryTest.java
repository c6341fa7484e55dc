package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;

/**
 * The record function remembers, per state key, the value it last wrote there with its fields parsed, and skips
 * the checks when it finds that very value again. Whatever else comes to stand under the key in between (a
 * put, a write by hand, a malformed value, the remembered value written back) is read as it is: the memory only
 * ever answers for the value it was made from. In both modes (with EVAL scripts there is no memory at all).
 */
class RedisRecordMemoryTest extends WithRedisPrefix {
    private static final Policy MANY = Policy.builder().failureThreshold(1_000).build();

    private StateChange failure(RedisStore s, String op, long now) {
        return s.apply(op, AtomicOperation.failure(), MANY, now);
    }

    private RedisStore store(LuaRunner.Mode mode) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true).scripting(mode).build();
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aStatePutBetweenTwoRecordsIsTheOneCounted(LuaRunner.Mode mode) {
        try (RedisStore s = store(mode)) {
            failure(s, "put", 1); // a new key: the general path
            failure(s, "put", 2); // the record path, which remembers what it wrote
            BreakerState seven = s.get("put").orElseThrow().toBuilder().failures(7).lastFailureAt(5).build();
            s.put("put", seven, Duration.ofMinutes(5));
            StateChange c = failure(s, "put", 6);
            assertEquals(seven, c.previous());
            assertEquals(8, c.state().failures());
            assertEquals(Optional.of(c.state()), s.get("put"));
        }
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void aValueChangedByHandBetweenTwoRecordsIsCheckedAndRefusedWhenMalformed(LuaRunner.Mode mode) {
        try (RedisStore s = store(mode)) {
            failure(s, "bad", 1); // a new key: the general path
            failure(s, "bad", 2); // the record path, which remembers what it wrote
            String k = s.stateKey("bad");
            String malformed = RedisTestSupport.withField(raw.get(k), StateCodec.OPEN_COUNT, "x");
            raw.set(k, malformed);
            assertThrows(StoreException.class, () -> failure(s, "bad", 3));
            assertEquals(malformed, raw.get(k), "nothing written");
        }
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void theRememberedValueWrittenBackCountsOnFromIt(LuaRunner.Mode mode) {
        try (RedisStore s = store(mode)) {
            failure(s, "back", 1);
            StateChange second = failure(s, "back", 2);
            String k = s.stateKey("back");
            String remembered = raw.get(k);
            raw.set(k, RedisTestSupport.withField(remembered, StateCodec.FAILURES, "40"));
            assertEquals(41, failure(s, "back", 3).state().failures(), "another value: read as it is");
            raw.set(k, remembered);
            StateChange c = failure(s, "back", 4);
            assertEquals(second.state(), c.previous());
            assertEquals(3, c.state().failures());
            assertEquals(4, c.state().lastFailureAt());
        }
    }

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void moreKeysThanTheMemoryHoldsAreEachCountedRight(LuaRunner.Mode mode) {
        try (RedisStore s = store(mode)) {
            int keys = 1_100;
            for (int round = 1; round <= 2; round++) {
                for (int i = 0; i < keys; i++) {
                    assertEquals(round, failure(s, "k" + i, round).state().failures(), "key " + i);
                }
            }
            assertEquals(2, s.get("k0").orElseThrow().failures());
        }
    }
}

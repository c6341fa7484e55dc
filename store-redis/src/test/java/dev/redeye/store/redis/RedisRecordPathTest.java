package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;

/**
 * The state function's record path (an outcome recorded on a closed state, the opening included, without the
 * general machinery) against {@link Transitions}, outcome by outcome, under every strategy: the change, the
 * stored value (one string with a ttl) and the event it appends in the same call, also after changes of the
 * general path between its outcomes; and a value written over its own by someone else is read as it is.
 */
class RedisRecordPathTest extends WithRedisPrefix {
    private RedisStore store(LuaRunner.Mode mode, boolean publishInScript) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .publishInScript(publishInScript).scripting(mode).build();
    }

    private static final Map<String, Policy> POLICIES = Map.of(
            "consecutive", Policy.builder().failureThreshold(4).build(),
            "consecutive with a gap", Policy.builder().failureThreshold(3).maxGapBetweenFailures(
                    java.time.Duration.ofMillis(25)).build(),
            "leaky", Policy.builder().strategy(Strategy.LEAKY).failureThreshold(3).build(),
            "error rate", Policy.builder().strategy(Strategy.ERROR_RATE).errorRateThreshold(0.6).minimumCalls(3)
                    .errorRateDecay(0.7).build(),
            "error rate, slow decay: a success can open", Policy.builder().strategy(Strategy.ERROR_RATE)
                    .errorRateThreshold(0.3).errorRateDecay(0.9).minimumCalls(3).build());

    @ParameterizedTest
    @EnumSource(LuaRunner.Mode.class)
    void everyRecordedOutcomeIsTheModelsUnderEveryStrategy(LuaRunner.Mode mode) {
        for (boolean inScript : List.of(true, false)) {
            try (RedisStore store = store(mode, inScript)) {
                for (Map.Entry<String, Policy> e : POLICIES.entrySet()) {
                    run(store, e.getKey() + (inScript ? ", event in the call" : ", event after it"), e.getValue());
                }
            }
        }
    }

    private void run(RedisStore store, String what, Policy p) {
        String op = what.replace(' ', '-');
        Random random = new Random(what.hashCode());
        long now = 1_000;
        int openings = 0;
        int byASuccess = 0;
        for (int i = 0; i < 200; i++) {
            now += random.nextInt(20);
            boolean success = random.nextInt(3) == 0;
            BreakerState before = store.get(op).orElse(BreakerState.INITIAL);
            if (before.open()) {
                // closed again (the record path runs on closed states): a new life, or a forced change of the
                // general path, which moves fields the record path passes through (version, openedAt)
                if (openings % 2 == 0) {
                    store.delete(op);
                } else {
                    store.apply(op, AtomicOperation.force(BreakerStatus.CLOSED), p, now);
                }
                before = store.get(op).orElse(BreakerState.INITIAL);
            }
            StateChange got = success ? store.apply(op, AtomicOperation.success(), p, now) : store.apply(op, AtomicOperation.failure(), p, now);
            BreakerState prev = got.previous();
            if (before != BreakerState.INITIAL) {
                assertEquals(before, prev, what + " #" + i);
            }
            StateChange model = success ? Transitions.recordSuccess(prev, p, now) : Transitions.recordFailure(prev, p, now);
            assertEquals(model, got, what + " #" + i + (success ? " success" : " failure") + " at " + now);
            if (got.changed()) {
                assertEquals(got.state(), store.get(op).orElseThrow(), what + " #" + i + ": stored");
                assertEquals("string", raw.type(store.stateKey(op)));
                assertTrue(raw.pttl(store.stateKey(op)) > 0, what + " #" + i + ": the ttl is set");
            }
            if (got.isTransition()) {
                openings++;
                byASuccess += success ? 1 : 0;
                List<StreamEntry> last = raw.xrevrange(store.feedKey(), StreamEntryID.MAXIMUM_ID,
                        StreamEntryID.MINIMUM_ID, 1);
                TransitionEvent ev = StateCodec.eventFromFields(last.get(0).getFields(), "test");
                assertEquals(got.toEvent(op, p, now), ev, what + " #" + i + ": the event");
            }
        }
        assertTrue(openings > 0, what + " opened at least once");
        if (what.contains("a success can open")) {
            assertTrue(byASuccess > 0, what + ": " + openings + " openings, none by a success");
        }
    }

    @Test
    void aValueWrittenOverTheRecordPathsOwnIsReadAsItIs() {
        try (RedisStore store = store(LuaRunner.Mode.AUTO, true)) {
            Policy p = Policy.builder().failureThreshold(100).build();
            store.apply("op", AtomicOperation.failure(), p, 1);
            store.apply("op", AtomicOperation.failure(), p, 2);
            String k = store.stateKey("op");
            String written = raw.get(k);
            raw.set(k, RedisTestSupport.withField(written, StateCodec.FAILURES, "x"));
            assertThrows(StoreException.class, () -> store.apply("op", AtomicOperation.failure(), p, 3));
            raw.set(k, RedisTestSupport.withField(written, StateCodec.FAILURES, "40"));
            assertEquals(41, store.apply("op", AtomicOperation.failure(), p, 4).state().failures());
            raw.set(k, written); // the very value it wrote before: read alike
            assertEquals(3, store.apply("op", AtomicOperation.failure(), p, 5).state().failures());
        }
    }
}

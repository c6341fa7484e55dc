package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;

/**
 * Parity of {@code redeye.lua} with {@code Transitions} for sliding windows, slow calls and modes, as a property:
 * random sequences of every {@link AtomicOperation.Kind} under random policies (all four strategies; count and
 * time windows of a few slots or seconds, and time windows of several-second buckets; slow outcomes; the three
 * policy modes; a policy that changes in the middle of a sequence, so a window of another shape is reset), with
 * batches of outcomes in place of one operation in seven ({@link ParityBatches}: 1 to 1,024 outcomes at their own
 * instants, crossing bucket edges, openings and would_opens within the batch; the run must hold batches whose
 * instants matter and batches that change the state after their first transition), with
 * {@code slow_call_failed} carrying the slot and version the last {@code slow_call} returned (or a stale one),
 * {@code force_mode} to every mode, trial outcomes of the current and of a stale period, and {@code now} moving
 * across bucket edges, by several windows at once, and backwards (a late clock). After every call against a real
 * redis-server: the reply equals {@code AtomicOperation.apply} on the previous state (exact equality of
 * {@link BreakerState}, the window's text included), the previous state is the one the last call left, the
 * stored state is the reply's, a pinned state has no expiry and any other written state has one, and an
 * automatic transition's event on the stream is the model's.
 */
class RedisWindowParityTest extends WithRedisPrefix {
    private static final int SEQUENCES = 300;
    private static final int STEPS = 60;
    private static final long T0 = 1_764_800_000_000L;

    private RedisStore store(LuaRunner.Mode mode, boolean publishInScript) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .publishInScript(publishInScript).scripting(mode).build();
    }

    @ParameterizedTest
    @CsvSource({"AUTO, true, 1", "AUTO, false, 2", "SCRIPTS, true, 3"})
    void randomSequencesOfEveryOperationMatchTransitions(LuaRunner.Mode mode, boolean publishInScript, long seed) {
        Map<AtomicOperation.Kind, Integer> seen = new EnumMap<>(AtomicOperation.Kind.class);
        Map<TransitionKind, Integer> transitions = new EnumMap<>(TransitionKind.class);
        ParityBatches.Coverage batches = new ParityBatches.Coverage();
        int sequences = mode == LuaRunner.Mode.AUTO ? SEQUENCES : SEQUENCES / 3;
        try (RedisStore store = store(mode, publishInScript)) {
            Random random = new Random(seed);
            for (int i = 0; i < sequences; i++) {
                long s = random.nextLong();
                new Sequence(store, "w" + i, new Random(s), "seed " + seed + ", sequence " + i + " (" + s + ")",
                        seen, transitions, batches).run();
            }
        }
        batches.assertCovered("seed " + seed);
        for (AtomicOperation.Kind k : AtomicOperation.Kind.values()) {
            assertTrue(seen.getOrDefault(k, 0) > 0, "no " + k + " changed a state: " + seen);
        }
        for (TransitionKind k : TransitionKind.values()) {
            assertTrue(transitions.getOrDefault(k, 0) > 0, "no " + k + " transition: " + transitions);
        }
    }

    /** A random policy: every strategy, small windows, the three modes. */
    static Policy randomPolicy(Random r) {
        Policy.Builder b = Policy.builder()
                .strategy(Strategy.values()[r.nextInt(4) == 0 ? r.nextInt(3) : 3])
                .failureThreshold(1 + r.nextInt(4))
                .errorRateThreshold(List.of(0.5, 0.3, 0.75).get(r.nextInt(3)))
                .minimumCalls(1 + r.nextInt(4))
                .errorRateDecay(List.of(0.5, 0.9).get(r.nextInt(2)))
                .successThreshold(1 + r.nextInt(2))
                .resetTimeout(Duration.ofMillis(500))
                .failureRateThreshold(List.of(50.0, 100.0, 33.3, 20.0, 66.66666666666667).get(r.nextInt(5)))
                .minimumNumberOfCalls(1 + r.nextInt(8))
                .slowCallRateThreshold(List.of(100.0, 50.0, 25.0, 60.0).get(r.nextInt(4)));
        if (r.nextBoolean()) {
            b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(6));
        } else {
            // 1 to 5 seconds in one-second buckets, or 121 to 360 seconds in buckets of 2 or 3 seconds
            b.slidingWindow(SlidingWindowType.TIME_BASED, r.nextInt(3) == 0 ? 121 + r.nextInt(240) : 1 + r.nextInt(5));
        }
        int m = r.nextInt(8);
        b.mode(m < 5 ? BreakerMode.NORMAL : m < 7 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED);
        return b.build();
    }

    private final class Sequence {
        private final RedisStore store;
        private final String op;
        private final Random r;
        private final String what;
        private final Map<AtomicOperation.Kind, Integer> seen;
        private final Map<TransitionKind, Integer> transitions;
        private final ParityBatches.Coverage batches;
        private Policy policy;
        private long now = T0 + 500;
        private BreakerState last;
        /** The slot and version the last slow_call returned. */
        private long slowSlot = 1;
        private long slowVersion;

        Sequence(RedisStore store, String op, Random r, String what, Map<AtomicOperation.Kind, Integer> seen,
                Map<TransitionKind, Integer> transitions, ParityBatches.Coverage batches) {
            this.store = store;
            this.op = op;
            this.r = r;
            this.what = what;
            this.seen = seen;
            this.transitions = transitions;
            this.batches = batches;
            this.policy = randomPolicy(r);
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                if (r.nextInt(25) == 0) {
                    policy = randomPolicy(r); // another shape or strategy: a window of another shape is reset
                }
                advance();
                AtomicOperation operation = nextOperation();
                String at = what + ", step " + step + ": " + operation + " at " + now + " under " + policy;
                StateChange got = store.apply(op, operation, policy, now);
                if (last != null) {
                    assertEquals(last, got.previous(), at + ": the previous state is the one the last call left");
                }
                StateChange model = operation.apply(got.previous(), policy, now);
                assertEquals(model, got, at);
                if (operation.kind() == AtomicOperation.Kind.OUTCOMES) {
                    batches.count(operation, got, policy);
                }
                String k = store.stateKey(op);
                Optional<BreakerState> stored = store.get(op);
                if (stored.isEmpty()) {
                    assertFalse(got.changed(), at + ": a change of a new key is stored");
                } else {
                    assertEquals(got.state(), stored.get(), at + ": stored");
                }
                if (got.changed()) {
                    long ttl = raw.pttl(k);
                    if (got.state().pinned()) {
                        assertEquals(-1, ttl, at + ": a pinned state has no expiry");
                    } else {
                        assertTrue(ttl > 0, at + ": the ttl is set (" + ttl + ")");
                    }
                    seen.merge(operation.kind(), 1, Integer::sum);
                }
                if (got.isTransition()) {
                    transitions.merge(got.transition(), 1, Integer::sum);
                    List<StreamEntry> entries = raw.xrevrange(store.feedKey(), StreamEntryID.MAXIMUM_ID,
                            StreamEntryID.MINIMUM_ID, 1);
                    TransitionEvent ev = StateCodec.eventFromFields(entries.get(0).getFields(), "test");
                    assertEquals(got.toEvent(op, policy, now), ev, at + ": the event");
                    assertEquals(StateCodec.eventToFields(ev).keySet(), entries.get(0).getFields().keySet(),
                            at + ": the event has StateCodec's fields (the window and the mode only when set)");
                }
                if (operation.kind() == AtomicOperation.Kind.SLOW_CALL && got.state().window() != null) {
                    slowSlot = got.state().window().position();
                    slowVersion = got.state().version();
                }
                last = stored.isEmpty() ? null : got.state(); // an absent key starts a new life next time
            }
            store.delete(op);
        }

        /** Moves now within a bucket, across one, by several windows, or back (a caller whose clock is late). */
        private void advance() {
            switch (r.nextInt(10)) {
                case 0 -> now -= r.nextInt(3_000);
                case 1 -> now += 1_000L * (1 + r.nextInt(400));
                case 2, 3 -> now += 1_000 - Math.floorMod(now, 1_000) + r.nextInt(3); // just past a second's edge
                default -> now += r.nextInt(700);
            }
        }

        private AtomicOperation nextOperation() {
            if (r.nextInt(100) < 15) {
                return ParityBatches.random(r, now, null); // a batch of outcomes ending now
            }
            int n = r.nextInt(100);
            long version = last == null ? 0 : last.version();
            if (n < 14) {
                return AtomicOperation.failure();
            } else if (n < 28) {
                return AtomicOperation.success();
            } else if (n < 38) {
                return AtomicOperation.outcome(true, true);
            } else if (n < 48) {
                return AtomicOperation.outcome(false, true);
            } else if (n < 58) {
                return AtomicOperation.slowCall();
            } else if (n < 70) {
                // the slow call's slot and version, sometimes another slot or a stale version
                long slot = r.nextInt(5) == 0 ? slowSlot - 1 - r.nextInt(3) : slowSlot;
                return AtomicOperation.slowCallFailed(slot, r.nextInt(6) == 0 ? slowVersion - 1 : slowVersion);
            } else if (n < 80) {
                return AtomicOperation.trialSucceeded(r.nextInt(4) == 0 ? version - 1 : version);
            } else if (n < 86) {
                return AtomicOperation.trialFailed(r.nextInt(4) == 0 ? version - 1 : version);
            } else if (n < 89) {
                return AtomicOperation.force(dev.redeye.api.BreakerStatus.FORCED_OPEN);
            } else if (n < 92) {
                return AtomicOperation.force(dev.redeye.api.BreakerStatus.HALF_OPEN);
            } else if (n < 95) {
                return AtomicOperation.force(dev.redeye.api.BreakerStatus.CLOSED);
            } else {
                return AtomicOperation.forceMode(BreakerMode.values()[r.nextInt(BreakerMode.values().length)]);
            }
        }
    }
}

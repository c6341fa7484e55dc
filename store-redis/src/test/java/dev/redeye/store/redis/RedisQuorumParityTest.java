package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
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
 * Parity of {@code redeye.lua} with {@code Transitions} under quorums, as a property: random sequences of outcomes
 * attributed to up to 20 instances (so the 16-contribution bound is reached), batches of one instance's outcomes
 * in place of one operation in seven ({@link ParityBatches}, each outcome at its own instant; some attributed to
 * none), outcomes attributed to none, slow
 * calls and their failures, trial outcomes, every forced change and {@code force_mode}, under random policies
 * with a quorum (a count of 2 to 4, or a fraction) of the consecutive strategy (with and without a gap) and of
 * count and time windows, the three policy modes, and a policy that changes mid-sequence (to another quorum, or
 * to none: the contributions a state holds are then carried through unchanged), with {@code now} moving within
 * and past the window and backwards. After every call against a real redis-server: the reply equals
 * {@code AtomicOperation.apply} on the previous state (exact equality of {@link BreakerState}, the contributions
 * included), the stored state is the reply's, and an automatic transition's event on the stream is the model's,
 * with StateCodec's fields (the contributions only when there are some). The run must have opened breakers under
 * a quorum, held back openings the strategy alone would have made, and filled a state with 16 contributions.
 */
class RedisQuorumParityTest extends WithRedisPrefix {
    private static final int SEQUENCES = 200;
    private static final int STEPS = 60;
    private static final long T0 = 1_764_800_000_000L;

    /** What the sequences of one run covered. */
    private static final class Coverage {
        int quorumOpenings;
        int heldBack;
        int fullStates;
        int carriedWithoutQuorum;
    }

    private RedisStore store(LuaRunner.Mode mode, boolean publishInScript) {
        return RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .publishInScript(publishInScript).scripting(mode).build();
    }

    @ParameterizedTest
    @CsvSource({"AUTO, true, 11", "AUTO, false, 12", "SCRIPTS, true, 13"})
    void randomSequencesUnderQuorumsMatchTransitions(LuaRunner.Mode mode, boolean publishInScript, long seed) {
        Coverage coverage = new Coverage();
        ParityBatches.Coverage batches = new ParityBatches.Coverage();
        int sequences = mode == LuaRunner.Mode.AUTO ? SEQUENCES : SEQUENCES / 2;
        try (RedisStore store = store(mode, publishInScript)) {
            Random random = new Random(seed);
            for (int i = 0; i < sequences; i++) {
                long s = random.nextLong();
                new Sequence(store, "q" + i, new Random(s), "seed " + seed + ", sequence " + i + " (" + s + ")",
                        coverage, batches).run();
            }
        }
        batches.assertCovered("seed " + seed);
        assertTrue(coverage.quorumOpenings > 0, "no opening under a quorum");
        assertTrue(coverage.heldBack > 0, "no opening held back by a quorum");
        assertTrue(coverage.fullStates > 0, "no state held " + BreakerState.MAX_CONTRIBUTORS + " contributions");
        assertTrue(coverage.carriedWithoutQuorum > 0, "no contributions carried under a policy without a quorum");
    }

    /**
     * A fraction whose product with the instances seen lands just above a whole number in double arithmetic
     * (0.30000000000000004 x 10 = 3.0000000000000004) needs that whole number, as {@code Policy.quorumRequired}
     * rounds it: ten instances in a count window, three of them failing, open the breaker in the write of the
     * tenth call, as {@code Transitions} says.
     */
    @org.junit.jupiter.api.Test
    void aFractionIsRoundedAsPolicyRoundsIt() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 100)
                .failureRateThreshold(30).minimumNumberOfCalls(10).quorumFraction(0.1 + 0.2).build();
        assertEquals(3, p.quorumRequired(10), "the premise: 0.30000000000000004 x 10 needs 3");
        try (RedisStore store = store(LuaRunner.Mode.AUTO, true)) {
            BreakerState last = null;
            StateChange got = null;
            for (int i = 0; i < 10; i++) {
                boolean success = i >= 1 && i <= 7; // one failure, seven successes, two failures
                AtomicOperation o = AtomicOperation.outcome(success, false, "pod-" + i);
                got = store.apply("fraction", o, p, T0 + i);
                if (last != null) {
                    assertEquals(last, got.previous(), "call " + i);
                }
                assertEquals(o.apply(got.previous(), p, T0 + i), got, "call " + i);
                last = got.state();
            }
            assertEquals(10, last.contributors().size());
            assertEquals(TransitionKind.OPENED, got.transition(), "three of ten make the quorum");
        }
    }

    /** A random policy with a quorum: consecutive or a small window, a count or a fraction, mostly NORMAL. */
    static Policy randomQuorumPolicy(Random r) {
        Policy.Builder b = Policy.builder()
                .failureThreshold(1 + r.nextInt(5))
                .successThreshold(1 + r.nextInt(2))
                .resetTimeout(Duration.ofMillis(500))
                .failureRateThreshold(List.of(50.0, 100.0, 33.3, 20.0).get(r.nextInt(4)))
                .minimumNumberOfCalls(1 + r.nextInt(6))
                .slowCallRateThreshold(List.of(100.0, 50.0, 60.0).get(r.nextInt(3)));
        switch (r.nextInt(4)) {
            case 0 -> b.strategy(Strategy.CONSECUTIVE);
            case 1 -> b.strategy(Strategy.CONSECUTIVE).maxGapBetweenFailures(Duration.ofMillis(300 + r.nextInt(2_000)));
            case 2 -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(8));
            default -> b.slidingWindow(SlidingWindowType.TIME_BASED, 1 + r.nextInt(5));
        }
        if (r.nextInt(3) == 0) {
            b.quorumFraction(List.of(0.5, 0.34, 1.0, 0.75, 0.1).get(r.nextInt(5)));
        } else {
            b.quorum(2 + r.nextInt(3));
        }
        int m = r.nextInt(10);
        b.mode(m < 8 ? BreakerMode.NORMAL : m < 9 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED);
        return b.build();
    }

    /** A policy of a crowd: a quorum of 16, consecutive without a gap or a count window, NORMAL. */
    static Policy crowdPolicy(Random r) {
        Policy.Builder b = randomQuorumPolicy(r).toBuilder().quorumFraction(0.0).quorum(BreakerState.MAX_CONTRIBUTORS)
                .mode(BreakerMode.NORMAL);
        return (r.nextBoolean() ? b.strategy(Strategy.CONSECUTIVE).maxGapBetweenFailures(Duration.ZERO)
                : b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(8))).build();
    }

    private final class Sequence {
        private final RedisStore store;
        private final String op;
        private final Random r;
        private final String what;
        private final Coverage coverage;
        private final ParityBatches.Coverage batches;
        private final int instances;
        /**
         * A crowd: outcomes only, of 20 instances failing almost always, under one policy with a quorum of 16
         * (consecutive without a gap, or a count window), so that a state fills up and the least recent
         * contribution drops out.
         */
        private final boolean crowd;
        private Policy policy;
        private long now = T0 + 500;
        private BreakerState last;
        private long slowSlot = 1;
        private long slowVersion;

        Sequence(RedisStore store, String op, Random r, String what, Coverage coverage,
                ParityBatches.Coverage batches) {
            this.store = store;
            this.op = op;
            this.r = r;
            this.what = what;
            this.coverage = coverage;
            this.batches = batches;
            this.crowd = r.nextInt(4) == 0;
            this.instances = crowd ? 20 : 1 + r.nextInt(4);
            this.policy = crowd ? crowdPolicy(r) : randomQuorumPolicy(r);
        }

        void run() {
            for (int step = 0; step < STEPS; step++) {
                int change = crowd ? -1 : r.nextInt(30);
                if (change == 0) {
                    policy = randomQuorumPolicy(r);
                } else if (change == 1) {
                    policy = policy.toBuilder().quorum(0).quorumFraction(0.0).build(); // the same without a quorum
                }
                advance();
                AtomicOperation operation = nextOperation();
                String at = what + ", step " + step + ": " + operation + " (" + operation.instance() + ") at " + now
                        + " under " + policy;
                StateChange got = store.apply(op, operation, policy, now);
                if (last != null) {
                    assertEquals(last, got.previous(), at + ": the previous state is the one the last call left");
                }
                StateChange model = operation.apply(got.previous(), policy, now);
                assertEquals(model, got, at);
                if (operation.kind() == AtomicOperation.Kind.OUTCOMES) {
                    batches.count(operation, got, policy);
                }
                Optional<BreakerState> stored = store.get(op);
                if (stored.isEmpty()) {
                    assertFalse(got.changed(), at + ": a change of a new key is stored");
                } else {
                    assertEquals(got.state(), stored.get(), at + ": stored");
                }
                if (got.isTransition()) {
                    List<StreamEntry> entries = raw.xrevrange(store.feedKey(), StreamEntryID.MAXIMUM_ID,
                            StreamEntryID.MINIMUM_ID, 1);
                    TransitionEvent ev = StateCodec.eventFromFields(entries.get(0).getFields(), "test");
                    assertEquals(got.toEvent(op, policy, now), ev, at + ": the event");
                    assertEquals(StateCodec.eventToFields(ev).keySet(), entries.get(0).getFields().keySet(),
                            at + ": the event has StateCodec's fields (the contributions only when some)");
                }
                count(operation, got);
                if (operation.kind() == AtomicOperation.Kind.SLOW_CALL && got.state().window() != null) {
                    slowSlot = got.state().window().position();
                    slowVersion = got.state().version();
                }
                last = stored.isEmpty() ? null : got.state();
            }
            store.delete(op);
        }

        private void count(AtomicOperation operation, StateChange got) {
            if (got.transition() == TransitionKind.OPENED && policy.quorumOn()) {
                coverage.quorumOpenings++;
            }
            if (got.state().contributors().size() == BreakerState.MAX_CONTRIBUTORS) {
                coverage.fullStates++;
            }
            if (!policy.quorumOn() && got.changed() && !got.state().contributors().isEmpty()) {
                coverage.carriedWithoutQuorum++;
            }
            if (policy.quorumOn() && operation.instance() != null && got.transition() == null) {
                Policy without = policy.toBuilder().quorum(0).quorumFraction(0.0).build();
                if (operation.apply(got.previous(), without, now).transition() != null) {
                    coverage.heldBack++;
                }
            }
        }

        /** Moves now within a window, across a second's edge, past several windows, or back. */
        private void advance() {
            switch (r.nextInt(10)) {
                case 0 -> now -= r.nextInt(2_000);
                case 1 -> now += 1_000L * (1 + r.nextInt(8));
                case 2 -> now += 1_000 - Math.floorMod(now, 1_000) + r.nextInt(3);
                default -> now += r.nextInt(400);
            }
        }

        private AtomicOperation nextOperation() {
            String instance = "pod-" + r.nextInt(instances);
            if (r.nextInt(100) < 15) {
                // a batch of one instance's outcomes ending now, sometimes attributed to none
                return ParityBatches.random(r, now, r.nextInt(8) == 0 ? null : instance);
            }
            int n = r.nextInt(100);
            long version = last == null ? 0 : last.version();
            if (n < 40 || crowd) {
                return AtomicOperation.outcome(r.nextInt(crowd ? 40 : 3) == 0, false, instance);
            } else if (n < 52) {
                return AtomicOperation.outcome(r.nextBoolean(), true, instance);
            } else if (n < 58) {
                return AtomicOperation.outcome(r.nextBoolean(), r.nextBoolean()); // attributed to no instance
            } else if (n < 66) {
                return AtomicOperation.slowCall();
            } else if (n < 74) {
                long slot = r.nextInt(5) == 0 ? slowSlot - 1 : slowSlot;
                return AtomicOperation.slowCallFailed(slot, r.nextInt(6) == 0 ? slowVersion - 1 : slowVersion);
            } else if (n < 84) {
                return AtomicOperation.trialSucceeded(r.nextInt(4) == 0 ? version - 1 : version);
            } else if (n < 90) {
                return AtomicOperation.trialFailed(r.nextInt(4) == 0 ? version - 1 : version);
            } else if (n < 92) {
                return AtomicOperation.force(BreakerStatus.FORCED_OPEN);
            } else if (n < 94) {
                return AtomicOperation.force(BreakerStatus.HALF_OPEN);
            } else if (n < 97) {
                return AtomicOperation.force(BreakerStatus.CLOSED);
            } else {
                return AtomicOperation.forceMode(BreakerMode.values()[r.nextInt(BreakerMode.values().length)]);
            }
        }
    }
}

package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random sequences of every {@link AtomicOperation.Kind} (slow outcomes, slow calls and their failures with the
 * slot and version a slow call returned, trials of the current and of stale periods, forced changes and modes,
 * batches of 1 to 200 outcomes at their own instants, some attributed to an instance) under random policies
 * (sliding count and time windows of a few slots or seconds, the other strategies, each mode, now and then a
 * quorum on the strategies that take one) through the store, while {@code now} moves across bucket edges (and
 * sometimes back, a caller whose clock is behind). Every result and the state read back through the other client must equal, exactly, what the rules
 * applied in this JVM give ({@link AtomicOperation#apply}, that is {@code Transitions}): the processors carry every
 * field of the policy and the operation, and the values every field of the state. The stored value's format and
 * expiry are checked on the way: format 4 exactly when the state has contributions, else format 3 exactly when
 * it has a window or a stored mode, no expiry exactly when it is pinned.
 *
 * <p>The seed of each run is in every failure message; {@code -Dredeye.seed=<n>} replays it.
 */
@ExtendWith(SharedClusters.class)
class HazelcastOperationsModelTest {
    private static final int SEQUENCES = 60;
    private static final int STEPS = 80;
    private static final long T0 = 1_764_800_000_000L;

    static Stream<Arguments> everyMode() {
        return Stream.of(Arguments.of("embedded", HazelcastStore.Mode.NATIVE),
                Arguments.of("bare", HazelcastStore.Mode.CAS), Arguments.of("embedded", HazelcastStore.Mode.CAS));
    }

    private static SharedClusters.TwoClients cluster(String name) {
        return name.equals("embedded") ? SharedClusters.embedded() : SharedClusters.bare();
    }

    @ParameterizedTest(name = "{1} mode on {0} members")
    @MethodSource("everyMode")
    void everyOperationThroughTheStoreEqualsTheRulesAppliedInJava(String clusterName, HazelcastStore.Mode mode) {
        long seed = Long.getLong("redeye.seed", System.nanoTime());
        Random r = new Random(seed);
        String map = "model-" + UUID.randomUUID().toString().substring(0, 8);
        HazelcastInstance[] c = cluster(clusterName).clients();
        HazelcastStore[] stores = {HazelcastStore.builder(c[0]).map(map).mode(mode).build(),
            HazelcastStore.builder(c[1]).map(map).mode(mode).build()};
        Map<AtomicOperation.Kind, int[]> seen = new EnumMap<>(AtomicOperation.Kind.class);
        try {
            assertEquals(mode, stores[0].mode(), stores[0]::toString);
            for (int i = 0; i < SEQUENCES; i++) {
                sequence(stores, "op-" + i, r, "seed " + seed + ", sequence " + i + ", " + mode, seen);
            }
        } finally {
            for (HazelcastStore s : stores) {
                s.close();
            }
        }
        for (AtomicOperation.Kind k : AtomicOperation.Kind.values()) {
            int[] n = seen.get(k);
            assertTrue(n != null && n[1] > 0, "seed " + seed + ": " + k + " never changed a state (tried "
                    + (n == null ? 0 : n[0]) + " times)");
        }
    }

    /**
     * One key's random life. Until something is written the store starts each call from a new life (a version
     * based on its clock), so the model starts from the previous state the store reports, which must be an
     * initial one; from the first write on, the model alone says what the state is.
     */
    private static void sequence(HazelcastStore[] stores, String key, Random r, String run,
            Map<AtomicOperation.Kind, int[]> seen) {
        Policy policy = randomPolicy(r);
        long now = T0 + r.nextInt(1_000);
        BreakerState model = null;
        List<long[]> slowCalls = new ArrayList<>();
        for (int step = 0; step < STEPS; step++) {
            if (r.nextInt(40) == 0) {
                policy = randomPolicy(r); // another window shape, strategy or mode on the same state
            }
            now = advance(now, policy, r);
            AtomicOperation op = randomOperation(r, model, slowCalls, now);
            int w = r.nextInt(2);
            String where = run + ", step " + step + ": " + op + " at " + now + " under " + policy + " on " + model;
            StateChange got = stores[w].apply(key, op, policy, now);
            BreakerState before = model;
            if (before == null) {
                before = got.previous();
                assertEquals(BreakerState.initial(before.version()), before, where + ": a key never written");
            }
            StateChange want = op.apply(before, policy, now);
            assertEquals(want, got, where);
            int[] n = seen.computeIfAbsent(op.kind(), k -> new int[2]);
            n[0]++;
            if (want.changed()) {
                n[1]++;
                model = want.state();
            }
            if (op.kind() == AtomicOperation.Kind.SLOW_CALL) {
                BreakerState s = want.state();
                slowCalls.add(new long[] {s.window() == null ? 0L : s.window().position(), s.version()});
            }
            HazelcastStore other = stores[1 - w];
            assertEquals(Optional.ofNullable(model), other.get(key), where + ": read back by the other client");
            if (model != null) {
                StoredValue v = StateValues.decode(other.instance().getMap(other.mapName()).get(key), key);
                String raw = StateValues.encode(v);
                boolean format3 = model.window() != null || model.mode() != BreakerMode.DEFAULT;
                assertTrue(raw.startsWith(!model.contributors().isEmpty() ? StateValues.QUORUM_STATE_PREFIX
                        : format3 ? StateValues.STATE_PREFIX : StateValues.BASE_STATE_PREFIX), where + ": " + raw);
                assertEquals(model.pinned(), v.expiresAt == StoredValue.NEVER, where + ": " + raw);
            }
        }
    }

    /** A window of a few slots or seconds (2 s and 3 s buckets too), another strategy now and then, any mode. */
    private static Policy randomPolicy(Random r) {
        Policy.Builder b = Policy.builder().jitter(0).failureThreshold(1 + r.nextInt(3))
                .successThreshold(1 + r.nextInt(2)).resetTimeout(Duration.ofSeconds(1));
        if (r.nextInt(4) == 0) {
            b.maxGapBetweenFailures(Duration.ofMillis(500 + r.nextInt(3_000)));
        }
        int strategy = r.nextInt(10);
        if (strategy < 7) {
            if (r.nextBoolean()) {
                b.slidingWindow(SlidingWindowType.COUNT_BASED, 1 + r.nextInt(6));
            } else {
                int[] seconds = {1, 2, 3, 5, 240, 241};
                b.slidingWindow(SlidingWindowType.TIME_BASED, seconds[r.nextInt(seconds.length)]);
            }
            double[] rates = {20, 50, 50, 66.7, 100};
            b.minimumNumberOfCalls(1 + r.nextInt(5)).failureRateThreshold(rates[r.nextInt(rates.length)])
                    .slowCallRateThreshold(rates[r.nextInt(rates.length)]);
        } else if (strategy == 7) {
            b.strategy(Strategy.CONSECUTIVE);
        } else if (strategy == 8) {
            b.strategy(Strategy.LEAKY);
        } else {
            b.strategy(Strategy.ERROR_RATE).minimumCalls(1 + r.nextInt(4)).errorRateThreshold(0.5);
        }
        int mode = r.nextInt(10);
        b.mode(mode < 6 ? BreakerMode.NORMAL : mode < 8 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED);
        if (strategy <= 7 && r.nextInt(5) == 0) {
            b.quorum(2); // the batches' instances count (a quorum runs on the consecutive and window strategies)
        }
        return b.build();
    }

    /**
     * The next {@code now}: the same instant, a few ms, across one or more bucket edges, to just before or at an
     * edge, past the whole window, or back by up to 1.5 s.
     */
    private static long advance(long now, Policy p, Random r) {
        long bucket = p.slidingWindowType() == SlidingWindowType.TIME_BASED
                ? 1_000L * dev.redeye.api.SlidingWindow.bucketSeconds(p.slidingWindowSize()) : 1_000L;
        switch (r.nextInt(8)) {
            case 0:
                return now;
            case 1:
            case 2:
                return now + 1 + r.nextInt(300);
            case 3:
                return now + bucket / 2 + r.nextInt((int) (2 * bucket));
            case 4:
                return (Math.floorDiv(now, bucket) + 1) * bucket - r.nextInt(2); // just before, or at, the next edge
            case 5:
                return now + 1_000L * p.slidingWindowSize() + r.nextInt(3_000);
            case 6:
                return now - r.nextInt(1_500);
            default:
                return now + r.nextInt(5_000);
        }
    }

    private static AtomicOperation randomOperation(Random r, BreakerState model, List<long[]> slowCalls, long now) {
        long version = model == null ? 0 : model.version();
        int x = r.nextInt(112);
        if (x >= 100) {
            return randomBatch(r, now);
        }
        if (x < 14) {
            return AtomicOperation.failure();
        }
        if (x < 28) {
            return AtomicOperation.success();
        }
        if (x < 36) {
            return AtomicOperation.outcome(true, true);
        }
        if (x < 44) {
            return AtomicOperation.outcome(false, true);
        }
        if (x < 54) {
            return AtomicOperation.slowCall();
        }
        if (x < 66) {
            if (slowCalls.isEmpty() || r.nextInt(10) == 0) {
                return AtomicOperation.slowCallFailed(r.nextInt(8), version); // no such slow call
            }
            long[] call = r.nextInt(3) > 0 ? slowCalls.get(slowCalls.size() - 1)
                    : slowCalls.get(r.nextInt(slowCalls.size()));
            return AtomicOperation.slowCallFailed(call[0], call[1]);
        }
        if (x < 74) {
            return AtomicOperation.trialSucceeded(r.nextInt(5) > 0 ? version : version - 1);
        }
        if (x < 80) {
            return AtomicOperation.trialFailed(r.nextInt(5) > 0 ? version : version + 1);
        }
        if (x < 83) {
            return AtomicOperation.force(dev.redeye.api.BreakerStatus.FORCED_OPEN);
        }
        if (x < 88) {
            return AtomicOperation.force(dev.redeye.api.BreakerStatus.HALF_OPEN);
        }
        if (x < 92) {
            return AtomicOperation.force(dev.redeye.api.BreakerStatus.CLOSED);
        }
        BreakerMode[] modes = BreakerMode.values();
        return AtomicOperation.forceMode(modes[r.nextInt(modes.length)]);
    }

    /**
     * A batch of 1 to 12 outcomes (a quarter of the time up to 200), from 3 s before {@code now} on, each a few
     * hundred ms after the one before (now and then at the same instant, or earlier), with a failure share drawn
     * per batch; a third of them attributed to one of three instances.
     */
    private static AtomicOperation randomBatch(Random r, long now) {
        int n = 1 + r.nextInt(r.nextInt(4) == 0 ? 200 : 12);
        int failurePercent = 25 * r.nextInt(5);
        long[] packed = new long[n];
        long at = now - r.nextInt(3_000);
        for (int i = 0; i < n; i++) {
            at += r.nextInt(6) == 0 ? -r.nextInt(500) : r.nextInt(3) == 0 ? 0 : r.nextInt(400);
            packed[i] = AtomicOperation.packOutcome(r.nextInt(100) >= failurePercent, r.nextInt(4) == 0, at);
        }
        return AtomicOperation.outcomes(packed, n, r.nextInt(3) == 0 ? "pod-" + r.nextInt(3) : null);
    }
}

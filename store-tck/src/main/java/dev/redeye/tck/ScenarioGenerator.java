package dev.redeye.tck;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.tck.Scenario.KeySpec;
import dev.redeye.tck.Scenario.Kind;
import dev.redeye.tck.Scenario.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Draws the scenarios of the model rules (R8) from a seeded random source: the same seed gives the same
 * scenarios, so a run is repeatable ({@code redeye.tck.seed}). Only steps whose capability the store declares
 * are drawn. Policies cover every strategy, {@code maxGapBetweenFailures} and {@code successThreshold} above
 * 1; virtual time moves forward by steps sized to hit the policy's boundaries (the same instant, just under,
 * at and just over the gap, reset windows and beyond).
 *
 * <p>Three sources, each seeded: {@code random} draws everything the first TCK v3 scenarios had (kinds, keys,
 * clients, times, arguments, policies); {@code strategies} only the leaky strategy; {@code extras} only what
 * sliding windows, slow calls and modes added (window policies of small sizes, the policy's mode, slow outcomes,
 * slow_call, slow_call_failed and force_mode in place of some drawn outcomes and forced changes). Nothing added
 * later draws from {@code random}, so its draws, and with them every step's key, client, time and argument, are
 * the ones a seed gave before. A fourth source, {@code batches}, draws only batches of outcomes
 * ({@code OutcomeBatches}), in place of some drawn outcomes, and only for a store that declares them.
 */
final class ScenarioGenerator {
    /** What the scenario is for: the weights of step kinds and the claim ttls differ. */
    enum Purpose {
        /** R8.1: every declared call, claims with long ttls (none expires). */
        MODEL,
        /** R8.2: claims with short and long ttls, releases, deletes and waits in real time. */
        EXPIRY,
        /** R8.3: the calls of concurrent scenarios and their sequential prefix. */
        CONCURRENT,
        /** R8.5: concurrent scenarios weighted to claims, releases, forced closes and deletes. */
        CONCURRENT_CLAIMS
    }

    private static final Map<Kind, Integer> MODEL_WEIGHTS = weights(
            Kind.RECORD_FAILURE, 24, Kind.RECORD_SUCCESS, 8, Kind.RECORD_OUTCOME, 12, Kind.TRIAL_SUCCEEDED, 9,
            Kind.TRIAL_FAILED, 6, Kind.FORCE, 7, Kind.PUT, 4, Kind.DELETE, 3, Kind.GET, 2, Kind.CLAIM, 9,
            Kind.RELEASE, 7);
    private static final Map<Kind, Integer> EXPIRY_WEIGHTS = weights(
            Kind.CLAIM, 40, Kind.RELEASE, 25, Kind.WAIT, 12, Kind.DELETE, 4, Kind.GET, 1);
    private static final Map<Kind, Integer> CONCURRENT_WEIGHTS = weights(
            Kind.RECORD_FAILURE, 20, Kind.RECORD_SUCCESS, 6, Kind.RECORD_OUTCOME, 8, Kind.TRIAL_SUCCEEDED, 8,
            Kind.TRIAL_FAILED, 6, Kind.FORCE, 9, Kind.PUT, 5, Kind.DELETE, 3, Kind.GET, 12, Kind.CLAIM, 9,
            Kind.RELEASE, 6);
    private static final Map<Kind, Integer> CONCURRENT_CLAIM_WEIGHTS = weights(
            Kind.RECORD_FAILURE, 8, Kind.RECORD_SUCCESS, 2, Kind.RECORD_OUTCOME, 2, Kind.TRIAL_SUCCEEDED, 4,
            Kind.TRIAL_FAILED, 4, Kind.FORCE, 12, Kind.PUT, 2, Kind.DELETE, 8, Kind.GET, 4, Kind.CLAIM, 26,
            Kind.RELEASE, 16);
    /** The most a client's clock is skewed in R8.4, either way, in ms. */
    static final int MAX_SKEW_MILLIS = 10_000;
    private static final double[] THRESHOLDS = {0.2, 0.3, 0.5, 0.75, 1.0};
    private static final double[] DECAYS = {0.5, 0.7, 0.8, 0.9, 0.95, 1.0 / 3};
    private static final long[] GAPS = {20, 100, 1_000};

    /** Failure and slow-call rates of window policies, in percent. */
    private static final double[] RATES = {20, 25, 50, 60, 100.0 / 3, 100};

    private final SplittableRandom random;
    private final SplittableRandom strategies;
    private final SplittableRandom extras;
    private final SplittableRandom batches;
    /** In percent: how many drawn outcomes become batches; 0 when the store has none. */
    private final int batchShare;
    private final boolean windows;
    private final Map<Kind, Integer> weights;
    private final Purpose purpose;

    /**
     * @param random     the seeded source
     * @param strategies a second seeded source, for the choice between the consecutive and leaky strategies
     *                   only: the leaky strategy came later (R9), and drawing it from {@code random} would have
     *                   changed every scenario a seed draws
     * @param extras     a third seeded source, for sliding windows, slow calls and modes only (see the class
     *                   comment)
     * @param batches    a fourth seeded source, for batches of outcomes only
     * @param batchShare how many drawn outcomes become batches, in percent, when the store declares them
     * @param declared   the operations the store offers (every capability it declares, plus put/get/delete)
     * @param purpose    which rule the scenarios are for
     */
    ScenarioGenerator(SplittableRandom random, SplittableRandom strategies, SplittableRandom extras,
            SplittableRandom batches, int batchShare, Set<Call.Op> declared, Purpose purpose) {
        this.random = random;
        this.strategies = strategies;
        this.extras = extras;
        this.batches = batches;
        this.batchShare = purpose != Purpose.EXPIRY && declared.contains(Call.Op.RECORD_BATCH) ? batchShare : 0;
        this.purpose = purpose;
        this.windows = purpose != Purpose.EXPIRY && declared.contains(Call.Op.SLOW_CALL);
        Map<Kind, Integer> base = purpose == Purpose.MODEL ? MODEL_WEIGHTS
                : purpose == Purpose.EXPIRY ? EXPIRY_WEIGHTS
                : purpose == Purpose.CONCURRENT ? CONCURRENT_WEIGHTS : CONCURRENT_CLAIM_WEIGHTS;
        this.weights = new EnumMap<>(Kind.class);
        base.forEach((k, w) -> {
            if (k.op == null || declared.contains(k.op)) {
                weights.put(k, w);
            }
        });
        if (weights.isEmpty()) {
            throw new IllegalArgumentException("no step kind is available for " + purpose + " with " + declared);
        }
    }

    private static Map<Kind, Integer> weights(Object... kw) {
        Map<Kind, Integer> m = new EnumMap<>(Kind.class);
        for (int i = 0; i < kw.length; i += 2) {
            m.put((Kind) kw[i], (Integer) kw[i + 1]);
        }
        return m;
    }

    /** A scenario of two keys and {@code minSteps} to {@code maxSteps} steps. */
    Scenario scenario(int minSteps, int maxSteps) {
        List<KeySpec> keys = keys();
        List<Step> steps = new ArrayList<>();
        long at = 0;
        int n = minSteps + random.nextInt(maxSteps - minSteps + 1);
        for (int i = 0; i < n; i++) {
            Step s = step(keys, at);
            steps.add(s);
            at = s.at();
        }
        return new Scenario(keys, steps);
    }

    /**
     * A scenario as {@link #scenario(int, int)} whose clients' clocks are skewed (R8.4): each client's
     * {@code now} is off by up to {@value #MAX_SKEW_MILLIS} ms either way, mostly by seconds, sometimes by less
     * than one or not at all, and never both clocks exact. Steps are drawn first, so the skews do not change
     * them.
     */
    Scenario skewedScenario(int minSteps, int maxSteps) {
        Scenario sc = scenario(minSteps, maxSteps);
        long a;
        long b;
        do {
            a = skew();
            b = skew();
        } while (a == 0 && b == 0);
        return sc.withSkews(List.of(a, b));
    }

    private long skew() {
        int c = random.nextInt(8);
        if (c == 0) {
            return 0;
        }
        long magnitude = c == 1 ? 1 + random.nextInt(999) : 1_000 + random.nextInt(MAX_SKEW_MILLIS - 999);
        return random.nextBoolean() ? magnitude : -magnitude;
    }

    /** Two keys with their own policies; some names are hostile (quotes, braces, newlines, non-BMP). */
    List<KeySpec> keys() {
        List<String> hostile = new ArrayList<>(TckSupport.hostileNames());
        hostile.removeIf(n -> n.length() > 100);
        String first = random.nextInt(4) == 0 ? hostile.get(random.nextInt(hostile.size())) : "k1";
        String second;
        do {
            second = random.nextInt(4) == 0 ? hostile.get(random.nextInt(hostile.size())) : "k2";
        } while (second.equals(first));
        return List.of(new KeySpec(first, policy()), new KeySpec(second, policy()));
    }

    /**
     * A policy: consecutive or leaky (each with or without a gap) or errorRate, thresholds small enough to be
     * reached.
     */
    Policy policy() {
        Policy.Builder b = Policy.builder().jitter(0).failureThreshold(1 + random.nextInt(4))
                .successThreshold(random.nextInt(3) == 0 ? 2 + random.nextInt(2) : 1);
        if (random.nextInt(3) == 0) {
            b.strategy(Strategy.ERROR_RATE).minimumCalls(1 + random.nextInt(6))
                    .errorRateThreshold(THRESHOLDS[random.nextInt(THRESHOLDS.length)])
                    .errorRateDecay(DECAYS[random.nextInt(DECAYS.length)]);
        } else {
            if (strategies.nextInt(3) == 0) {
                b.strategy(Strategy.LEAKY); // counts like consecutive, a success leaks one failure out
            }
            if (random.nextBoolean()) {
                b.maxGapBetweenFailures(Duration.ofMillis(GAPS[random.nextInt(GAPS.length)]));
            }
        }
        long reset = new long[] {1_000, 10_000, 60_000}[random.nextInt(3)];
        b.resetTimeout(Duration.ofMillis(reset))
                .maxResetTimeout(Duration.ofMillis(reset * new long[] {1, 4, 8}[random.nextInt(3)]));
        if (windows) {
            if (extras.nextInt(5) < 2) {
                // a small window, so that rates are reached, slots reused and buckets rolled within a scenario
                boolean count = extras.nextBoolean();
                b.slidingWindow(count ? SlidingWindowType.COUNT_BASED : SlidingWindowType.TIME_BASED,
                        count ? 1 + extras.nextInt(6) : 1 + extras.nextInt(5))
                        .failureRateThreshold(RATES[extras.nextInt(RATES.length)])
                        .slowCallRateThreshold(RATES[extras.nextInt(RATES.length)])
                        .minimumNumberOfCalls(1 + extras.nextInt(7));
            }
            int m = extras.nextInt(6); // METRICS_ONLY more often than DISABLED, which makes a key inert
            if (m < 3) {
                b.mode(m < 2 ? BreakerMode.METRICS_ONLY : BreakerMode.DISABLED);
            }
        }
        return b.build();
    }

    /** One step at or after virtual time {@code after}. */
    Step step(List<KeySpec> keys, long after) {
        Kind kind = kind();
        int key = random.nextInt(100) < (purpose == Purpose.MODEL ? 70 : 85) ? 0 : 1;
        long at = after + advance(keys.get(key).policy());
        int arg;
        switch (kind) {
            case CLAIM:
                // R8.2: two claims in three are short, and most want several permits
                arg = purpose == Purpose.EXPIRY ? (random.nextInt(3) == 0 ? 0 : 3) + (random.nextInt(4) == 0 ? 0
                        : 1 + random.nextInt(2)) : random.nextInt(3);
                break;
            case PUT:
                arg = random.nextInt(1 << 20);
                break;
            case TRIAL_SUCCEEDED:
            case TRIAL_FAILED:
                // mostly the current period's version, so that trials apply
                arg = random.nextInt(10) < 6 ? 0 : 1 + random.nextInt(Step.VERSION_CHOICES.length - 1);
                break;
            default:
                arg = random.nextInt(5);
        }
        Step drawn = new Step(kind, random.nextInt(2), key, at, arg);
        return batched(windows ? extra(drawn) : drawn);
    }

    /** The step, or in its place, drawn from {@code batches} only, a batch of outcomes instead of some outcomes. */
    private Step batched(Step s) {
        if (batchShare == 0) {
            return s;
        }
        switch (s.kind()) {
            case RECORD_FAILURE:
            case RECORD_SUCCESS:
            case RECORD_OUTCOME:
            case RECORD_SLOW:
                return batches.nextInt(100) < batchShare
                        ? new Step(Kind.RECORD_BATCH, s.client(), s.key(), s.at(), 1 + batches.nextInt(1 << 20)) : s;
            default:
                return s;
        }
    }

    /**
     * The drawn step, or in its place, drawn from {@code extras} only: a slow outcome, a slow_call or a
     * slow_call_failed instead of some outcomes, a force_mode instead of some forced changes.
     */
    private Step extra(Step s) {
        int x = extras.nextInt(100);
        switch (s.kind()) {
            case RECORD_FAILURE:
            case RECORD_SUCCESS:
            case RECORD_OUTCOME:
                boolean success = s.kind() == Kind.RECORD_SUCCESS
                        || (s.kind() == Kind.RECORD_OUTCOME && s.arg() % 2 == 1);
                if (x < 12) {
                    return new Step(Kind.RECORD_SLOW, s.client(), s.key(), s.at(), success ? 1 : 0);
                }
                if (x < 20) {
                    return new Step(Kind.SLOW_CALL, s.client(), s.key(), s.at(), 0);
                }
                if (x < 28) {
                    // mostly the current version and slot, so that the failure applies
                    int version = extras.nextInt(10) < 7 ? 0 : 1 + extras.nextInt(Step.VERSION_CHOICES.length - 1);
                    int slot = extras.nextInt(10) < 7 ? 0 : 1 + extras.nextInt(2);
                    return new Step(Kind.SLOW_CALL_FAILED, s.client(), s.key(), s.at(), version + 5 * slot);
                }
                return s;
            case FORCE:
                return x < 30 ? new Step(Kind.FORCE_MODE, s.client(), s.key(), s.at(), extras.nextInt(4)) : s;
            default:
                return s;
        }
    }

    private Kind kind() {
        int total = weights.values().stream().mapToInt(Integer::intValue).sum();
        int x = random.nextInt(total);
        for (Map.Entry<Kind, Integer> e : weights.entrySet()) {
            x -= e.getValue();
            if (x < 0) {
                return e.getKey();
            }
        }
        throw new AssertionError();
    }

    /** How far virtual time moves before a step: often not at all, often right around the gap. */
    private long advance(Policy p) {
        int c = random.nextInt(100);
        long gap = p.maxGapBetweenFailuresMillis();
        if (c < 30) {
            return random.nextInt(3);
        }
        if (c < 55) {
            return 1 + random.nextInt(50);
        }
        if (c < 75 && gap > 0) {
            return gap - 1 + random.nextInt(3);
        }
        if (c < 90) {
            return 100 + random.nextInt(5_000);
        }
        return 10_000 + random.nextInt(600_000);
    }

    /** The policy as a Java expression (for printed replays). */
    static String java(Policy p) {
        StringBuilder sb = new StringBuilder("Policy.builder()");
        if (p.strategy() == Strategy.ERROR_RATE) {
            sb.append(".strategy(Strategy.ERROR_RATE)")
                    .append(".minimumCalls(").append(p.minimumCalls()).append(')')
                    .append(".errorRateThreshold(").append(States.javaDouble(p.errorRateThreshold())).append(')')
                    .append(".errorRateDecay(").append(States.javaDouble(p.errorRateDecay())).append(')');
        } else if (p.strategy() == Strategy.LEAKY) {
            sb.append(".strategy(Strategy.LEAKY)");
        }
        sb.append(".failureThreshold(").append(p.failureThreshold()).append(')');
        if (p.maxGapBetweenFailuresMillis() > 0) {
            sb.append(".maxGapBetweenFailures(Duration.ofMillis(").append(p.maxGapBetweenFailuresMillis())
                    .append("))");
        }
        if (p.successThreshold() != 1) {
            sb.append(".successThreshold(").append(p.successThreshold()).append(')');
        }
        sb.append(String.format(Locale.ROOT, ".resetTimeout(Duration.ofMillis(%d)).maxResetTimeout(Duration.ofMillis(%d))",
                p.resetTimeoutMillis(), p.maxResetTimeoutMillis()));
        if (p.strategy() == Strategy.SLIDING_WINDOW) {
            sb.append(".slidingWindow(SlidingWindowType.").append(p.slidingWindowType().name()).append(", ")
                    .append(p.slidingWindowSize()).append(')')
                    .append(".failureRateThreshold(").append(States.javaDouble(p.failureRateThreshold())).append(')')
                    .append(".slowCallRateThreshold(").append(States.javaDouble(p.slowCallRateThreshold())).append(')')
                    .append(".minimumNumberOfCalls(").append(p.minimumNumberOfCalls()).append(')');
        }
        if (p.mode() != BreakerMode.NORMAL) {
            sb.append(".mode(BreakerMode.").append(p.mode().name()).append(')');
        }
        if (p.jitter() != 0.0) {
            sb.append(".jitter(").append(p.jitter()).append(')');
        }
        return sb.append(".build()").toString();
    }
}

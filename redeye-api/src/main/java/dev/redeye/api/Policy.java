package dev.redeye.api;

import dev.redeye.spi.Transitions;
import java.time.Duration;
import java.util.Objects;

/**
 * Every threshold a transition rule needs, as one immutable value passed to {@link Transitions} and to the
 * atomic store capabilities. Durations are held in milliseconds so that stores and scripts can use them
 * directly.
 *
 * <p>Build one with {@link #builder()}; {@link #defaults()} gives the reference defaults.
 *
 * @param strategy                   how a closed breaker decides to open
 * @param failureThreshold           consecutive failures that open the breaker (>= 1)
 * @param maxGapBetweenFailuresMillis if > 0, a failure later than this after the previous one restarts the
 *                                   count at 1; 0 means unset
 * @param errorRateThreshold         failure rate in (0, 1] that opens the breaker (error-rate strategy)
 * @param minimumCalls               outcomes needed before the rate may open the breaker (>= 1)
 * @param errorRateDecay             EWMA decay in (0, 1): weight of the previous rate
 * @param successThreshold           successful trials needed to close (>= 1)
 * @param resetTimeoutMillis         base reset window (> 0)
 * @param backoffMultiplier          window multiplier per failed trial (>= 1)
 * @param maxResetTimeoutMillis      cap on the reset window (>= resetTimeoutMillis, at most
 *                                   {@link #MAX_DURATION_MILLIS})
 * @param jitter                     relative jitter of the reset window in [0, 1)
 * @param stateTtlMillis             clean-up TTL for stored state, well above the longest reset window;
 *                                   the breaker's timing never depends on it
 * @param failureRateThreshold       failure rate in percent, in (0, 100], that opens the breaker (sliding window)
 * @param minimumNumberOfCalls       outcomes the window must hold before a rate may open the breaker (>= 1; a
 *                                   count window of fewer slots needs all of them)
 * @param slowCallRateThreshold      slow-call rate in percent, in (0, 100], that opens the breaker (sliding window)
 * @param slidingWindowType          the window's type (sliding window)
 * @param slidingWindowSize          outcomes (count window) or seconds (time window) the window holds
 * @param mode                       the mode when no operator stored one ({@link BreakerMode#NORMAL},
 *                                   {@link BreakerMode#METRICS_ONLY} or {@link BreakerMode#DISABLED})
 * @param quorum                     distinct failing instances the fleet opening needs (0 or 1: no quorum; at
 *                                   most {@link BreakerState#MAX_CONTRIBUTORS})
 * @param quorumFraction             the fraction, in (0, 1], of the instances seen recording in the scope that
 *                                   must be failing for the fleet to open (0: none); not with {@code quorum}
 */
public record Policy(
        Strategy strategy,
        int failureThreshold,
        long maxGapBetweenFailuresMillis,
        double errorRateThreshold,
        int minimumCalls,
        double errorRateDecay,
        int successThreshold,
        long resetTimeoutMillis,
        double backoffMultiplier,
        long maxResetTimeoutMillis,
        double jitter,
        long stateTtlMillis,
        double failureRateThreshold,
        int minimumNumberOfCalls,
        double slowCallRateThreshold,
        SlidingWindowType slidingWindowType,
        int slidingWindowSize,
        BreakerMode mode,
        int quorum,
        double quorumFraction) {

    /**
     * The longest duration a policy holds, in ms: 2<sup>53</sup> (about 285,000 years), the largest span that an
     * IEEE double (the reset window's arithmetic, and the numbers of the Redis store's Lua rules) holds exactly,
     * and small enough that {@code now - 2 * maxResetTimeout} and {@code openedAt + window} never overflow for
     * any epoch-ms {@code now}.
     */
    public static final long MAX_DURATION_MILLIS = 1L << 53;

    private static final Duration MAX_DURATION = Duration.ofMillis(MAX_DURATION_MILLIS);

    /** How a closed breaker decides to open; default {@link Strategy#CONSECUTIVE}. */
    public static final Option<Strategy> STRATEGY = Option.nonNull("strategy", Strategy.CONSECUTIVE);
    /** Failures that open the breaker (consecutive, or the leaky count), at least 1; default 5. */
    public static final Option<Integer> FAILURE_THRESHOLD = Option.atLeastOne("failureThreshold", 5);
    /** Error rate in (0, 1] that opens the breaker (error-rate strategy); default 0.5. */
    public static final Option<Double> ERROR_RATE_THRESHOLD = Option.of("errorRateThreshold", 0.5,
            v -> v > 0.0 && v <= 1.0, "must be in (0, 1]");
    /** Outcomes needed before the error rate may open the breaker, at least 1; default 10. */
    public static final Option<Integer> MINIMUM_CALLS = Option.atLeastOne("minimumCalls", 10);
    /** EWMA decay in (0, 1), the weight of the previous rate; default 0.9. */
    public static final Option<Double> ERROR_RATE_DECAY = Option.of("errorRateDecay", 0.9,
            v -> v > 0.0 && v < 1.0, "must be in (0, 1)");
    /** Successful trials needed to close, at least 1; default 1. */
    public static final Option<Integer> SUCCESS_THRESHOLD = Option.atLeastOne("successThreshold", 1);
    /** Base reset window, at least 1 ms; default 60 s. */
    public static final Option<Duration> RESET_TIMEOUT = Option.duration("resetTimeout", Duration.ofSeconds(60),
            MAX_DURATION);
    /** Window multiplier per failed trial, finite and at least 1; default 2. */
    public static final Option<Double> BACKOFF_MULTIPLIER = Option.of("backoffMultiplier", 2.0,
            v -> v >= 1.0 && !Double.isInfinite(v), "must be a finite number >= 1");
    /** Cap on the reset window, at least {@code resetTimeout}; default 8 x {@code resetTimeout}. */
    public static final Option<Duration> MAX_RESET_TIMEOUT = Option.duration("maxResetTimeout", null, MAX_DURATION);
    /** Relative jitter of the reset window in [0, 1); default 0.1. */
    public static final Option<Double> JITTER = Option.of("jitter", 0.1, v -> v >= 0.0 && v < 1.0,
            "must be in [0, 1)");
    /** A failure later than this after the previous one restarts the count at 1; default unset. */
    public static final Option<Duration> MAX_GAP_BETWEEN_FAILURES = Option.duration("maxGapBetweenFailures", null,
            MAX_DURATION);
    /** Clean-up TTL of stored state, more than twice {@code maxResetTimeout}; default max(24 h, 4 x it). */
    public static final Option<Duration> STATE_TTL = Option.duration("stateTtl", null,
            Duration.ofMillis(Long.MAX_VALUE));

    /** Failure rate in percent, in (0, 100], that opens a sliding-window breaker; default 50. */
    public static final Option<Double> FAILURE_RATE_THRESHOLD = Option.of("failureRateThreshold", 50.0,
            v -> v > 0.0 && v <= 100.0, "must be a percentage in (0, 100]");
    /** Outcomes a sliding window must hold before a rate may open the breaker, at least 1; default 100. */
    public static final Option<Integer> MINIMUM_NUMBER_OF_CALLS = Option.atLeastOne("minimumNumberOfCalls", 100);
    /** Slow-call rate in percent, in (0, 100], that opens a sliding-window breaker; default 100. */
    public static final Option<Double> SLOW_CALL_RATE_THRESHOLD = Option.of("slowCallRateThreshold", 100.0,
            v -> v > 0.0 && v <= 100.0, "must be a percentage in (0, 100]");
    /** The sliding window's type; default {@link SlidingWindowType#COUNT_BASED}. */
    public static final Option<SlidingWindowType> SLIDING_WINDOW_TYPE = Option.nonNull("slidingWindowType",
            SlidingWindowType.COUNT_BASED);
    /**
     * The sliding window's size: outcomes (count window, 1 to {@value SlidingWindow#MAX_COUNT_SIZE}) or seconds
     * (time window, 1 to {@value SlidingWindow#MAX_TIME_SECONDS}); default 100.
     */
    public static final Option<Integer> SLIDING_WINDOW_SIZE = Option.of("slidingWindowSize", 100,
            v -> v >= 1 && v <= SlidingWindow.MAX_TIME_SECONDS,
            "must be in [1, " + SlidingWindow.MAX_TIME_SECONDS + "] (a count window at most "
                    + SlidingWindow.MAX_COUNT_SIZE + ")");
    /**
     * The mode when no operator stored one: {@link BreakerMode#NORMAL} (the default),
     * {@link BreakerMode#METRICS_ONLY} or {@link BreakerMode#DISABLED}.
     */
    public static final Option<BreakerMode> MODE = Option.of("mode", BreakerMode.NORMAL,
            v -> v != null && v != BreakerMode.DEFAULT, "must be normal, metrics_only or disabled");

    /**
     * Distinct instances whose failures the fleet opening needs, 0 to {@value BreakerState#MAX_CONTRIBUTORS}
     * (consecutive and sliding-window strategies); default 0: no quorum (0 and 1 mean the same).
     */
    public static final Option<Integer> QUORUM = Option.of("quorum", 0,
            v -> v >= 0 && v <= BreakerState.MAX_CONTRIBUTORS, "must be in [0, " + BreakerState.MAX_CONTRIBUTORS + "]");
    /**
     * The fraction, in [0, 1], of the instances seen recording in the scope that must be failing for the fleet to
     * open; default 0: none.
     */
    public static final Option<Double> QUORUM_FRACTION = Option.of("quorumFraction", 0.0,
            v -> v >= 0.0 && v <= 1.0, "must be in [0, 1]");

    private static final Policy DEFAULTS = builder().build();

    /**
     * Validates every field with the option's own check ({@link #FAILURE_THRESHOLD} and the others).
     *
     * @throws InvalidOptionException naming the option and the bad value
     * @throws NullPointerException   if {@code strategy} is null
     */
    public Policy {
        Objects.requireNonNull(strategy, "strategy");
        FAILURE_THRESHOLD.check(failureThreshold);
        if (maxGapBetweenFailuresMillis != 0) {
            MAX_GAP_BETWEEN_FAILURES.check(Duration.ofMillis(maxGapBetweenFailuresMillis));
        }
        ERROR_RATE_THRESHOLD.check(errorRateThreshold);
        MINIMUM_CALLS.check(minimumCalls);
        ERROR_RATE_DECAY.check(errorRateDecay);
        SUCCESS_THRESHOLD.check(successThreshold);
        RESET_TIMEOUT.check(Duration.ofMillis(resetTimeoutMillis));
        MAX_RESET_TIMEOUT.check(Duration.ofMillis(maxResetTimeoutMillis));
        BACKOFF_MULTIPLIER.check(backoffMultiplier);
        if (maxResetTimeoutMillis < resetTimeoutMillis) {
            throw new InvalidOptionException(MAX_RESET_TIMEOUT.name(), "must be >= resetTimeout ("
                    + Duration.ofMillis(resetTimeoutMillis) + "), was " + Duration.ofMillis(maxResetTimeoutMillis));
        }
        JITTER.check(jitter);
        STATE_TTL.check(Duration.ofMillis(stateTtlMillis));
        if (stateTtlMillis <= 2 * maxResetTimeoutMillis) {
            throw new InvalidOptionException(STATE_TTL.name(), "must be more than twice maxResetTimeout ("
                    + maxResetTimeoutMillis + " ms), was " + stateTtlMillis + " ms");
        }
        FAILURE_RATE_THRESHOLD.check(failureRateThreshold);
        MINIMUM_NUMBER_OF_CALLS.check(minimumNumberOfCalls);
        SLOW_CALL_RATE_THRESHOLD.check(slowCallRateThreshold);
        checkWindow(slidingWindowType, slidingWindowSize);
        MODE.check(mode);
        QUORUM.check(quorum);
        QUORUM_FRACTION.check(quorumFraction);
        if (quorum > 1 && quorumFraction > 0.0) {
            throw new InvalidOptionException(QUORUM_FRACTION.name(), "set quorum or quorumFraction, not both "
                    + "(quorum " + quorum + ", quorumFraction " + quorumFraction + ")");
        }
        if ((quorum > 1 || quorumFraction > 0.0) && strategy != Strategy.CONSECUTIVE
                && strategy != Strategy.SLIDING_WINDOW) {
            throw new InvalidOptionException(quorum > 1 ? QUORUM.name() : QUORUM_FRACTION.name(),
                    "needs the consecutive or the sliding-window strategy, was " + strategy);
        }
    }

    /** Whether the fleet opening needs a quorum of instances ({@link #quorum} above 1, or a fraction). */
    public boolean quorumOn() {
        return quorum > 1 || quorumFraction > 0.0;
    }

    /**
     * The distinct failing instances the fleet opening needs when {@code seen} instances recorded in the scope:
     * {@link #quorum}, or {@code ceil(quorumFraction * seen)} (at least 1); 1 without a quorum.
     */
    public int quorumRequired(int seen) {
        if (quorum > 1) {
            return quorum;
        }
        if (quorumFraction > 0.0) {
            return Math.max(1, (int) Math.ceil(quorumFraction * seen - 1e-9));
        }
        return 1;
    }

    private static void checkWindow(SlidingWindowType type, int size) {
        SLIDING_WINDOW_TYPE.check(type);
        SLIDING_WINDOW_SIZE.check(size);
        try {
            SlidingWindow.checkSize(type, size); // the bound of each type, declared once with the window
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(SLIDING_WINDOW_SIZE.name(), e.getMessage());
        }
    }

    /**
     * The outcomes a sliding window must hold before a rate may open the breaker: {@code minimumNumberOfCalls},
     * capped at the size of a count window (as Resilience4j does).
     */
    public int windowMinimumCalls() {
        return slidingWindowType == SlidingWindowType.COUNT_BASED
                ? Math.min(minimumNumberOfCalls, slidingWindowSize) : minimumNumberOfCalls;
    }

    /** An empty window of this policy's type and size. */
    public SlidingWindow emptyWindow() {
        return SlidingWindow.empty(slidingWindowType, slidingWindowSize);
    }

    /** The reference defaults: consecutive, 5 failures, 60 s reset, x2 backoff up to 8 min, 10% jitter. */
    public static Policy defaults() {
        return DEFAULTS;
    }

    /** A builder seeded with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder seeded with this policy's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.strategy = strategy;
        b.failureThreshold = failureThreshold;
        b.maxGapBetweenFailuresMillis = maxGapBetweenFailuresMillis;
        b.errorRateThreshold = errorRateThreshold;
        b.minimumCalls = minimumCalls;
        b.errorRateDecay = errorRateDecay;
        b.successThreshold = successThreshold;
        b.resetTimeoutMillis = resetTimeoutMillis;
        b.backoffMultiplier = backoffMultiplier;
        b.maxResetTimeoutMillis = maxResetTimeoutMillis;
        b.jitter = jitter;
        b.stateTtlMillis = stateTtlMillis;
        b.failureRateThreshold = failureRateThreshold;
        b.minimumNumberOfCalls = minimumNumberOfCalls;
        b.slowCallRateThreshold = slowCallRateThreshold;
        b.slidingWindowType = slidingWindowType;
        b.slidingWindowSize = slidingWindowSize;
        b.mode = mode;
        b.quorum = quorum;
        b.quorumFraction = quorumFraction;
        return b;
    }

    /** {@link #resetTimeoutMillis()} as a duration. */
    public Duration resetTimeout() {
        return Duration.ofMillis(resetTimeoutMillis);
    }

    /** {@link #maxResetTimeoutMillis()} as a duration. */
    public Duration maxResetTimeout() {
        return Duration.ofMillis(maxResetTimeoutMillis);
    }

    /** {@link #stateTtlMillis()} as a duration. */
    public Duration stateTtl() {
        return Duration.ofMillis(stateTtlMillis);
    }

    /**
     * Builder for {@link Policy}, seeded with each option's default. Each setter checks its value and throws
     * {@link InvalidOptionException} naming the option; {@link #build()} checks the rules between options
     * ({@code maxResetTimeout >= resetTimeout}, the state TTL). Not thread-safe.
     */
    public static final class Builder {
        private Strategy strategy = STRATEGY.defaultValue();
        private int failureThreshold = FAILURE_THRESHOLD.defaultValue();
        private long maxGapBetweenFailuresMillis;
        private double errorRateThreshold = ERROR_RATE_THRESHOLD.defaultValue();
        private int minimumCalls = MINIMUM_CALLS.defaultValue();
        private double errorRateDecay = ERROR_RATE_DECAY.defaultValue();
        private int successThreshold = SUCCESS_THRESHOLD.defaultValue();
        private long resetTimeoutMillis = RESET_TIMEOUT.defaultValue().toMillis();
        private double backoffMultiplier = BACKOFF_MULTIPLIER.defaultValue();
        /** Null while unset: 8 x resetTimeout. */
        private Long maxResetTimeoutMillis;
        private double jitter = JITTER.defaultValue();
        /** Null while unset: max(24 h, 4 x maxResetTimeout). */
        private Long stateTtlMillis;
        private double failureRateThreshold = FAILURE_RATE_THRESHOLD.defaultValue();
        private int minimumNumberOfCalls = MINIMUM_NUMBER_OF_CALLS.defaultValue();
        private double slowCallRateThreshold = SLOW_CALL_RATE_THRESHOLD.defaultValue();
        private SlidingWindowType slidingWindowType = SLIDING_WINDOW_TYPE.defaultValue();
        private int slidingWindowSize = SLIDING_WINDOW_SIZE.defaultValue();
        private BreakerMode mode = MODE.defaultValue();
        private int quorum = QUORUM.defaultValue();
        private double quorumFraction = QUORUM_FRACTION.defaultValue();

        private Builder() {
        }

        /** See {@link Policy#STRATEGY}. */
        public Builder strategy(Strategy v) { strategy = STRATEGY.check(v); return this; }

        /** See {@link Policy#FAILURE_THRESHOLD}. */
        public Builder failureThreshold(int v) { failureThreshold = FAILURE_THRESHOLD.check(v); return this; }

        /** See {@link Policy#ERROR_RATE_THRESHOLD}. */
        public Builder errorRateThreshold(double v) { errorRateThreshold = ERROR_RATE_THRESHOLD.check(v); return this; }

        /** See {@link Policy#MINIMUM_CALLS}. */
        public Builder minimumCalls(int v) { minimumCalls = MINIMUM_CALLS.check(v); return this; }

        /** See {@link Policy#ERROR_RATE_DECAY}. */
        public Builder errorRateDecay(double v) { errorRateDecay = ERROR_RATE_DECAY.check(v); return this; }

        /** See {@link Policy#SUCCESS_THRESHOLD}. */
        public Builder successThreshold(int v) { successThreshold = SUCCESS_THRESHOLD.check(v); return this; }

        /** See {@link Policy#BACKOFF_MULTIPLIER}. */
        public Builder backoffMultiplier(double v) { backoffMultiplier = BACKOFF_MULTIPLIER.check(v); return this; }

        /** See {@link Policy#JITTER}. */
        public Builder jitter(double v) { jitter = JITTER.check(v); return this; }

        /** See {@link Policy#MAX_GAP_BETWEEN_FAILURES}; {@code null} or zero means unset. */
        public Builder maxGapBetweenFailures(Duration v) {
            maxGapBetweenFailuresMillis = v == null || v.isZero() ? 0
                    : MAX_GAP_BETWEEN_FAILURES.check(v).toMillis();
            return this;
        }

        /** See {@link Policy#RESET_TIMEOUT}. */
        public Builder resetTimeout(Duration v) {
            resetTimeoutMillis = RESET_TIMEOUT.check(v).toMillis();
            return this;
        }

        /** See {@link Policy#MAX_RESET_TIMEOUT} (at most {@link Policy#MAX_DURATION_MILLIS}). */
        public Builder maxResetTimeout(Duration v) {
            maxResetTimeoutMillis = MAX_RESET_TIMEOUT.check(v).toMillis();
            return this;
        }

        /** See {@link Policy#FAILURE_RATE_THRESHOLD}. */
        public Builder failureRateThreshold(double v) {
            failureRateThreshold = FAILURE_RATE_THRESHOLD.check(v);
            return this;
        }

        /** See {@link Policy#MINIMUM_NUMBER_OF_CALLS}. */
        public Builder minimumNumberOfCalls(int v) {
            minimumNumberOfCalls = MINIMUM_NUMBER_OF_CALLS.check(v);
            return this;
        }

        /** See {@link Policy#SLOW_CALL_RATE_THRESHOLD}. */
        public Builder slowCallRateThreshold(double v) {
            slowCallRateThreshold = SLOW_CALL_RATE_THRESHOLD.check(v);
            return this;
        }

        /**
         * Selects the {@link Strategy#SLIDING_WINDOW} strategy with a window of this type and size.
         *
         * @param size outcomes (count window) or seconds (time window)
         * @throws InvalidOptionException if {@code type} is null or {@code size} out of range for the type
         */
        public Builder slidingWindow(SlidingWindowType type, int size) {
            checkWindow(type, size);
            slidingWindowType = type;
            slidingWindowSize = size;
            strategy = Strategy.SLIDING_WINDOW;
            return this;
        }

        /** See {@link Policy#MODE}. */
        public Builder mode(BreakerMode v) { mode = MODE.check(v); return this; }

        /** See {@link Policy#QUORUM}. */
        public Builder quorum(int v) { quorum = QUORUM.check(v); return this; }

        /** See {@link Policy#QUORUM_FRACTION}. */
        public Builder quorumFraction(double v) { quorumFraction = QUORUM_FRACTION.check(v); return this; }

        /** See {@link Policy#STATE_TTL}. */
        public Builder stateTtl(Duration v) {
            stateTtlMillis = STATE_TTL.check(v).toMillis();
            return this;
        }

        /**
         * Builds the policy.
         *
         * @throws InvalidOptionException naming the option, if two options disagree
         *                                ({@code maxResetTimeout < resetTimeout}, a state TTL too short)
         */
        public Policy build() {
            long max = maxResetTimeoutMillis != null ? maxResetTimeoutMillis
                    : Math.min(saturatedMultiply(resetTimeoutMillis, 8), MAX_DURATION_MILLIS);
            long ttl = stateTtlMillis != null ? stateTtlMillis : Math.max(86_400_000L, saturatedMultiply(max, 4));
            return new Policy(strategy, failureThreshold, maxGapBetweenFailuresMillis, errorRateThreshold,
                    minimumCalls, errorRateDecay, successThreshold, resetTimeoutMillis, backoffMultiplier, max,
                    jitter, ttl, failureRateThreshold, minimumNumberOfCalls, slowCallRateThreshold, slidingWindowType,
                    slidingWindowSize, mode, quorum, quorumFraction);
        }

        private static long saturatedMultiply(long a, long b) {
            long r = a * b;
            return (a != 0 && r / a != b) ? Long.MAX_VALUE / 4 : r;
        }
    }
}

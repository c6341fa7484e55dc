package dev.redeye.api;

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
        long stateTtlMillis) {

    /**
     * The longest duration a policy holds, in ms: 2<sup>53</sup> (about 285,000 years), the largest span that an
     * IEEE double (the reset window's arithmetic, and the numbers of the Redis store's Lua rules) holds exactly,
     * and small enough that {@code now - 2 * maxResetTimeout} and {@code openedAt + window} never overflow for
     * any epoch-ms {@code now}.
     */
    public static final long MAX_DURATION_MILLIS = 1L << 53;

    private static final Policy DEFAULTS = builder().build();

    /**
     * Validates every field.
     *
     * @throws IllegalArgumentException naming the option and the bad value
     * @throws NullPointerException     if {@code strategy} is null
     */
    public Policy {
        Objects.requireNonNull(strategy, "strategy");
        if (failureThreshold < 1) {
            throw new IllegalArgumentException("failureThreshold must be >= 1, was " + failureThreshold);
        }
        if (maxGapBetweenFailuresMillis < 0) {
            throw new IllegalArgumentException(
                    "maxGapBetweenFailures must be >= 0 ms, was " + maxGapBetweenFailuresMillis);
        }
        if (!(errorRateThreshold > 0.0 && errorRateThreshold <= 1.0)) {
            throw new IllegalArgumentException("errorRateThreshold must be in (0, 1], was " + errorRateThreshold);
        }
        if (minimumCalls < 1) {
            throw new IllegalArgumentException("minimumCalls must be >= 1, was " + minimumCalls);
        }
        if (!(errorRateDecay > 0.0 && errorRateDecay < 1.0)) {
            throw new IllegalArgumentException("errorRateDecay must be in (0, 1), was " + errorRateDecay);
        }
        if (successThreshold < 1) {
            throw new IllegalArgumentException("successThreshold must be >= 1, was " + successThreshold);
        }
        if (resetTimeoutMillis <= 0) {
            throw new IllegalArgumentException("resetTimeout must be > 0 ms, was " + resetTimeoutMillis);
        }
        atMostMaxDuration("resetTimeout", resetTimeoutMillis);
        atMostMaxDuration("maxResetTimeout", maxResetTimeoutMillis);
        atMostMaxDuration("maxGapBetweenFailures", maxGapBetweenFailuresMillis);
        if (!(backoffMultiplier >= 1.0) || Double.isInfinite(backoffMultiplier)) {
            throw new IllegalArgumentException("backoffMultiplier must be a finite number >= 1, was "
                    + backoffMultiplier);
        }
        if (maxResetTimeoutMillis < resetTimeoutMillis) {
            throw new IllegalArgumentException("maxResetTimeout must be >= resetTimeout (" + resetTimeoutMillis
                    + " ms), was " + maxResetTimeoutMillis);
        }
        if (!(jitter >= 0.0 && jitter < 1.0)) {
            throw new IllegalArgumentException("jitter must be in [0, 1), was " + jitter);
        }
        if (stateTtlMillis <= 2 * maxResetTimeoutMillis) {
            throw new IllegalArgumentException("stateTtl must be more than twice maxResetTimeout ("
                    + maxResetTimeoutMillis + " ms), was " + stateTtlMillis);
        }
    }

    private static void atMostMaxDuration(String option, long millis) {
        if (millis > MAX_DURATION_MILLIS) {
            throw new IllegalArgumentException(option + " must be at most " + MAX_DURATION_MILLIS
                    + " ms (2^53, about 285,000 years), was " + millis + " ms");
        }
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
        b.maxResetSet = true;
        b.stateTtlSet = true;
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
     * Builder for {@link Policy}. Every value is checked in {@link #build()}, which throws
     * {@link IllegalArgumentException} naming the option and the bad value. Not thread-safe.
     */
    public static final class Builder {
        private Strategy strategy = Strategy.CONSECUTIVE;
        private int failureThreshold = 5;
        private long maxGapBetweenFailuresMillis = 0;
        private double errorRateThreshold = 0.5;
        private int minimumCalls = 10;
        private double errorRateDecay = 0.9;
        private int successThreshold = 1;
        private long resetTimeoutMillis = 60_000;
        private double backoffMultiplier = 2.0;
        private long maxResetTimeoutMillis;
        private boolean maxResetSet;
        private double jitter = 0.1;
        private long stateTtlMillis;
        private boolean stateTtlSet;

        private Builder() {
        }

        public Builder strategy(Strategy v) { strategy = v; return this; }
        public Builder failureThreshold(int v) { failureThreshold = v; return this; }
        public Builder errorRateThreshold(double v) { errorRateThreshold = v; return this; }
        public Builder minimumCalls(int v) { minimumCalls = v; return this; }
        public Builder errorRateDecay(double v) { errorRateDecay = v; return this; }
        public Builder successThreshold(int v) { successThreshold = v; return this; }
        public Builder backoffMultiplier(double v) { backoffMultiplier = v; return this; }
        public Builder jitter(double v) { jitter = v; return this; }

        /** Gap after which the consecutive count restarts; {@code null} or zero means unset. */
        public Builder maxGapBetweenFailures(Duration v) {
            maxGapBetweenFailuresMillis = v == null ? 0 : millis("maxGapBetweenFailures", v);
            return this;
        }

        public Builder resetTimeout(Duration v) {
            resetTimeoutMillis = millis("resetTimeout", v);
            return this;
        }

        /** Cap on the reset window (at most {@link Policy#MAX_DURATION_MILLIS}); defaults to 8 x resetTimeout. */
        public Builder maxResetTimeout(Duration v) {
            maxResetTimeoutMillis = millis("maxResetTimeout", v);
            maxResetSet = true;
            return this;
        }

        /** Clean-up TTL for stored state; defaults to max(24 h, 4 x maxResetTimeout). */
        public Builder stateTtl(Duration v) {
            stateTtlMillis = millis("stateTtl", v);
            stateTtlSet = true;
            return this;
        }

        private static long millis(String option, Duration v) {
            if (v == null) {
                throw new IllegalArgumentException(option + " must not be null");
            }
            if (v.isNegative()) {
                throw new IllegalArgumentException(option + " must not be negative, was " + v);
            }
            return v.toMillis();
        }

        /**
         * Builds the policy.
         *
         * @throws IllegalArgumentException naming the first bad option and its value
         */
        public Policy build() {
            long max = maxResetSet ? maxResetTimeoutMillis : Math.min(saturatedMultiply(resetTimeoutMillis, 8),
                    Math.max(resetTimeoutMillis, MAX_DURATION_MILLIS)); // a too long resetTimeout is refused as such
            long ttl = stateTtlSet ? stateTtlMillis : Math.max(86_400_000L, saturatedMultiply(max, 4));
            return new Policy(strategy, failureThreshold, maxGapBetweenFailuresMillis, errorRateThreshold,
                    minimumCalls, errorRateDecay, successThreshold, resetTimeoutMillis, backoffMultiplier, max,
                    jitter, ttl);
        }

        private static long saturatedMultiply(long a, long b) {
            long r = a * b;
            return (a != 0 && r / a != b) ? Long.MAX_VALUE / 4 : r;
        }
    }
}

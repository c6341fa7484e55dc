package dev.redeye.spring.boot;

import dev.redeye.OutlierPolicy;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The options of one circuit breaker, bound from {@code redeye.defaults.*} (every breaker) and from
 * {@code redeye.breakers.<name>.*} (one named breaker, overriding the defaults option by option).
 *
 * <p>Every option is unset ({@code null}) until a property sets it; an option set nowhere keeps the engine's
 * own default, documented on {@link dev.redeye.CircuitBreakerBuilder} (and repeated below). Values are
 * validated when the breaker is built, at application start: an invalid one fails the start with an
 * exception naming the property ({@code redeye.breakers.payments.failure-threshold}), not only the builder
 * option. Durations take Spring's forms: {@code 500ms}, {@code 60s}, {@code 2m}, or ISO-8601 {@code PT60S}; a
 * bare number is milliseconds.
 *
 * <p>A plain mutable bean, as Spring's binder needs; not thread-safe, read once at start.
 */
public class BreakerProperties {

    /** How a closed breaker decides to open: consecutive (default), error-rate, leaky or sliding-window. */
    private Strategy strategy;

    /** Consecutive failures that open the breaker (consecutive strategy); at least 1. Default 5. */
    private Integer failureThreshold;

    /** Error rate in (0, 1] that opens the breaker (error-rate strategy). Default 0.5. */
    private Double errorRateThreshold;

    /** Outcomes needed before the error rate may open the breaker; at least 1. Default 10. */
    private Integer minimumCalls;

    /** Weight of the previous error rate in the moving average, in (0, 1). Default 0.9. */
    private Double errorRateDecay;

    /** Base time an open breaker waits before a trial call; at least 1 ms. Default 60s. */
    private Duration resetTimeout;

    /** Multiplier of the reset window per failed trial; finite, at least 1. Default 2. */
    private Double backoffMultiplier;

    /** Cap of the reset window; at least reset-timeout. Default 8 x reset-timeout. */
    private Duration maxResetTimeout;

    /** Relative jitter of the reset window per instance, in [0, 1). Default 0.1. */
    private Double jitter;

    /** Successful trials needed to close the breaker; at least 1. Default 1. */
    private Integer successThreshold;

    /** Concurrent trial calls while half-open, fleet-wide with a shared store; at least 1. Default 1. */
    private Integer halfOpenPermits;

    /** Lifetime of a trial claim. Default min(call-timeout or 10s, reset-timeout). */
    private Duration trialTimeout;

    /** A failure later than this after the previous one restarts the consecutive count. Default unset. */
    private Duration maxGapBetweenFailures;

    /** Bounds each call: a call running longer counts as a failure (the thread is interrupted). Default unset. */
    private Duration callTimeout;

    /** What a call does when the shared store fails: allow (default), reject or local. */
    private StoreErrorPolicy storeErrorPolicy;

    /** How often a cached open state is re-verified with one store read. Default 2s. */
    private Duration openCacheRefresh;

    /** The most distinct operations the breaker keeps before evicting the least recently used. Default unset. */
    private Integer maxOperations;

    /**
     * Write batching: this instance's outcomes of an operation are written together at most this long after the
     * first (at once when a failure would open the breaker); 1ms to 10s. Needs a store with batches of outcomes
     * (memory, PostgreSQL, DynamoDB, Redis). Default unset: every outcome is written at once.
     */
    private Duration recordBatching;

    /** Whether rejections (CircuitOpenException) carry a stack trace. Default false (cheap rejections). */
    private Boolean writableStackTraces;

    /** The sliding window's type, count-based (default) or time-based; setting it or the size selects the sliding-window strategy. */
    private SlidingWindowType slidingWindowType;

    /** The sliding window's size: outcomes (count-based, at most 1000) or seconds (time-based). Default 100. */
    private Integer slidingWindowSize;

    /** Failure rate in percent, in (0, 100], that opens a sliding-window breaker. Default 50. */
    private Double failureRateThreshold;

    /** Outcomes a sliding window must hold before a rate may open the breaker; at least 1. Default 100. */
    private Integer minimumNumberOfCalls;

    /** Slow-call rate in percent, in (0, 100], that opens a sliding-window breaker. Default 100. */
    private Double slowCallRateThreshold;

    /** A call running at least this long is slow, counted while it runs (sliding-window strategy). Default unset. */
    private Duration slowCallDurationThreshold;

    /** The mode when no operator stored one: normal (default), metrics-only or disabled. */
    private BreakerMode mode;

    /**
     * Distinct failing instances the fleet opening needs (consecutive and sliding-window strategies, a store with
     * quorum support); 0 or 1: none. Default none.
     */
    private Integer quorum;

    /** The fraction, in (0, 1], of the instances seen recording that must be failing for the fleet to open. */
    private Double quorumFraction;

    /** This instance's id in the fleet, for a quorum. Default: one per process (pid@host and a random suffix). */
    private String instanceId;

    /**
     * What this instance does with its own calls while it is an outlier under a quorum: reject (default, like a
     * local breaker, for one reset timeout) or allow and only report.
     */
    private OutlierPolicy outlierPolicy;

    /**
     * Exceptions that count as failures (with their subclasses); when set, every other exception counts as a
     * success. Default unset: every exception counts.
     */
    private List<Class<? extends Throwable>> recordExceptions;

    /** Exceptions that never count as failures (with their subclasses); they win over record-exceptions. */
    private List<Class<? extends Throwable>> ignoreExceptions;

    /** The local cache of closed states (distributed mode, a store with a transition feed). */
    private final LocalCache localCache = new LocalCache();

    /**
     * Whether Actuator's health shows this breaker under the {@code redeyeBreakers} contributor (its status:
     * UP, CIRCUIT_OPEN or CIRCUIT_HALF_OPEN), for health groups. Default false.
     */
    private Boolean registerHealthIndicator;

    /**
     * Whether this breaker's health is DOWN (rather than CIRCUIT_OPEN, which leaves the application's status
     * alone) while one of its operations is open, and UNKNOWN while half-open. Default false.
     */
    private Boolean allowHealthIndicatorToFail;

    /**
     * Whether this breaker's health is OUT_OF_SERVICE while this instance is an outlier for one of its operations
     * under a quorum (its own failures reached the threshold while the fleet stayed closed), so that a readiness
     * group including it takes the one bad instance out. Default false.
     */
    private Boolean healthReportsOutlier;

    public Strategy getStrategy() {
        return strategy;
    }

    public void setStrategy(Strategy strategy) {
        this.strategy = strategy;
    }

    public Integer getFailureThreshold() {
        return failureThreshold;
    }

    public void setFailureThreshold(Integer failureThreshold) {
        this.failureThreshold = failureThreshold;
    }

    public Double getErrorRateThreshold() {
        return errorRateThreshold;
    }

    public void setErrorRateThreshold(Double errorRateThreshold) {
        this.errorRateThreshold = errorRateThreshold;
    }

    public Integer getMinimumCalls() {
        return minimumCalls;
    }

    public void setMinimumCalls(Integer minimumCalls) {
        this.minimumCalls = minimumCalls;
    }

    public Double getErrorRateDecay() {
        return errorRateDecay;
    }

    public void setErrorRateDecay(Double errorRateDecay) {
        this.errorRateDecay = errorRateDecay;
    }

    public Duration getResetTimeout() {
        return resetTimeout;
    }

    public void setResetTimeout(Duration resetTimeout) {
        this.resetTimeout = resetTimeout;
    }

    public Double getBackoffMultiplier() {
        return backoffMultiplier;
    }

    public void setBackoffMultiplier(Double backoffMultiplier) {
        this.backoffMultiplier = backoffMultiplier;
    }

    public Duration getMaxResetTimeout() {
        return maxResetTimeout;
    }

    public void setMaxResetTimeout(Duration maxResetTimeout) {
        this.maxResetTimeout = maxResetTimeout;
    }

    public Double getJitter() {
        return jitter;
    }

    public void setJitter(Double jitter) {
        this.jitter = jitter;
    }

    public Integer getSuccessThreshold() {
        return successThreshold;
    }

    public void setSuccessThreshold(Integer successThreshold) {
        this.successThreshold = successThreshold;
    }

    public Integer getHalfOpenPermits() {
        return halfOpenPermits;
    }

    public void setHalfOpenPermits(Integer halfOpenPermits) {
        this.halfOpenPermits = halfOpenPermits;
    }

    public Duration getTrialTimeout() {
        return trialTimeout;
    }

    public void setTrialTimeout(Duration trialTimeout) {
        this.trialTimeout = trialTimeout;
    }

    public Duration getMaxGapBetweenFailures() {
        return maxGapBetweenFailures;
    }

    public void setMaxGapBetweenFailures(Duration maxGapBetweenFailures) {
        this.maxGapBetweenFailures = maxGapBetweenFailures;
    }

    public Duration getCallTimeout() {
        return callTimeout;
    }

    public void setCallTimeout(Duration callTimeout) {
        this.callTimeout = callTimeout;
    }

    public StoreErrorPolicy getStoreErrorPolicy() {
        return storeErrorPolicy;
    }

    public void setStoreErrorPolicy(StoreErrorPolicy storeErrorPolicy) {
        this.storeErrorPolicy = storeErrorPolicy;
    }

    public Duration getOpenCacheRefresh() {
        return openCacheRefresh;
    }

    public void setOpenCacheRefresh(Duration openCacheRefresh) {
        this.openCacheRefresh = openCacheRefresh;
    }

    public Integer getMaxOperations() {
        return maxOperations;
    }

    public void setMaxOperations(Integer maxOperations) {
        this.maxOperations = maxOperations;
    }

    public Duration getRecordBatching() {
        return recordBatching;
    }

    public void setRecordBatching(Duration recordBatching) {
        this.recordBatching = recordBatching;
    }

    public Boolean getWritableStackTraces() {
        return writableStackTraces;
    }

    public void setWritableStackTraces(Boolean writableStackTraces) {
        this.writableStackTraces = writableStackTraces;
    }

    public List<Class<? extends Throwable>> getRecordExceptions() {
        return recordExceptions;
    }

    public void setRecordExceptions(List<Class<? extends Throwable>> recordExceptions) {
        this.recordExceptions = recordExceptions == null ? null : new ArrayList<>(recordExceptions);
    }

    public List<Class<? extends Throwable>> getIgnoreExceptions() {
        return ignoreExceptions;
    }

    public void setIgnoreExceptions(List<Class<? extends Throwable>> ignoreExceptions) {
        this.ignoreExceptions = ignoreExceptions == null ? null : new ArrayList<>(ignoreExceptions);
    }

    public LocalCache getLocalCache() {
        return localCache;
    }

    public Boolean getRegisterHealthIndicator() {
        return registerHealthIndicator;
    }

    public void setRegisterHealthIndicator(Boolean registerHealthIndicator) {
        this.registerHealthIndicator = registerHealthIndicator;
    }

    public Boolean getAllowHealthIndicatorToFail() {
        return allowHealthIndicatorToFail;
    }

    public void setAllowHealthIndicatorToFail(Boolean allowHealthIndicatorToFail) {
        this.allowHealthIndicatorToFail = allowHealthIndicatorToFail;
    }

    /**
     * The opt-in local cache: a closed state is served from memory for up to {@code stale-tolerance} with zero
     * store reads, kept current by the store's transition feed. The worst-case fail-open window is the stale
     * tolerance.
     */
    public static class LocalCache {

        /** Whether the local cache is on (needs a store with a transition feed). Default false. */
        private Boolean enabled;

        /** How long a cached closed state may be served without a store read. Default 100ms. */
        private Duration staleTolerance;

        public Boolean getEnabled() {
            return enabled;
        }

        public void setEnabled(Boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getStaleTolerance() {
            return staleTolerance;
        }

        public void setStaleTolerance(Duration staleTolerance) {
            this.staleTolerance = staleTolerance;
        }
    }

    public SlidingWindowType getSlidingWindowType() {
        return slidingWindowType;
    }

    public void setSlidingWindowType(SlidingWindowType slidingWindowType) {
        this.slidingWindowType = slidingWindowType;
    }

    public Integer getSlidingWindowSize() {
        return slidingWindowSize;
    }

    public void setSlidingWindowSize(Integer slidingWindowSize) {
        this.slidingWindowSize = slidingWindowSize;
    }

    public Double getFailureRateThreshold() {
        return failureRateThreshold;
    }

    public void setFailureRateThreshold(Double failureRateThreshold) {
        this.failureRateThreshold = failureRateThreshold;
    }

    public Integer getMinimumNumberOfCalls() {
        return minimumNumberOfCalls;
    }

    public void setMinimumNumberOfCalls(Integer minimumNumberOfCalls) {
        this.minimumNumberOfCalls = minimumNumberOfCalls;
    }

    public Double getSlowCallRateThreshold() {
        return slowCallRateThreshold;
    }

    public void setSlowCallRateThreshold(Double slowCallRateThreshold) {
        this.slowCallRateThreshold = slowCallRateThreshold;
    }

    public Duration getSlowCallDurationThreshold() {
        return slowCallDurationThreshold;
    }

    public void setSlowCallDurationThreshold(Duration slowCallDurationThreshold) {
        this.slowCallDurationThreshold = slowCallDurationThreshold;
    }

    public BreakerMode getMode() {
        return mode;
    }

    public void setMode(BreakerMode mode) {
        this.mode = mode;
    }

    public Integer getQuorum() {
        return quorum;
    }

    public void setQuorum(Integer quorum) {
        this.quorum = quorum;
    }

    public Double getQuorumFraction() {
        return quorumFraction;
    }

    public void setQuorumFraction(Double quorumFraction) {
        this.quorumFraction = quorumFraction;
    }

    public OutlierPolicy getOutlierPolicy() {
        return outlierPolicy;
    }

    public void setOutlierPolicy(OutlierPolicy outlierPolicy) {
        this.outlierPolicy = outlierPolicy;
    }

    public Boolean getHealthReportsOutlier() {
        return healthReportsOutlier;
    }

    public void setHealthReportsOutlier(Boolean healthReportsOutlier) {
        this.healthReportsOutlier = healthReportsOutlier;
    }

    public String getInstanceId() {
        return instanceId;
    }

    public void setInstanceId(String instanceId) {
        this.instanceId = instanceId;
    }
}

package dev.redeye;

import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The immutable, validated configuration of one {@link CircuitBreaker}, copied from its
 * {@link CircuitBreakerBuilder} by {@link CircuitBreakerBuilder#build()}. Getters only; read it with
 * {@link CircuitBreaker#config()}. Every threshold a transition rule needs is also available as one
 * {@link Policy} through {@link #policy()}.
 *
 * <p>Thread-safe (immutable). The predicates, listeners, fallback, clock, ticker and store are the user's own
 * objects, held by reference.
 */
public final class CircuitBreakerConfig {
    private final Policy policy;
    private final int halfOpenPermits;
    private final Duration trialTimeout;
    private final Duration callTimeout;
    private final Duration slowCallDurationThreshold;
    private final String instanceId;
    private final OutlierPolicy outlierPolicy;
    private final Consumer<Outlier> onOutlier;
    private final Predicate<? super Throwable> recordFailure;
    private final Predicate<Object> recordResult;
    private final Fallback fallback;
    private final StoreErrorPolicy storeErrorPolicy;
    private final Duration openCacheRefresh;
    private final Duration localCacheStaleTolerance;
    private final Integer maxOperations;
    private final Duration recordBatching;
    private final Clock clock;
    private final Ticker ticker;
    private final Store store;
    private final boolean closeStore;
    private final Consumer<TransitionEvent> onStateChange;
    private final BiConsumer<String, Throwable> onStoreError;
    private final BiConsumer<String, RuntimeException> onCallRejected;
    private final BiConsumer<String, Throwable> onIgnoredError;
    private final Consumer<TransitionEvent> onFleetStateChange;
    private final boolean writableStackTraces;
    private final boolean followFeed;

    /**
     * Copies the builder, whose setters checked every value, and applies the rules between options.
     *
     * @throws dev.redeye.api.InvalidOptionException naming the option, if two options disagree
     */
    CircuitBreakerConfig(CircuitBreakerBuilder b) {
        policy = b.policy.build();
        halfOpenPermits = b.halfOpenPermits;
        callTimeout = b.callTimeout;
        slowCallDurationThreshold = b.slowCallDurationThreshold;
        if (slowCallDurationThreshold != null && policy.strategy() != Strategy.SLIDING_WINDOW) {
            throw new InvalidOptionException(CircuitBreakerBuilder.SLOW_CALL_DURATION_THRESHOLD.name(),
                    "applies to the sliding-window strategy (slidingWindow(type, size)), not " + policy.strategy()
                            .wireName());
        }
        instanceId = b.instanceId;
        outlierPolicy = b.outlierPolicy;
        onOutlier = b.onOutlier;
        if (policy.quorumOn()) {
            String option = policy.quorum() > 1 ? Policy.QUORUM.name() : Policy.QUORUM_FRACTION.name();
            if (b.store == null) {
                throw new InvalidOptionException(option, "needs a shared store: in local mode this process is the "
                        + "only instance");
            }
            if (b.store.capability(QuorumState.class).isEmpty()) {
                throw new InvalidOptionException(option, "needs a store that keeps each instance's contributions "
                        + "(capability QuorumState); " + Stores.typeOf(b.store).getSimpleName() + " does not");
            }
        }
        recordBatching = b.recordBatching;
        if (recordBatching != null) {
            String option = CircuitBreakerBuilder.RECORD_BATCHING.name();
            if (b.store == null) {
                throw new InvalidOptionException(option, "needs a shared store: in local mode every outcome is "
                        + "counted in memory already");
            }
            if (b.store.capability(OutcomeBatches.class).isEmpty()) {
                throw new InvalidOptionException(option, "needs a store that applies batches of outcomes "
                        + "(capability OutcomeBatches); " + Stores.typeOf(b.store).getSimpleName() + " does not");
            }
        }
        if (b.trialTimeout != null) {
            trialTimeout = b.trialTimeout;
        } else {
            Duration cap = callTimeout != null ? callTimeout : CircuitBreakerBuilder.TRIAL_TIMEOUT_CAP;
            Duration reset = policy.resetTimeout();
            trialTimeout = cap.compareTo(reset) <= 0 ? cap : reset;
        }
        recordFailure = b.recordFailure;
        recordResult = b.recordResult;
        fallback = b.fallback;
        storeErrorPolicy = b.storeErrorPolicy;
        openCacheRefresh = b.openCacheRefresh;
        localCacheStaleTolerance = b.localCacheStaleTolerance;
        maxOperations = b.maxOperations;
        clock = b.clock;
        ticker = b.ticker;
        store = b.store;
        closeStore = b.closeStore;
        onStateChange = b.onStateChange;
        onStoreError = b.onStoreError;
        onCallRejected = b.onCallRejected;
        onIgnoredError = b.onIgnoredError;
        onFleetStateChange = b.onFleetStateChange;
        writableStackTraces = b.writableStackTraces;
        followFeed = b.followFeed;
    }

    /** How a closed breaker decides to open ({@link Policy#STRATEGY}). */
    public Strategy strategy() {
        return policy.strategy();
    }

    /** Failures that open the breaker ({@link Policy#FAILURE_THRESHOLD}). */
    public int failureThreshold() {
        return policy.failureThreshold();
    }

    /** Error rate that opens the breaker ({@link Policy#ERROR_RATE_THRESHOLD}). */
    public double errorRateThreshold() {
        return policy.errorRateThreshold();
    }

    /** Outcomes needed before the error rate may open the breaker ({@link Policy#MINIMUM_CALLS}). */
    public int minimumCalls() {
        return policy.minimumCalls();
    }

    /** EWMA decay, the weight of the previous rate ({@link Policy#ERROR_RATE_DECAY}). */
    public double errorRateDecay() {
        return policy.errorRateDecay();
    }

    /** Base reset window of an open breaker ({@link Policy#RESET_TIMEOUT}). */
    public Duration resetTimeout() {
        return policy.resetTimeout();
    }

    /** Multiplier of the reset window per failed trial ({@link Policy#BACKOFF_MULTIPLIER}). */
    public double backoffMultiplier() {
        return policy.backoffMultiplier();
    }

    /** Cap on the reset window ({@link Policy#MAX_RESET_TIMEOUT}). */
    public Duration maxResetTimeout() {
        return policy.maxResetTimeout();
    }

    /** Relative jitter of the reset window ({@link Policy#JITTER}). */
    public double jitter() {
        return policy.jitter();
    }

    /** Successful trials needed to close ({@link Policy#SUCCESS_THRESHOLD}). */
    public int successThreshold() {
        return policy.successThreshold();
    }

    /** Concurrent trials allowed while half-open ({@link CircuitBreakerBuilder#halfOpenPermits(int)}). */
    public int halfOpenPermits() {
        return halfOpenPermits;
    }

    /** Lifetime of a trial claim ({@link CircuitBreakerBuilder#trialTimeout(Duration)}). */
    public Duration trialTimeout() {
        return trialTimeout;
    }

    /** The gap after which the consecutive count restarts, if set. */
    public Optional<Duration> maxGapBetweenFailures() {
        long gap = policy.maxGapBetweenFailuresMillis();
        return gap == 0 ? Optional.empty() : Optional.of(Duration.ofMillis(gap));
    }

    /** The call timeout, if set. */
    public Optional<Duration> callTimeout() {
        return Optional.ofNullable(callTimeout);
    }

    /** The slow-call duration threshold (sliding-window strategy), if set. */
    public Optional<Duration> slowCallDurationThreshold() {
        return Optional.ofNullable(slowCallDurationThreshold);
    }

    /** What an outlier instance does with its calls ({@link CircuitBreakerBuilder#outlierPolicy}). */
    public OutlierPolicy outlierPolicy() {
        return outlierPolicy;
    }

    /** The outlier listener ({@link CircuitBreakerBuilder#onOutlier}), if set. */
    public Optional<Consumer<Outlier>> onOutlier() {
        return Optional.ofNullable(onOutlier);
    }

    /** This instance's id in the fleet ({@link CircuitBreakerBuilder#instanceId(String)}). */
    public String instanceId() {
        return instanceId;
    }

    /** Decides whether a thrown exception counts as a failure ({@link CircuitBreakerBuilder#recordFailure}). */
    public Predicate<? super Throwable> recordFailure() {
        return recordFailure;
    }

    /** Decides whether a returned result counts as a failure, if set. */
    public Optional<Predicate<Object>> recordResult() {
        return Optional.ofNullable(recordResult);
    }

    /** The breaker-wide fallback for rejected calls, if set. */
    public Optional<Fallback> fallback() {
        return Optional.ofNullable(fallback);
    }

    /** What the gate does when the store fails ({@link CircuitBreakerBuilder#storeErrorPolicy}). */
    public StoreErrorPolicy storeErrorPolicy() {
        return storeErrorPolicy;
    }

    /** How often a cached open state is re-verified with one read ({@link CircuitBreakerBuilder#openCacheRefresh}). */
    public Duration openCacheRefresh() {
        return openCacheRefresh;
    }

    /** The local cache's stale tolerance if the local cache was requested. */
    public Optional<Duration> localCacheStaleTolerance() {
        return Optional.ofNullable(localCacheStaleTolerance);
    }

    /** The most operations the breaker holds, if set: past it, the least recently used ones are evicted. */
    public OptionalInt maxOperations() {
        return maxOperations == null ? OptionalInt.empty() : OptionalInt.of(maxOperations);
    }

    /**
     * The most a batch of outcomes waits before its write, if write batching is on
     * ({@link CircuitBreakerBuilder#recordBatching}).
     */
    public Optional<Duration> recordBatching() {
        return Optional.ofNullable(recordBatching);
    }

    /** The wall clock of stored times and of the {@code now} given to stores ({@link CircuitBreakerBuilder#clock}). */
    public Clock clock() {
        return clock;
    }

    /** The monotonic source of local durations ({@link CircuitBreakerBuilder#ticker}). */
    public Ticker ticker() {
        return ticker;
    }

    /** The store the user configured; empty in local mode. */
    public Optional<Store> store() {
        return Optional.ofNullable(store);
    }

    /** Whether {@link CircuitBreaker#close()} closes the store ({@link CircuitBreakerBuilder#closeStore}). */
    public boolean closeStore() {
        return closeStore;
    }

    /** The transition listener, if set. */
    public Optional<Consumer<TransitionEvent>> onStateChange() {
        return Optional.ofNullable(onStateChange);
    }

    /** The store error listener, if set. */
    public Optional<BiConsumer<String, Throwable>> onStoreError() {
        return Optional.ofNullable(onStoreError);
    }

    /** The listener of rejected calls, if set. */
    public Optional<BiConsumer<String, RuntimeException>> onCallRejected() {
        return Optional.ofNullable(onCallRejected);
    }

    /** The listener of exceptions not counted as failures, if set. */
    public Optional<BiConsumer<String, Throwable>> onIgnoredError() {
        return Optional.ofNullable(onIgnoredError);
    }

    /** The listener of every transition on the store's feed, if set. */
    public Optional<Consumer<TransitionEvent>> onFleetStateChange() {
        return Optional.ofNullable(onFleetStateChange);
    }

    /** Whether rejections carry a stack trace ({@link CircuitBreakerBuilder#writableStackTraces}). */
    public boolean writableStackTraces() {
        return writableStackTraces;
    }

    /** Whether the breaker follows the store's transition feed even without the local cache or a fleet listener. */
    public boolean followFeed() {
        return followFeed;
    }

    /** Every threshold a transition rule needs, as passed to the store. */
    public Policy policy() {
        return policy;
    }

    @Override
    public String toString() {
        return "CircuitBreakerConfig[strategy=" + strategy() + ", failureThreshold=" + failureThreshold()
                + ", errorRateThreshold=" + errorRateThreshold() + ", minimumCalls=" + minimumCalls()
                + ", errorRateDecay=" + errorRateDecay() + ", resetTimeout=" + resetTimeout()
                + ", backoffMultiplier=" + backoffMultiplier() + ", maxResetTimeout=" + maxResetTimeout()
                + ", jitter=" + jitter() + ", successThreshold=" + successThreshold() + ", halfOpenPermits="
                + halfOpenPermits + ", trialTimeout=" + trialTimeout + ", maxGapBetweenFailures="
                + maxGapBetweenFailures().orElse(null) + ", callTimeout=" + callTimeout
                + ", slowCallDurationThreshold=" + slowCallDurationThreshold + ", storeErrorPolicy="
                + storeErrorPolicy + ", openCacheRefresh=" + openCacheRefresh + ", localCache="
                + localCacheStaleTolerance + ", maxOperations=" + (maxOperations == null ? "unset" : maxOperations)
                + ", store="
                + (store == null ? "local" : Stores.typeOf(store).getSimpleName()) + "]";
    }
}

package dev.redeye;

import dev.redeye.api.Policy;
import dev.redeye.api.Store;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The immutable, validated configuration of one {@link CircuitBreaker}, copied from its
 * {@link CircuitBreaker.Builder} by {@link CircuitBreaker.Builder#build()}. Getters only; read it with
 * {@link CircuitBreaker#config()}. Every threshold a transition rule needs is also available as one
 * {@link Policy} through {@link #policy()}.
 *
 * <p>Thread-safe (immutable). The predicates, listeners, fallback, clock, ticker and store are the user's own
 * objects, held by reference.
 */
public final class CircuitBreakerConfig {
    static final Duration DEFAULT_LOCAL_CACHE = Duration.ofMillis(100);
    static final Duration DEFAULT_TRIAL_TIMEOUT_CAP = Duration.ofSeconds(10);

    private final Strategy strategy;
    private final int failureThreshold;
    private final double errorRateThreshold;
    private final int minimumCalls;
    private final double errorRateDecay;
    private final Duration resetTimeout;
    private final double backoffMultiplier;
    private final Duration maxResetTimeout;
    private final double jitter;
    private final int successThreshold;
    private final int halfOpenPermits;
    private final Duration trialTimeout;
    private final Duration maxGapBetweenFailures;
    private final Duration callTimeout;
    private final Predicate<? super Throwable> recordFailure;
    private final Predicate<Object> recordResult;
    private final Fallback fallback;
    private final StoreErrorPolicy storeErrorPolicy;
    private final Duration openCacheRefresh;
    private final Duration localCacheStaleTolerance;
    private final int maxOperations;
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
    private final Policy policy;

    /** Validates and copies the builder; every message names the option and the bad value. */
    CircuitBreakerConfig(CircuitBreaker.Builder b) {
        strategy = nonNull("strategy", b.strategy);
        failureThreshold = atLeastOne("failureThreshold", b.failureThreshold);
        if (!(b.errorRateThreshold > 0.0 && b.errorRateThreshold <= 1.0)) {
            throw new IllegalArgumentException("errorRateThreshold must be in (0, 1], was " + b.errorRateThreshold);
        }
        errorRateThreshold = b.errorRateThreshold;
        minimumCalls = atLeastOne("minimumCalls", b.minimumCalls);
        if (!(b.errorRateDecay > 0.0 && b.errorRateDecay < 1.0)) {
            throw new IllegalArgumentException("errorRateDecay must be in (0, 1), was " + b.errorRateDecay);
        }
        errorRateDecay = b.errorRateDecay;
        resetTimeout = positive("resetTimeout", b.resetTimeout);
        if (!(b.backoffMultiplier >= 1.0) || Double.isInfinite(b.backoffMultiplier)) {
            throw new IllegalArgumentException("backoffMultiplier must be a finite number >= 1, was "
                    + b.backoffMultiplier);
        }
        backoffMultiplier = b.backoffMultiplier;
        if (b.maxResetTimeoutSet) {
            maxResetTimeout = positive("maxResetTimeout", b.maxResetTimeout);
            if (maxResetTimeout.compareTo(resetTimeout) < 0) {
                throw new IllegalArgumentException("maxResetTimeout must be >= resetTimeout (" + resetTimeout
                        + "), was " + maxResetTimeout);
            }
        } else {
            maxResetTimeout = resetTimeout.multipliedBy(8);
        }
        if (!(b.jitter >= 0.0 && b.jitter < 1.0)) {
            throw new IllegalArgumentException("jitter must be in [0, 1), was " + b.jitter);
        }
        jitter = b.jitter;
        successThreshold = atLeastOne("successThreshold", b.successThreshold);
        halfOpenPermits = atLeastOne("halfOpenPermits", b.halfOpenPermits);
        callTimeout = b.callTimeoutSet ? positive("callTimeout", b.callTimeout) : null;
        maxGapBetweenFailures = b.maxGapSet ? positive("maxGapBetweenFailures", b.maxGapBetweenFailures) : null;
        if (b.trialTimeoutSet) {
            trialTimeout = positive("trialTimeout", b.trialTimeout);
        } else {
            Duration cap = callTimeout != null ? callTimeout : DEFAULT_TRIAL_TIMEOUT_CAP;
            trialTimeout = cap.compareTo(resetTimeout) <= 0 ? cap : resetTimeout;
        }
        recordFailure = nonNull("recordFailure", b.recordFailure);
        recordResult = b.recordResultSet ? nonNull("recordResult", b.recordResult) : null;
        fallback = b.fallbackSet ? nonNull("fallback", b.fallback) : null;
        storeErrorPolicy = nonNull("storeErrorPolicy", b.storeErrorPolicy);
        openCacheRefresh = positive("openCacheRefresh", b.openCacheRefresh);
        localCacheStaleTolerance = b.localCacheSet ? positive("localCache staleTolerance", b.localCacheStaleTolerance)
                : null;
        if (b.maxOperationsSet && b.maxOperations < 1) {
            throw new IllegalArgumentException("maxOperations must be >= 1, was " + b.maxOperations);
        }
        maxOperations = b.maxOperationsSet ? b.maxOperations : 0;
        clock = nonNull("clock", b.clock);
        ticker = nonNull("ticker", b.ticker);
        store = b.storeSet ? nonNull("store", b.store) : null;
        closeStore = b.closeStore;
        onStateChange = b.onStateChangeSet ? nonNull("onStateChange", b.onStateChange) : null;
        onStoreError = b.onStoreErrorSet ? nonNull("onStoreError", b.onStoreError) : null;
        onCallRejected = b.onCallRejectedSet ? nonNull("onCallRejected", b.onCallRejected) : null;
        onIgnoredError = b.onIgnoredErrorSet ? nonNull("onIgnoredError", b.onIgnoredError) : null;
        onFleetStateChange = b.onFleetStateChangeSet ? nonNull("onFleetStateChange", b.onFleetStateChange) : null;
        writableStackTraces = b.writableStackTraces;
        followFeed = b.followFeed;
        // Policy validates again; the checks above come first so that every message names the builder option.
        policy = Policy.builder()
                .strategy(strategy)
                .failureThreshold(failureThreshold)
                .errorRateThreshold(errorRateThreshold)
                .minimumCalls(minimumCalls)
                .errorRateDecay(errorRateDecay)
                .successThreshold(successThreshold)
                .resetTimeout(resetTimeout)
                .backoffMultiplier(backoffMultiplier)
                .maxResetTimeout(maxResetTimeout)
                .jitter(jitter)
                .maxGapBetweenFailures(maxGapBetweenFailures)
                .build();
    }

    private static <T> T nonNull(String option, T value) {
        if (value == null) {
            throw new IllegalArgumentException(option + " must not be null");
        }
        return value;
    }

    private static int atLeastOne(String option, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(option + " must be >= 1, was " + value);
        }
        return value;
    }

    /** The longest duration an option takes: beyond it, millisecond arithmetic on it could overflow. */
    static final Duration MAX_DURATION = Duration.ofDays(365);

    /**
     * Durations are used at millisecond precision, so anything under 1 ms is as meaningless as zero; anything
     * over {@link #MAX_DURATION} is refused rather than left to overflow later.
     */
    private static Duration positive(String option, Duration value) {
        nonNull(option, value);
        if (value.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(option + " must be at most " + MAX_DURATION.toDays() + " days, was "
                    + value);
        }
        if (value.isNegative() || value.isZero() || value.toMillis() < 1) {
            throw new IllegalArgumentException(option + " must be at least 1 ms, was " + value);
        }
        return value;
    }

    /** How a closed breaker decides to open; default {@link Strategy#CONSECUTIVE}. */
    public Strategy strategy() {
        return strategy;
    }

    /** Consecutive failures that open the breaker (consecutive strategy); default 5. */
    public int failureThreshold() {
        return failureThreshold;
    }

    /** EWMA failure rate in (0, 1] that opens the breaker (error-rate strategy); default 0.5. */
    public double errorRateThreshold() {
        return errorRateThreshold;
    }

    /** Outcomes needed before the error rate may open the breaker; default 10. */
    public int minimumCalls() {
        return minimumCalls;
    }

    /** EWMA decay in (0, 1), the weight of the previous rate; default 0.9. */
    public double errorRateDecay() {
        return errorRateDecay;
    }

    /** Base reset window of an open breaker; default 60 s. */
    public Duration resetTimeout() {
        return resetTimeout;
    }

    /** Multiplier of the reset window per failed trial; default 2. */
    public double backoffMultiplier() {
        return backoffMultiplier;
    }

    /** Cap on the reset window; default 8 x {@link #resetTimeout()}. */
    public Duration maxResetTimeout() {
        return maxResetTimeout;
    }

    /** Relative jitter of the reset window, in [0, 1); default 0.1. */
    public double jitter() {
        return jitter;
    }

    /** Successful trials needed to close; default 1. */
    public int successThreshold() {
        return successThreshold;
    }

    /** Concurrent trials allowed while half-open; default 1. */
    public int halfOpenPermits() {
        return halfOpenPermits;
    }

    /** Lifetime of a trial claim; default min(callTimeout or 10 s, resetTimeout). */
    public Duration trialTimeout() {
        return trialTimeout;
    }

    /** The gap after which the consecutive count restarts, if set. */
    public Optional<Duration> maxGapBetweenFailures() {
        return Optional.ofNullable(maxGapBetweenFailures);
    }

    /** The call timeout, if set. */
    public Optional<Duration> callTimeout() {
        return Optional.ofNullable(callTimeout);
    }

    /** Decides whether a thrown exception counts as a failure; default: every exception does. */
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

    /** What the gate does when the store fails; default {@link StoreErrorPolicy#ALLOW}. */
    public StoreErrorPolicy storeErrorPolicy() {
        return storeErrorPolicy;
    }

    /** How often a cached open state is re-verified with one store read; default 2 s. */
    public Duration openCacheRefresh() {
        return openCacheRefresh;
    }

    /** The local cache's stale tolerance if the local cache was requested. */
    public Optional<Duration> localCacheStaleTolerance() {
        return Optional.ofNullable(localCacheStaleTolerance);
    }

    /** The most operations the breaker holds, if set: past it, the least recently used one is evicted. */
    public OptionalInt maxOperations() {
        return maxOperations == 0 ? OptionalInt.empty() : OptionalInt.of(maxOperations);
    }

    /** The wall clock of stored times and of the {@code now} given to stores; default {@link Clock#systemUTC()}. */
    public Clock clock() {
        return clock;
    }

    /** The monotonic source of local durations; default {@link Ticker#systemTicker()}. */
    public Ticker ticker() {
        return ticker;
    }

    /** The store the user configured; empty in local mode. */
    public Optional<Store> store() {
        return Optional.ofNullable(store);
    }

    /** Whether {@link CircuitBreaker#close()} closes the configured store; default true. */
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

    /** Whether rejections carry a stack trace; default false. */
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
        return "CircuitBreakerConfig[strategy=" + strategy + ", failureThreshold=" + failureThreshold
                + ", errorRateThreshold=" + errorRateThreshold + ", minimumCalls=" + minimumCalls
                + ", errorRateDecay=" + errorRateDecay + ", resetTimeout=" + resetTimeout
                + ", backoffMultiplier=" + backoffMultiplier + ", maxResetTimeout=" + maxResetTimeout
                + ", jitter=" + jitter + ", successThreshold=" + successThreshold + ", halfOpenPermits="
                + halfOpenPermits + ", trialTimeout=" + trialTimeout + ", maxGapBetweenFailures="
                + maxGapBetweenFailures + ", callTimeout=" + callTimeout + ", storeErrorPolicy=" + storeErrorPolicy
                + ", openCacheRefresh=" + openCacheRefresh + ", localCache=" + localCacheStaleTolerance
                + ", maxOperations=" + (maxOperations == 0 ? "unset" : maxOperations) + ", store="
                + (store == null ? "local" : Stores.typeOf(store).getSimpleName()) + "]";
    }
}

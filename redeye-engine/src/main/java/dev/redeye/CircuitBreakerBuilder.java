package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Option;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Builds a {@link CircuitBreaker} ({@link CircuitBreaker#builder()}). Each setter checks its value and throws
 * {@link InvalidOptionException} naming the option ({@link InvalidOptionException#option()}) and the bad
 * value; {@link #build()} checks the rules between options ({@code maxResetTimeout >= resetTimeout}). The
 * thresholds a transition rule needs are {@link Policy}'s options, declared with their defaults and checks on
 * {@link Policy} ({@link Policy#FAILURE_THRESHOLD} and the others); the engine's own options are declared
 * here. Not thread-safe; reusable (each {@code build()} makes an independent breaker).
 */
public final class CircuitBreakerBuilder {
    /** The longest duration the engine takes: beyond it, its nanosecond arithmetic on the ticker could overflow. */
    static final Duration MAX_DURATION = Duration.ofDays(365);

    static final Option<Integer> HALF_OPEN_PERMITS = Option.atLeastOne("halfOpenPermits", 1);
    /** Unset by default: min(callTimeout or {@link #TRIAL_TIMEOUT_CAP}, resetTimeout). */
    static final Option<Duration> TRIAL_TIMEOUT = Option.duration("trialTimeout", null, MAX_DURATION);
    static final Duration TRIAL_TIMEOUT_CAP = Duration.ofSeconds(10);
    static final Option<Duration> CALL_TIMEOUT = Option.duration("callTimeout", null, MAX_DURATION);
    /** Unset by default: no call is judged slow. */
    static final Option<Duration> SLOW_CALL_DURATION_THRESHOLD = Option.duration("slowCallDurationThreshold", null,
            MAX_DURATION);
    static final Option<Predicate<? super Throwable>> RECORD_FAILURE = Option.nonNull("recordFailure", t -> true);
    static final Option<OutlierPolicy> OUTLIER_POLICY = Option.nonNull("outlierPolicy", OutlierPolicy.REJECT);
    static final Option<StoreErrorPolicy> STORE_ERROR_POLICY = Option.nonNull("storeErrorPolicy",
            StoreErrorPolicy.ALLOW);
    static final Option<Duration> OPEN_CACHE_REFRESH = Option.duration("openCacheRefresh", Duration.ofSeconds(2),
            MAX_DURATION);
    /** Off by default; {@link #localCache()} turns it on with this option's default stale tolerance. */
    static final Option<Duration> LOCAL_CACHE = Option.duration("localCache", Duration.ofMillis(100), MAX_DURATION);
    /** Unset by default: no limit. */
    static final Option<Integer> MAX_OPERATIONS = Option.atLeastOne("maxOperations", null);
    /** The longest {@link #recordBatching(Duration)} delay: it adds to the detection bound of every opening. */
    static final Duration MAX_RECORD_BATCHING = Duration.ofSeconds(10);
    /** Unset by default: every outcome is its own write. */
    static final Option<Duration> RECORD_BATCHING = Option.duration("recordBatching", null, MAX_RECORD_BATCHING);
    static final Option<Clock> CLOCK = Option.nonNull("clock", Clock.systemUTC());
    static final Option<Ticker> TICKER = Option.nonNull("ticker", Ticker.systemTicker());

    final Policy.Builder policy = Policy.builder();
    int halfOpenPermits = HALF_OPEN_PERMITS.defaultValue();
    Duration trialTimeout;
    Duration callTimeout;
    Duration slowCallDurationThreshold;
    String instanceId = InstanceIds.PROCESS;
    Predicate<? super Throwable> recordFailure = RECORD_FAILURE.defaultValue();
    Predicate<Object> recordResult;
    Fallback fallback;
    StoreErrorPolicy storeErrorPolicy = STORE_ERROR_POLICY.defaultValue();
    Duration openCacheRefresh = OPEN_CACHE_REFRESH.defaultValue();
    Duration localCacheStaleTolerance;
    Integer maxOperations;
    Duration recordBatching;
    Clock clock = CLOCK.defaultValue();
    Ticker ticker = TICKER.defaultValue();
    Store store;
    boolean closeStore = true;
    Consumer<TransitionEvent> onStateChange;
    BiConsumer<String, Throwable> onStoreError;
    BiConsumer<String, RuntimeException> onCallRejected;
    BiConsumer<String, Throwable> onIgnoredError;
    Consumer<Outlier> onOutlier;
    OutlierPolicy outlierPolicy = OUTLIER_POLICY.defaultValue();
    Consumer<TransitionEvent> onFleetStateChange;
    boolean writableStackTraces;
    boolean followFeed;
    Long seed;

    CircuitBreakerBuilder() {
    }


    /** How a closed breaker decides to open; default {@link Strategy#CONSECUTIVE}. */
    public CircuitBreakerBuilder strategy(Strategy v) { policy.strategy(v); return this; }

    /**
     * Failures that open the breaker (>= 1): consecutive ones, or the leaky count (a success subtracts one,
     * {@link Strategy#LEAKY}); default 5.
     */
    public CircuitBreakerBuilder failureThreshold(int v) { policy.failureThreshold(v); return this; }

    /** Error rate in (0, 1] that opens the breaker (error-rate strategy); default 0.5. */
    public CircuitBreakerBuilder errorRateThreshold(double v) { policy.errorRateThreshold(v); return this; }

    /** Outcomes needed before the error rate may open the breaker (>= 1); default 10. */
    public CircuitBreakerBuilder minimumCalls(int v) { policy.minimumCalls(v); return this; }

    /** EWMA decay in (0, 1), the weight of the previous rate; default 0.9. */
    public CircuitBreakerBuilder errorRateDecay(double v) { policy.errorRateDecay(v); return this; }

    /** Base reset window (at least 1 ms); default 60 s. */
    public CircuitBreakerBuilder resetTimeout(Duration v) {
        policy.resetTimeout(bounded(Policy.RESET_TIMEOUT, v));
        return this;
    }

    /** Window multiplier per failed trial (finite, >= 1); default 2. */
    public CircuitBreakerBuilder backoffMultiplier(double v) { policy.backoffMultiplier(v); return this; }

    /** Cap on the reset window (>= resetTimeout); default 8 x resetTimeout. */
    public CircuitBreakerBuilder maxResetTimeout(Duration v) {
        policy.maxResetTimeout(bounded(Policy.MAX_RESET_TIMEOUT, v));
        return this;
    }

    /** Relative jitter of the reset window in [0, 1), drawn per instance; default 0.1. */
    public CircuitBreakerBuilder jitter(double v) { policy.jitter(v); return this; }

    /** Successful trials needed to close (>= 1); default 1. */
    public CircuitBreakerBuilder successThreshold(int v) { policy.successThreshold(v); return this; }

    /**
     * Selects the {@link Strategy#SLIDING_WINDOW} strategy: Resilience4j's trip rule over a window the fleet
     * shares, of the last {@code size} outcomes ({@link SlidingWindowType#COUNT_BASED}) or the outcomes of the
     * last {@code size} seconds ({@link SlidingWindowType#TIME_BASED}). See {@link Policy#SLIDING_WINDOW_SIZE}.
     */
    public CircuitBreakerBuilder slidingWindow(SlidingWindowType type, int size) {
        policy.slidingWindow(type, size);
        return this;
    }

    /** Failure rate in percent, in (0, 100], that opens a sliding-window breaker; default 50. */
    public CircuitBreakerBuilder failureRateThreshold(double v) { policy.failureRateThreshold(v); return this; }

    /** Outcomes a sliding window must hold before a rate may open the breaker (>= 1); default 100. */
    public CircuitBreakerBuilder minimumNumberOfCalls(int v) { policy.minimumNumberOfCalls(v); return this; }

    /** Slow-call rate in percent, in (0, 100], that opens a sliding-window breaker; default 100. */
    public CircuitBreakerBuilder slowCallRateThreshold(double v) { policy.slowCallRateThreshold(v); return this; }

    /**
     * A call that runs at least this long is slow (sliding-window strategy): it counts toward the slow-call rate
     * while still running, found by the breaker's sweep of the calls in flight (every eighth of the threshold,
     * 1 ms to 250 ms), and its end then only says whether it failed; a call that ends before a sweep finds it is
     * judged by its own duration. Default unset: no call is slow.
     */
    public CircuitBreakerBuilder slowCallDurationThreshold(Duration v) {
        slowCallDurationThreshold = SLOW_CALL_DURATION_THRESHOLD.check(v);
        return this;
    }

    /**
     * The mode when no operator stored one ({@link BreakerMode#NORMAL}, {@link BreakerMode#METRICS_ONLY} or
     * {@link BreakerMode#DISABLED}); default normal. An operator's {@code forceMode} overrides it fleet-wide.
     */
    public CircuitBreakerBuilder mode(BreakerMode v) { policy.mode(v); return this; }

    /**
     * The fleet opens only when failures were recorded by at least {@code n} distinct instances in the strategy's
     * scope (consecutive: since the count last cleared; sliding windows: the window); 0 or 1 (the default): no
     * quorum. Needs a store with the {@link dev.redeye.spi.QuorumState} capability and the consecutive or
     * sliding-window strategy; at most {@value dev.redeye.api.BreakerState#MAX_CONTRIBUTORS}. Each instance is
     * told apart by its {@link #instanceId(String)}.
     */
    public CircuitBreakerBuilder quorum(int n) { policy.quorum(n); return this; }

    /**
     * The fleet opens only when at least this fraction, in (0, 1], of the instances seen recording in the scope
     * recorded failures (at least one); 0 (the default): none. The same needs as {@link #quorum(int)}, and not
     * with it.
     */
    public CircuitBreakerBuilder quorumFraction(double f) { policy.quorumFraction(f); return this; }

    /**
     * This instance's id in the fleet, for a quorum: 1 to 64 characters of {@code A-Z a-z 0-9 . _ : @ # / -}.
     * Default: one id per process, derived once from the JVM's name ({@code pid@host}) and a random suffix.
     */
    public CircuitBreakerBuilder instanceId(String v) {
        try {
            instanceId = dev.redeye.api.Contribution.requireValidInstance(v);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException("instanceId", e.getMessage());
        }
        return this;
    }

    /**
     * What this instance does with its own calls of an operation while it is an outlier under a quorum (its own
     * failures reach the threshold, the fleet stays closed): {@link OutlierPolicy#REJECT} (the default) rejects
     * them for one reset window, {@link OutlierPolicy#ALLOW} admits them and only reports.
     */
    public CircuitBreakerBuilder outlierPolicy(OutlierPolicy v) {
        outlierPolicy = OUTLIER_POLICY.check(v);
        return this;
    }

    /**
     * Called once per local trip when this instance becomes an outlier for an operation under a quorum
     * ({@link Outlier}: its own failures and calls, the failing instances, the quorum). On the thread of the write
     * that showed it: keep it quick. An exception it throws is logged, never thrown into the call.
     */
    public CircuitBreakerBuilder onOutlier(Consumer<Outlier> v) {
        onOutlier = nonNull("onOutlier", v);
        return this;
    }

    /** Concurrent trials while half-open, fleet-wide when the store has TrialClaims (>= 1); default 1. */
    public CircuitBreakerBuilder halfOpenPermits(int v) {
        halfOpenPermits = HALF_OPEN_PERMITS.check(v);
        return this;
    }

    /** Lifetime of a trial claim; default min(callTimeout or 10 s, resetTimeout). */
    public CircuitBreakerBuilder trialTimeout(Duration v) {
        trialTimeout = TRIAL_TIMEOUT.check(v);
        return this;
    }

    /**
     * A failure later than this after the previous one restarts the count at 1 (consecutive and leaky
     * strategies); default unset.
     */
    public CircuitBreakerBuilder maxGapBetweenFailures(Duration v) {
        policy.maxGapBetweenFailures(bounded(Policy.MAX_GAP_BETWEEN_FAILURES, v));
        return this;
    }

    /**
     * Bounds each call: a sync call's thread is interrupted at the deadline (real time) and the call counts
     * as a timeout failure (a call that ignores interrupts runs on, and still counts as one; a call that
     * returned but took longer by the ticker counts too, its result still returned); an async
     * call's future completes with {@link TimeoutException} and its stage is cancelled. Also caps the
     * default {@link #trialTimeout(Duration)}. Default unset: calls are not bounded.
     */
    public CircuitBreakerBuilder callTimeout(Duration v) { callTimeout = CALL_TIMEOUT.check(v); return this; }

    /**
     * Whether a thrown exception counts as a failure; default every exception and error does. Never asked
     * about interrupts and cancellation, which are not recorded at all (see "Outcomes" in the {@linkplain
     * dev.redeye package documentation}), nor about
     * a call the engine timed out, which always fails.
     */
    public CircuitBreakerBuilder recordFailure(Predicate<? super Throwable> v) {
        recordFailure = RECORD_FAILURE.check(v);
        return this;
    }

    /** A returned result counts as a failure when this answers true (status-style failures). */
    public CircuitBreakerBuilder recordResult(Predicate<Object> v) {
        recordResult = nonNull("recordResult", v);
        return this;
    }

    /** Answers rejected calls (never calls that ran and failed); default none: the rejection is thrown. */
    public CircuitBreakerBuilder fallback(Fallback v) { fallback = nonNull("fallback", v); return this; }

    /** What the gate does when the store fails; default {@link StoreErrorPolicy#ALLOW}. */
    public CircuitBreakerBuilder storeErrorPolicy(StoreErrorPolicy v) {
        storeErrorPolicy = STORE_ERROR_POLICY.check(v);
        return this;
    }

    /** How often a cached open state is re-verified with one read; default 2 s. */
    public CircuitBreakerBuilder openCacheRefresh(Duration v) {
        openCacheRefresh = OPEN_CACHE_REFRESH.check(v);
        return this;
    }

    /**
     * Turns on the local cache (distributed mode, needs a store with a transition feed): a closed state
     * is served from memory for up to {@code staleTolerance} (and never longer than 5 s) with zero store
     * reads, kept current by the feed. The worst-case fail-open window is {@code staleTolerance}. An
     * entry that went stale is re-read by one caller per operation; the callers that arrive while that
     * read is in flight wait for its result (never served the stale entry), at most {@code staleTolerance}
     * (and 5 s) after the read began. If that read fails or takes longer, they are admitted per the
     * {@linkplain #storeErrorPolicy store error policy} as for a failed read, reported once, and the next
     * caller reads again; an interrupted waiter reads on its own.
     */
    public CircuitBreakerBuilder localCache(Duration staleTolerance) {
        localCacheStaleTolerance = LOCAL_CACHE.check(staleTolerance);
        return this;
    }

    /**
     * Write batching (distributed mode): this instance folds its ordinary outcomes of an operation for at most
     * {@code maxDelay} into one atomic write ({@link dev.redeye.spi.AtomicOperation#outcomes}), which leaves the
     * stored state the outcomes one by one would leave. A batch is written when {@code maxDelay} has passed since
     * its first outcome, when it holds {@value dev.redeye.spi.AtomicOperation#MAX_BATCH} outcomes, at once when a
     * failure would open the breaker by what this instance knows (the state its call was admitted under plus the
     * batch), before this instance reads or changes the operation through the manual API ({@code state},
     * {@code status}, {@code check}, {@code storedState}, {@code forceOpen} and the others) or writes a trial's
     * outcome, when the operation is evicted, and on {@link CircuitBreaker#close()}. The store's writes per
     * operation and instance fall to at most one per {@code maxDelay} (plus one per full batch); an opening by
     * other instances' failures is seen up to {@code maxDelay} later than without batching. If the process dies,
     * up to {@code maxDelay} of its outcomes are lost. Trials, slow calls counted while they run and operators'
     * changes are never batched. A batch the store fails to write is handled as one failed outcome write (the
     * {@linkplain #storeErrorPolicy store error policy}: reported, never retried, never thrown into a call).
     * Needs a store with the {@link dev.redeye.spi.OutcomeBatches} capability; one sweeping daemon thread per
     * breaker, nothing allocated per call. At least 1 ms, at most 10 s; default unset (every outcome is written
     * at once).
     */
    public CircuitBreakerBuilder recordBatching(Duration maxDelay) {
        recordBatching = RECORD_BATCHING.check(maxDelay);
        return this;
    }

    /** {@link #localCache(Duration)} with a stale tolerance of 100 ms. */
    public CircuitBreakerBuilder localCache() { return localCache(LOCAL_CACHE.defaultValue()); }

    /**
     * The most distinct operations this breaker keeps (>= 1): past it, the least recently used are evicted
     * (approximately, in batches down to 90%; never one with a trial running), with one warning the first
     * time. An evicted operation loses this instance's metrics and cached views; in local mode its stored
     * state goes too unless it is open. Default unset: no limit.
     */
    public CircuitBreakerBuilder maxOperations(int v) {
        maxOperations = MAX_OPERATIONS.check(v);
        return this;
    }

    /**
     * The wall clock of what is stored and read by other instances: {@code openedAt},
     * {@code lastFailureAt} and the {@code now} every store operation is given, from {@code clock.millis()};
     * default {@link Clock#systemUTC()}. Local durations run on the {@link #ticker(Ticker) ticker} instead
     * (see "Time" in the {@linkplain dev.redeye package documentation}); a test or simulation on a virtual clock
     * usually sets both.
     */
    public CircuitBreakerBuilder clock(Clock v) { clock = CLOCK.check(v); return this; }

    /**
     * The monotonic source of this instance's local durations (cache age, open-view refresh, the hold after
     * a lost claim or an unwritten trial failure, permit leases, the {@code callTimeout} check, observer
     * timings, the cap on trial eligibility): see {@link Ticker} and "Time" in the {@linkplain dev.redeye package
     * documentation}.
     * Default {@link Ticker#systemTicker()} ({@link System#nanoTime()}); tests and simulations pass a
     * virtual one. A wall clock that steps (NTP, a resumed virtual machine) never moves a local deadline.
     */
    public CircuitBreakerBuilder ticker(Ticker v) { ticker = TICKER.check(v); return this; }

    /** The shared store (distributed mode); default none (local mode). */
    public CircuitBreakerBuilder store(Store v) { store = nonNull("store", v); return this; }

    /** Whether {@link CircuitBreaker#close()} closes the store; default true. */
    public CircuitBreakerBuilder closeStore(boolean v) { closeStore = v; return this; }

    /**
     * Called on the instance whose own write caused a transition. To hear every instance's transitions,
     * use {@link #onFleetStateChange(Consumer)}.
     */
    public CircuitBreakerBuilder onStateChange(Consumer<TransitionEvent> v) {
        onStateChange = nonNull("onStateChange", v);
        return this;
    }

    /**
     * Called with the operation and the rejection ({@link CircuitOpenException} or
     * {@link StoreUnavailableException}) for every call this instance rejected, before any fallback answers
     * it; {@link CircuitBreaker#tryAcquire(String) permits} refused included. On the caller's thread: keep it
     * quick. An exception it throws is logged, never thrown into the call.
     */
    public CircuitBreakerBuilder onCallRejected(BiConsumer<String, RuntimeException> v) {
        onCallRejected = nonNull("onCallRejected", v);
        return this;
    }

    /**
     * Called with the operation and the exception when a call ended with an exception the breaker did not
     * count as a failure: one {@link #recordFailure(Predicate)} declined, an interrupt or a cancellation
     * (an async call's future cancelled by its caller, or a permit released, throws nothing and is not
     * reported here). On the thread that saw the call end. An exception it throws is logged, never thrown
     * into the call.
     */
    public CircuitBreakerBuilder onIgnoredError(BiConsumer<String, Throwable> v) {
        onIgnoredError = nonNull("onIgnoredError", v);
        return this;
    }

    /**
     * Called with every transition the store publishes on its {@link dev.redeye.spi.TransitionFeed}: any
     * instance's (this one's included) and any operation's, so an instance hears that another one opened
     * the breaker without reaching into {@code store.capability(TransitionFeed.class)}. The breaker
     * subscribes at build (in local mode, to its in-process store's feed), and retries a subscription
     * that fails with backoff until it succeeds or the breaker is closed; a store without a feed logs one
     * warning and the listener is never called. Delivery is the store's: events may repeat or arrive out
     * of order (compare {@link TransitionEvent#version()}), and on the store's feed thread. An exception it
     * throws is logged.
     */
    public CircuitBreakerBuilder onFleetStateChange(Consumer<TransitionEvent> v) {
        onFleetStateChange = nonNull("onFleetStateChange", v);
        return this;
    }

    /** Called with the operation and the error whenever a store operation fails. */
    public CircuitBreakerBuilder onStoreError(BiConsumer<String, Throwable> v) {
        onStoreError = nonNull("onStoreError", v);
        return this;
    }

    /** Whether rejections carry a stack trace; default false (cheap rejections). */
    public CircuitBreakerBuilder writableStackTraces(boolean v) { writableStackTraces = v; return this; }

    /**
     * Whether to subscribe to the store's {@link dev.redeye.spi.TransitionFeed} at build even without the
     * local cache, a fleet listener or an observer (any of which subscribes anyway), so that this instance
     * learns other instances' transitions as they happen: a breaker another instance reset stops rejecting
     * here at once instead of at the next {@linkplain #openCacheRefresh(Duration) open-cache refresh}, and one
     * it opened rejects here from its next call on. Costs the store's subscription (one feed connection or
     * poller per store client, shared by the breakers over it) and nothing on the call path. Distributed mode
     * only; over a store without a feed it logs one warning and changes nothing. Default false.
     */
    public CircuitBreakerBuilder followFeed(boolean v) { followFeed = v; return this; }

    /** Fixes the per-instance jitter seed (tests only). */
    CircuitBreakerBuilder jitterSeed(long v) { seed = v; return this; }

    /**
     * Checks every rule between options and builds the breaker. In distributed mode, logs one warning per
     * missing store capability and subscribes to the feed if the local cache was requested.
     *
     * @throws InvalidOptionException naming the option, if {@code maxResetTimeout} is below {@code resetTimeout}
     */
    public CircuitBreaker build() {
        return new CircuitBreaker(new CircuitBreakerConfig(this),
                seed != null ? seed : ThreadLocalRandom.current().nextLong());
    }

    /** {@code value} checked against {@code option} and against the engine's {@link #MAX_DURATION}. */
    private static Duration bounded(Option<Duration> option, Duration value) {
        option.check(value);
        if (value.compareTo(MAX_DURATION) > 0) {
            throw new InvalidOptionException(option.name(), "must be at most " + MAX_DURATION.toDays()
                    + " days, was " + value);
        }
        return value;
    }

    /** An option without a default whose only rule is a value. */
    private static <T> T nonNull(String option, T value) {
        if (value == null) {
            throw new InvalidOptionException(option, "must not be null");
        }
        return value;
    }
}

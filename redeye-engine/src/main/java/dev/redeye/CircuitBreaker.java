package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.Transitions;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A circuit breaker whose state lives in a {@link Store}: in process memory by default (local mode), or in a
 * shared store (distributed mode), so that one instance seeing a dependency fail trips the breaker for the
 * whole fleet. One breaker guards any number of operations, each named by a string and with its own state.
 *
 * <pre>{@code
 * CircuitBreaker breaker = CircuitBreaker.builder()
 *     .failureThreshold(5)
 *     .resetTimeout(Duration.ofSeconds(60))
 *     .store(Stores.open("redis://127.0.0.1:6379?prefix=myapp:"))   // omit for local mode
 *     .build();
 * Receipt r = breaker.execute("payment-gateway", () -> gateway.charge(order));
 * }</pre>
 *
 * <h2>Cost</h2>
 * <ul>
 * <li>Local mode, consecutive strategy, closed and healthy: one map lookup and one volatile read before the
 * call, two counter increments after it; no lock, no allocation, no clock read (unless a
 * {@code callTimeout} is set).</li>
 * <li>Distributed mode, closed: one store read per call; the consecutive strategy writes only when the read
 * showed failures to clear or the call failed; the error-rate strategy writes every outcome. With the opt-in
 * {@linkplain Builder#localCache(Duration) local cache}, zero reads while the cached closed state is trusted
 * and younger than its stale tolerance.</li>
 * <li>Open: rejections come from a per-operation cache with zero store reads, re-verified with one read at
 * most once per {@code openCacheRefresh} and always re-read at this instance's own trial-eligibility instant
 * (the cache can make a rejection late, never an allow early).</li>
 * <li>Half-open: one trial claim per attempt; the winners run the call as trials, the others are rejected.</li>
 * </ul>
 *
 * <h2>Outcomes</h2>
 * A call's own exception is always rethrown unchanged. Whether it counts as a failure is decided by
 * {@link Builder#recordFailure(Predicate)} (default: every exception and error counts); an exception that does
 * not count is recorded as a success. A returned result counts as a failure when
 * {@link Builder#recordResult(Predicate)} says so; it is still returned. Writes after a call are best-effort:
 * a store error there is logged, counted in {@link Metrics#storeErrors()}, reported to {@code onStoreError}
 * and never thrown.
 *
 * <h2>Time</h2>
 * Every rule reads the configured {@link Clock} ({@code clock.millis()}) and nothing else; only trial-claim
 * expiry runs on the store's own (real) clock, and the async call timeout on real time.
 *
 * <p>Thread-safe. No lock is held while a user's call runs. {@link #close()} ends the feed subscription and
 * closes the store (unless {@link Builder#closeStore(boolean) closeStore(false)}); a closed breaker throws
 * {@link IllegalStateException}.
 */
public final class CircuitBreaker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    /** Local-cache entries older than this are re-read even under a longer stale tolerance. */
    static final long CACHE_POLL_MILLIS = 5_000;
    private static final long STORE_ERROR_LOG_INTERVAL_MILLIS = 10_000;
    private static final int LONG_OPERATION_NAME = 100;
    /** The gate's answer when the store failed under ALLOW: run the call, nothing is known about the state. */
    private static final Object UNKNOWN = new Object();

    private final CircuitBreakerConfig config;
    private final Policy policy;
    private final Clock clock;
    private final boolean consecutive;
    private final long seed;
    private final long refreshMillis;
    private final long callTimeoutMillis;
    private final long cacheMaxAgeMillis;
    private final Duration trialTimeout;
    // The config's optional parts, unwrapped once: Optional getters would allocate on the hot path.
    private final Predicate<? super Throwable> failurePredicate;
    private final Predicate<Object> resultPredicate;
    private final Fallback defaultFallback;
    private final Consumer<TransitionEvent> stateListener;
    private final BiConsumer<String, Throwable> storeErrorListener;
    private final InMemoryStore local;
    private final Store store;
    private final StoreAccess access;
    private final boolean closeStore;
    private final ConcurrentHashMap<String, OperationState> operations = new ConcurrentHashMap<>();
    private final AtomicLong gapEpoch = new AtomicLong();
    private final AtomicLong lastStoreErrorLog = new AtomicLong(Long.MIN_VALUE);
    private final AtomicBoolean longNameWarned = new AtomicBoolean();
    private final AtomicBoolean maxOperationsWarned = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final TransitionFeed.Subscription subscription;

    private CircuitBreaker(CircuitBreakerConfig config, long seed) {
        this.config = config;
        this.policy = config.policy();
        this.clock = config.clock();
        this.consecutive = policy.strategy() == Strategy.CONSECUTIVE;
        this.seed = seed;
        this.refreshMillis = config.openCacheRefresh().toMillis();
        this.callTimeoutMillis = config.callTimeout().map(Duration::toMillis).orElse(0L);
        this.trialTimeout = config.trialTimeout();
        this.failurePredicate = config.recordFailure();
        this.resultPredicate = config.recordResult().orElse(null);
        this.defaultFallback = config.fallback().orElse(null);
        this.stateListener = config.onStateChange().orElse(null);
        this.storeErrorListener = config.onStoreError().orElse(null);
        this.cacheMaxAgeMillis = config.localCacheStaleTolerance()
                .map(d -> Math.min(d.toMillis(), CACHE_POLL_MILLIS)).orElse(0L);
        Store configured = config.store().orElse(null);
        boolean wantCache = config.localCacheStaleTolerance().isPresent();
        if (configured == null) {
            this.local = new InMemoryStore();
            this.store = local;
            this.closeStore = true;
            this.access = new StoreAccess(local, InMemoryStore.class.getName(), LOG, false);
            this.subscription = null;
        } else {
            this.local = null;
            this.store = config.storeErrorPolicy() == StoreErrorPolicy.LOCAL
                    ? new DegradingStore(configured, this::degradedStoreError)
                    : configured;
            this.closeStore = config.closeStore();
            this.access = new StoreAccess(store, configured.getClass().getName(), LOG, wantCache);
            this.subscription = wantCache && access.feed != null ? subscribe(access.feed) : null;
        }
    }

    private TransitionFeed.Subscription subscribe(TransitionFeed feed) {
        try {
            return feed.subscribe(this::onFeedEvent, this::onFeedGap);
        } catch (StoreException e) {
            LOG.warn("could not subscribe to the transition feed of store {}: the local cache is unavailable ({})",
                    config.store().map(st -> st.getClass().getName()).orElse("?"), e.getMessage());
            return null;
        }
    }

    /** A builder with the reference defaults (local mode unless a store is set). */
    public static Builder builder() {
        return new Builder();
    }

    /** A local-mode breaker with the reference defaults; cheap, no threads. */
    public static CircuitBreaker ofDefaults() {
        return builder().build();
    }

    // ---------------------------------------------------------------------------------------------- execute

    /**
     * Runs {@code call} if the breaker for {@code operation} allows it, records the outcome, and returns the
     * call's result or rethrows its exception unchanged.
     *
     * <p>With a {@code callTimeout}, the call still runs to completion on the caller's thread; if it took
     * longer than the timeout (by the configured clock) it counts as a failure, but its result is still
     * returned.
     *
     * @param operation the operation name (non-empty); each name has its own breaker state
     * @param call      the call to guard
     * @return the call's result, or the configured fallback's result for a rejected call
     * @throws X                          the call's own exception, unchanged
     * @throws CircuitOpenException       if the breaker is open (or half-open with every trial permit taken)
     *                                    and no fallback is configured
     * @throws StoreUnavailableException  under {@link StoreErrorPolicy#REJECT} when the store could not be
     *                                    read, and no fallback is configured
     * @throws NullPointerException       if {@code operation} or {@code call} is null
     * @throws IllegalArgumentException   if {@code operation} is empty
     * @throws IllegalStateException      if the breaker is closed
     */
    public <T, X extends Exception> T execute(String operation, CheckedSupplier<T, X> call) throws X {
        return run(operation, call, null);
    }

    /**
     * Like {@link #execute(String, CheckedSupplier)}, but a rejected call ({@link CircuitOpenException} or
     * {@link StoreUnavailableException}) answers with {@code fallback}, which takes precedence over the
     * breaker-wide fallback. The fallback is never used for a call that ran and failed.
     *
     * @throws NullPointerException if {@code fallback} is null
     */
    public <T, X extends Exception> T execute(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(fallback, "fallback");
        return run(operation, call, fallback);
    }

    private <T, X extends Exception> T run(String operation, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Objects.requireNonNull(call, "call");
        OperationState e = entry(operation);
        Object permit;
        try {
            permit = gate(e);
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            e.rejections.increment();
            return fallback(operation, rejection, fallback);
        }
        e.calls.increment();
        long start = callTimeoutMillis > 0 ? clock.millis() : 0L;
        T result;
        try {
            result = call.get();
        } catch (Throwable t) {
            afterThrow(e, permit, t);
            throw t;
        }
        afterReturn(e, permit, result, start, true);
        return result;
    }

    /**
     * The async twin of {@link #execute(String, CheckedSupplier)}: gates the call, runs {@code call} to start
     * it, and records the outcome when its stage completes. The returned future completes after the outcome
     * is recorded, with the call's own result or exception.
     *
     * <p>A rejection completes the future exceptionally with {@link CircuitOpenException} or
     * {@link StoreUnavailableException} (or with the breaker-wide fallback's result). With a
     * {@code callTimeout}, the future completes exceptionally with {@link TimeoutException} once that much
     * real time has passed, which counts as a failure; the call's later outcome is ignored.
     *
     * @throws NullPointerException     if {@code operation} or {@code call} is null
     * @throws IllegalArgumentException if {@code operation} is empty
     * @throws IllegalStateException    if the breaker is closed
     */
    public <T> CompletableFuture<T> executeAsync(String operation, Supplier<? extends CompletionStage<T>> call) {
        Objects.requireNonNull(call, "call");
        OperationState e = entry(operation);
        Object permit;
        try {
            permit = gate(e);
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            e.rejections.increment();
            try {
                return CompletableFuture.completedFuture(fallback(operation, rejection, null));
            } catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        e.calls.increment();
        CompletionStage<T> stage;
        try {
            stage = Objects.requireNonNull(call.get(), "call returned a null CompletionStage");
        } catch (Throwable t) {
            afterThrow(e, permit, t);
            return CompletableFuture.failedFuture(t);
        }
        CompletableFuture<T> raw = new CompletableFuture<>();
        stage.whenComplete((v, t) -> {
            if (t != null) {
                raw.completeExceptionally(t);
            } else {
                raw.complete(v);
            }
        });
        if (callTimeoutMillis > 0) {
            raw.orTimeout(callTimeoutMillis, TimeUnit.MILLISECONDS);
        }
        CompletableFuture<T> out = new CompletableFuture<>();
        raw.whenComplete((v, t) -> {
            try {
                if (t != null) {
                    Throwable cause = unwrap(t);
                    afterThrow(e, permit, cause);
                } else {
                    afterReturn(e, permit, v, 0L, false);
                }
            } finally {
                if (t != null) {
                    out.completeExceptionally(unwrap(t));
                } else {
                    out.complete(v);
                }
            }
        });
        return out;
    }

    private static Throwable unwrap(Throwable t) {
        return (t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null
                ? t.getCause()
                : t;
    }

    @SuppressWarnings("unchecked")
    private <T> T fallback(String operation, RuntimeException rejection,
            Function<? super RuntimeException, ? extends T> perCall) {
        if (perCall != null) {
            return perCall.apply(rejection);
        }
        Fallback f = defaultFallback;
        if (f == null) {
            throw rejection;
        }
        try {
            return (T) f.apply(operation, rejection);
        } catch (RuntimeException ex) {
            throw ex;
        } catch (Exception ex) {
            throw new UndeclaredThrowableException(ex, "fallback of '" + operation + "' threw a checked exception");
        }
    }

    // ------------------------------------------------------------------------------------------------ gate

    /**
     * Decides whether a call may run. Returns the state seen (a normal call), a {@link Trial} (a half-open
     * trial), or {@link #UNKNOWN} (the store failed under ALLOW); throws the rejection otherwise.
     */
    private Object gate(OperationState e) {
        if (local != null) {
            BreakerState s = local.peek(e.name);
            if (s == null) {
                return BreakerState.INITIAL;
            }
            if (!s.open()) {
                return s;
            }
            return openGate(e, s, clock.millis());
        }
        long now = clock.millis();
        if (cacheMaxAgeMillis > 0 && subscription != null) {
            OperationState.CacheEntry c = e.cached;
            if (c != null && !c.state.open() && c.trusted(gapEpoch.get()) && now - c.fetchedAt < cacheMaxAgeMillis) {
                return c.state;
            }
        }
        OperationState.OpenView v = e.openView.get();
        if (v != null && now < v.eligibleAt) {
            // Only one caller re-verifies an expired view; the others keep rejecting from it meanwhile.
            if (now < v.refreshAt || !e.openView.compareAndSet(v, v.refreshingUntil(now + refreshMillis))) {
                throw rejection(e.name, v.status, v.eligibleAt == Long.MAX_VALUE ? refreshMillis : v.eligibleAt - now);
            }
        }
        BreakerState s;
        try {
            s = access.get(e.name).orElse(BreakerState.INITIAL);
        } catch (StoreException ex) {
            storeError(e, ex);
            if (v != null && now < v.eligibleAt) {
                // Re-verifying a known open state failed: keep rejecting from it. Letting the call through
                // would be an allow before this instance's trial eligibility, which the cache never grants.
                throw rejection(e.name, v.status, v.eligibleAt == Long.MAX_VALUE ? refreshMillis : v.eligibleAt - now);
            }
            if (config.storeErrorPolicy() == StoreErrorPolicy.REJECT) {
                throw new StoreUnavailableException(e.name, ex);
            }
            return UNKNOWN;
        }
        noteState(e, s, now, true);
        if (!s.open()) {
            return s;
        }
        return openGate(e, s, now);
    }

    /** The gate for a state read as open: reject, or claim a trial once this instance's window has elapsed. */
    private Object openGate(OperationState e, BreakerState s, long now) {
        if (s.forced()) {
            throw rejection(e.name, BreakerStatus.FORCED_OPEN, refreshMillis);
        }
        long eligibleAt = eligibleAt(e.name, s);
        if (now < eligibleAt) {
            throw rejection(e.name, BreakerStatus.OPEN, eligibleAt - now);
        }
        String token;
        try {
            token = access.claim(e, config.halfOpenPermits(), trialTimeout);
        } catch (StoreException ex) {
            // A claim that cannot be made must not wedge the breaker open: the caller goes through as a trial.
            storeError(e, ex);
            e.trials.increment();
            return new Trial(null, s.version());
        }
        if (token == null) {
            throw rejection(e.name, BreakerStatus.HALF_OPEN, trialTimeout.toMillis());
        }
        // Re-verify after winning the claim: between this caller's read and its claim, another instance's
        // trial may have finished and released its permit (a reopen, or a close). A trial run on that stale
        // read would follow the finished one back to back and add a backoff step for nothing.
        BreakerState current = reread(e, s);
        if (current.version() != s.version()) {
            release(e, token);
            long at = clock.millis();
            noteState(e, current, at, true);
            if (!current.open()) {
                return current; // closed meanwhile: a normal call
            }
            if (current.forced()) {
                throw rejection(e.name, BreakerStatus.FORCED_OPEN, refreshMillis);
            }
            throw rejection(e.name, BreakerStatus.OPEN, eligibleAt(e.name, current) - at);
        }
        e.trials.increment();
        return new Trial(token, current.version());
    }

    /** The state as it is now, for the post-claim check; the earlier read if the store cannot answer. */
    private BreakerState reread(OperationState e, BreakerState earlier) {
        try {
            if (local != null) {
                BreakerState s = local.peek(e.name);
                return s == null ? BreakerState.INITIAL : s;
            }
            return access.get(e.name).orElse(BreakerState.INITIAL);
        } catch (StoreException ex) {
            storeError(e, ex);
            return earlier;
        }
    }

    private void release(OperationState e, String token) {
        try {
            access.release(e, token);
        } catch (StoreException ex) {
            storeError(e, ex);
        } catch (RuntimeException ex) {
            LOG.warn("releasing a trial claim of '{}' failed", abbreviate(e.name), ex);
        }
    }

    private long eligibleAt(String operation, BreakerState s) {
        double jf = Transitions.jitterFactor(seed, operation, s.openedAt(), policy.jitter());
        return Transitions.trialEligibleAt(s, policy, jf);
    }

    private CircuitOpenException rejection(String operation, BreakerStatus status, long retryAfterMillis) {
        return new CircuitOpenException(operation, status, Duration.ofMillis(Math.max(0, retryAfterMillis)),
                config.writableStackTraces());
    }

    /**
     * A half-open trial: the claim token to release (null when the claim itself failed) and the version of
     * the open period it was admitted under, which fences its outcome.
     */
    private static final class Trial {
        final String token;
        final long version;

        Trial(String token, long version) {
            this.token = token;
            this.version = version;
        }
    }

    // -------------------------------------------------------------------------------------------- outcomes

    private void afterThrow(OperationState e, Object permit, Throwable t) {
        boolean failure;
        try {
            failure = (callTimeoutMillis > 0 && t instanceof TimeoutException) || failurePredicate.test(t);
        } catch (RuntimeException ex) {
            LOG.warn("recordFailure predicate threw for operation '{}'; counting the call as a failure",
                    abbreviate(e.name), ex);
            failure = true;
        }
        outcome(e, permit, !failure);
    }

    private void afterReturn(OperationState e, Object permit, Object result, long start, boolean timed) {
        boolean failure = false;
        if (timed && callTimeoutMillis > 0 && clock.millis() - start > callTimeoutMillis) {
            failure = true;
        }
        Predicate<Object> p = resultPredicate;
        if (!failure && p != null) {
            try {
                failure = p.test(result);
            } catch (RuntimeException ex) {
                LOG.warn("recordResult predicate threw for operation '{}'; counting the call as a failure",
                        abbreviate(e.name), ex);
                failure = true;
            }
        }
        outcome(e, permit, !failure);
    }

    /** Counts and records one outcome; never throws (writes are best-effort). */
    private void outcome(OperationState e, Object permit, boolean success) {
        if (success) {
            e.successes.increment();
        } else {
            e.failures.increment();
        }
        if (permit instanceof Trial) {
            trialOutcome(e, (Trial) permit, success);
            return;
        }
        if (success && consecutive && (permit == UNKNOWN || ((BreakerState) permit).failures() == 0)) {
            return; // nothing to clear: the healthy path writes nothing and reads no clock
        }
        long now = clock.millis();
        try {
            afterWrite(e, access.record(e.name, success, policy, now), now);
        } catch (StoreException ex) {
            storeError(e, ex);
        } catch (RuntimeException ex) {
            LOG.warn("recording an outcome of '{}' failed", abbreviate(e.name), ex);
        }
    }

    private void trialOutcome(OperationState e, Trial trial, boolean success) {
        long now = clock.millis();
        try {
            afterWrite(e, access.trialOutcome(e.name, trial.version, success, policy, now), now);
        } catch (StoreException ex) {
            storeError(e, ex);
        } catch (RuntimeException ex) {
            LOG.warn("recording a trial outcome of '{}' failed", abbreviate(e.name), ex);
        } finally {
            if (trial.token != null) {
                release(e, trial.token);
            }
        }
    }

    /** After this instance's own write: update the caches and fire onStateChange for a transition. */
    private void afterWrite(OperationState e, StateChange ch, long now) {
        noteState(e, ch.state(), now, true);
        if (ch.isTransition()) {
            Consumer<TransitionEvent> listener = stateListener;
            if (listener != null) {
                try {
                    listener.accept(ch.toEvent(e.name, policy, now));
                } catch (RuntimeException ex) {
                    LOG.warn("onStateChange listener threw for operation '{}'", abbreviate(e.name), ex);
                }
            }
        }
    }

    /**
     * Records a state this instance learned (a read, its own write, or a feed event) in the open-state cache
     * and the local cache. A feed event never replaces a state with a higher version. A store read always
     * replaces the open-state view: it is authoritative, and versions legitimately restart after a delete or
     * an expired key; the price is that a slow read racing a newer feed event can hold this instance's view
     * back by at most one {@code openCacheRefresh}. In the local cache a read replaces an entry only if it is
     * not older, or if the entry was distrusted by a gap.
     */
    private void noteState(OperationState e, BreakerState s, long now, boolean fromStore) {
        if (local != null) {
            return; // local mode reads memory directly; no cache to keep
        }
        if (!s.open() && subscription == null && e.openView.get() == null) {
            return; // the common distributed healthy path: nothing cached, nothing to change, no lock
        }
        synchronized (e) {
            OperationState.OpenView v = e.openView.get();
            if (v == null || s.version() >= v.state.version() || fromStore) {
                if (s.open()) {
                    long eligible = s.forced() ? Long.MAX_VALUE : eligibleAt(e.name, s);
                    BreakerStatus status = s.forced() ? BreakerStatus.FORCED_OPEN : BreakerStatus.OPEN;
                    e.openView.set(new OperationState.OpenView(s, status, eligible, now + refreshMillis));
                } else {
                    e.openView.set(null);
                }
            }
            if (subscription != null) {
                long epoch = gapEpoch.get();
                OperationState.CacheEntry c = e.cached;
                if (c == null || s.version() >= c.state.version() || (fromStore && !c.trusted(epoch))) {
                    e.cached = new OperationState.CacheEntry(s, now, epoch);
                }
            }
        }
    }

    private void onFeedEvent(TransitionEvent ev) {
        OperationState e = operations.get(ev.operation());
        if (e == null) {
            return; // an operation this instance never used: nothing cached to update
        }
        if (!ev.state().hasKnownVersion()) {
            return;
        }
        noteState(e, ev.state(), clock.millis(), false);
    }

    private void onFeedGap() {
        // Every entry fetched before now is distrusted until re-read: one counter instead of a pass over all.
        gapEpoch.incrementAndGet();
    }

    private void storeError(OperationState e, StoreException ex) {
        e.storeErrors.increment();
        long now = clock.millis();
        long last = lastStoreErrorLog.get();
        if ((last == Long.MIN_VALUE || now - last >= STORE_ERROR_LOG_INTERVAL_MILLIS)
                && lastStoreErrorLog.compareAndSet(last, now)) {
            LOG.warn("store error for operation '{}' (logged at most every {} s): {}", abbreviate(e.name),
                    STORE_ERROR_LOG_INTERVAL_MILLIS / 1000, ex.toString());
        }
        BiConsumer<String, Throwable> listener = storeErrorListener;
        if (listener != null) {
            try {
                listener.accept(e.name, ex);
            } catch (RuntimeException le) {
                LOG.warn("onStoreError listener threw", le);
            }
        }
    }

    /** A store error the LOCAL policy absorbed; never throws (it runs inside a store call). */
    private void degradedStoreError(String operation, StoreException ex) {
        OperationState e = operations.get(operation);
        if (e != null) {
            storeError(e, ex);
        } else {
            LOG.debug("store error for an operation this breaker has not used: {}", ex.toString());
        }
    }

    // ------------------------------------------------------------------------------------------ operations

    private OperationState entry(String operation) {
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        OperationState e = operations.get(Objects.requireNonNull(operation, "operation"));
        return e != null ? e : register(operation);
    }

    private OperationState register(String operation) {
        if (operation.isEmpty()) {
            throw new IllegalArgumentException("operation must not be empty");
        }
        OperationState e = operations.computeIfAbsent(operation, OperationState::new);
        if (operation.length() > LONG_OPERATION_NAME && longNameWarned.compareAndSet(false, true)) {
            LOG.warn("operation name of {} characters (over {}): names are stored and logged, keep them short; "
                    + "'{}'", operation.length(), LONG_OPERATION_NAME, abbreviate(operation));
        }
        int max = config.maxOperations().orElse(0);
        if (max > 0 && operations.size() > max && maxOperationsWarned.compareAndSet(false, true)) {
            LOG.warn("more than {} distinct operations (maxOperations) on one breaker; every operation keeps its "
                    + "own state and metrics, so unbounded names (ids, URLs) leak memory and store keys", max);
        }
        return e;
    }

    private static String abbreviate(String s) {
        return s.length() <= LONG_OPERATION_NAME ? s : s.substring(0, LONG_OPERATION_NAME - 3) + "...";
    }

    // ---------------------------------------------------------------------------------------- manual API

    /**
     * The stored state of {@code operation}, read from the store (one read in distributed mode).
     *
     * @return the state, or {@link BreakerState#INITIAL} if none is stored
     * @throws dev.redeye.api.StoreException if the store fails (except under {@link StoreErrorPolicy#LOCAL})
     */
    public BreakerState state(String operation) {
        OperationState e = entry(operation);
        if (local != null) {
            BreakerState s = local.peek(e.name);
            return s == null ? BreakerState.INITIAL : s;
        }
        BreakerState s = access.get(e.name).orElse(BreakerState.INITIAL);
        noteState(e, s, clock.millis(), true);
        return s;
    }

    /**
     * The status of {@code operation} as this instance sees it now (with its own jitter): one store read.
     *
     * @throws dev.redeye.api.StoreException if the store fails (except under {@link StoreErrorPolicy#LOCAL})
     */
    public BreakerStatus status(String operation) {
        BreakerState s = state(operation);
        long now = clock.millis();
        double jf = Transitions.jitterFactor(seed, operation, s.openedAt(), policy.jitter());
        return Transitions.status(s, policy, now, jf);
    }

    /**
     * Whether a call to {@code operation} would be allowed now: read-only, one store read, claims nothing.
     * True when closed, and when half-open (a call would then try to claim a trial permit, which may all be
     * taken). If the store fails, answers as the store error policy would: false under REJECT, true otherwise.
     */
    public boolean check(String operation) {
        BreakerStatus s;
        try {
            s = status(operation);
        } catch (StoreException ex) {
            storeError(entry(operation), ex);
            return config.storeErrorPolicy() != StoreErrorPolicy.REJECT;
        }
        return s == BreakerStatus.CLOSED || s == BreakerStatus.HALF_OPEN;
    }

    /**
     * Holds {@code operation} open for every instance sharing the store: no trials until {@link #reset}.
     * A transition; fires {@code onStateChange}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceOpen(String operation) {
        force(operation, BreakerStatus.FORCED_OPEN);
    }

    /**
     * Opens {@code operation} with its reset window already elapsed, so the next call claims a trial.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void forceHalfOpen(String operation) {
        force(operation, BreakerStatus.HALF_OPEN);
    }

    /**
     * Closes {@code operation} and resets every counter (and drops live trial claims).
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void reset(String operation) {
        force(operation, BreakerStatus.CLOSED);
    }

    private void force(String operation, BreakerStatus target) {
        OperationState e = entry(operation);
        long now = clock.millis();
        StateChange ch = access.force(e.name, target, policy, now);
        if (target == BreakerStatus.CLOSED) {
            e.clearLocalClaims();
        }
        afterWrite(e, ch, now);
    }

    /**
     * Records a success for {@code operation} as if a call had succeeded, bypassing the gate and trial claims
     * (for outcomes observed elsewhere). Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordSuccess(String operation) {
        record(operation, true);
    }

    /**
     * Records a failure for {@code operation} as if a call had failed, bypassing the gate and trial claims.
     * Not counted in {@link #metrics(String)}.
     *
     * @throws dev.redeye.api.StoreException if the store fails
     */
    public void recordFailure(String operation) {
        record(operation, false);
    }

    private void record(String operation, boolean success) {
        OperationState e = entry(operation);
        long now = clock.millis();
        afterWrite(e, access.record(e.name, success, policy, now), now);
    }

    /** This instance's counters for {@code operation} ({@link Metrics#EMPTY} if never used). */
    public Metrics metrics(String operation) {
        OperationState e = operations.get(Objects.requireNonNull(operation, "operation"));
        return e == null ? Metrics.EMPTY : e.metrics();
    }

    /** This instance's counters for every operation it has seen, sorted by name; a snapshot. */
    public Map<String, Metrics> allMetrics() {
        Map<String, Metrics> out = new TreeMap<>();
        operations.forEach((k, v) -> out.put(k, v.metrics()));
        return Collections.unmodifiableMap(out);
    }

    /**
     * Whether the opt-in local cache is serving calls: it was requested, this breaker is in distributed mode,
     * the store offers a transition feed and the subscription succeeded, and the breaker is not closed.
     */
    public boolean isLocalCacheActive() {
        return subscription != null && !closed.get();
    }

    /** This breaker's configuration. */
    public CircuitBreakerConfig config() {
        return config;
    }

    /**
     * Ends the feed subscription and closes the store (the in-process one in local mode; the configured one
     * unless {@code closeStore(false)}). Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            if (subscription != null) {
                subscription.close();
            }
        } catch (RuntimeException ex) {
            LOG.warn("closing the feed subscription failed", ex);
        } finally {
            try {
                if (closeStore) {
                    store.close();
                } else if (store instanceof DegradingStore) {
                    ((DegradingStore) store).closeLocalOnly(); // the user keeps the real store; ours goes
                }
            } catch (RuntimeException ex) {
                LOG.warn("closing the store failed", ex);
            }
        }
    }

    @Override
    public String toString() {
        return "CircuitBreaker[" + (local != null ? "local" : store.getClass().getSimpleName()) + ", "
                + operations.size() + " operations]";
    }

    // ------------------------------------------------------------------------------------------- builder

    /**
     * Builds a {@link CircuitBreaker}. Setters only record values; {@link #build()} validates them all and
     * throws {@link IllegalArgumentException} naming the first bad option and its value. Not thread-safe;
     * reusable (each {@code build()} makes an independent breaker).
     */
    public static final class Builder {
        Strategy strategy = Strategy.CONSECUTIVE;
        int failureThreshold = 5;
        double errorRateThreshold = 0.5;
        int minimumCalls = 10;
        double errorRateDecay = 0.9;
        Duration resetTimeout = Duration.ofSeconds(60);
        double backoffMultiplier = 2.0;
        Duration maxResetTimeout;
        boolean maxResetTimeoutSet;
        double jitter = 0.1;
        int successThreshold = 1;
        int halfOpenPermits = 1;
        Duration trialTimeout;
        boolean trialTimeoutSet;
        Duration maxGapBetweenFailures;
        boolean maxGapSet;
        Duration callTimeout;
        boolean callTimeoutSet;
        Predicate<? super Throwable> recordFailure = t -> true;
        Predicate<Object> recordResult;
        boolean recordResultSet;
        Fallback fallback;
        boolean fallbackSet;
        StoreErrorPolicy storeErrorPolicy = StoreErrorPolicy.ALLOW;
        Duration openCacheRefresh = Duration.ofSeconds(2);
        Duration localCacheStaleTolerance;
        boolean localCacheSet;
        int maxOperations;
        boolean maxOperationsSet;
        Clock clock = Clock.systemUTC();
        Store store;
        boolean storeSet;
        boolean closeStore = true;
        Consumer<TransitionEvent> onStateChange;
        boolean onStateChangeSet;
        BiConsumer<String, Throwable> onStoreError;
        boolean onStoreErrorSet;
        boolean writableStackTraces;
        Long seed;

        Builder() {
        }

        /** How a closed breaker decides to open; default {@link Strategy#CONSECUTIVE}. */
        public Builder strategy(Strategy v) { strategy = v; return this; }

        /** Consecutive failures that open the breaker (>= 1); default 5. */
        public Builder failureThreshold(int v) { failureThreshold = v; return this; }

        /** Error rate in (0, 1] that opens the breaker (error-rate strategy); default 0.5. */
        public Builder errorRateThreshold(double v) { errorRateThreshold = v; return this; }

        /** Outcomes needed before the error rate may open the breaker (>= 1); default 10. */
        public Builder minimumCalls(int v) { minimumCalls = v; return this; }

        /** EWMA decay in (0, 1), the weight of the previous rate; default 0.9. */
        public Builder errorRateDecay(double v) { errorRateDecay = v; return this; }

        /** Base reset window (at least 1 ms); default 60 s. */
        public Builder resetTimeout(Duration v) { resetTimeout = v; return this; }

        /** Window multiplier per failed trial (finite, >= 1); default 2. */
        public Builder backoffMultiplier(double v) { backoffMultiplier = v; return this; }

        /** Cap on the reset window (>= resetTimeout); default 8 x resetTimeout. */
        public Builder maxResetTimeout(Duration v) { maxResetTimeout = v; maxResetTimeoutSet = true; return this; }

        /** Relative jitter of the reset window in [0, 1), drawn per instance; default 0.1. */
        public Builder jitter(double v) { jitter = v; return this; }

        /** Successful trials needed to close (>= 1); default 1. */
        public Builder successThreshold(int v) { successThreshold = v; return this; }

        /** Concurrent trials while half-open, fleet-wide when the store has TrialClaims (>= 1); default 1. */
        public Builder halfOpenPermits(int v) { halfOpenPermits = v; return this; }

        /** Lifetime of a trial claim; default min(callTimeout or 10 s, resetTimeout). */
        public Builder trialTimeout(Duration v) { trialTimeout = v; trialTimeoutSet = true; return this; }

        /** A failure later than this after the previous one restarts the consecutive count; default unset. */
        public Builder maxGapBetweenFailures(Duration v) { maxGapBetweenFailures = v; maxGapSet = true; return this; }

        /**
         * A call that takes longer counts as a failure: a sync call's result is still returned; an async call
         * completes with {@link TimeoutException}. Default unset.
         */
        public Builder callTimeout(Duration v) { callTimeout = v; callTimeoutSet = true; return this; }

        /** Whether a thrown exception counts as a failure; default every exception and error does. */
        public Builder recordFailure(Predicate<? super Throwable> v) { recordFailure = v; return this; }

        /** A returned result counts as a failure when this answers true (status-style failures). */
        public Builder recordResult(Predicate<Object> v) { recordResult = v; recordResultSet = true; return this; }

        /** Answers rejected calls (never calls that ran and failed); default none: the rejection is thrown. */
        public Builder fallback(Fallback v) { fallback = v; fallbackSet = true; return this; }

        /** What the gate does when the store fails; default {@link StoreErrorPolicy#ALLOW}. */
        public Builder storeErrorPolicy(StoreErrorPolicy v) { storeErrorPolicy = v; return this; }

        /** How often a cached open state is re-verified with one read; default 2 s. */
        public Builder openCacheRefresh(Duration v) { openCacheRefresh = v; return this; }

        /**
         * Turns on the local cache (distributed mode, needs a store with a transition feed): a closed state
         * is served from memory for up to {@code staleTolerance} (and never longer than 5 s) with zero store
         * reads, kept current by the feed. The worst-case fail-open window is {@code staleTolerance}.
         */
        public Builder localCache(Duration staleTolerance) {
            localCacheStaleTolerance = staleTolerance;
            localCacheSet = true;
            return this;
        }

        /** {@link #localCache(Duration)} with a stale tolerance of 100 ms. */
        public Builder localCache() { return localCache(CircuitBreakerConfig.DEFAULT_LOCAL_CACHE); }

        /** Warn once when this many distinct operations are exceeded (still works); default unset. */
        public Builder maxOperations(int v) { maxOperations = v; maxOperationsSet = true; return this; }

        /** The clock every rule reads; default {@link Clock#systemUTC()}. */
        public Builder clock(Clock v) { clock = v; return this; }

        /** The shared store (distributed mode); default none (local mode). */
        public Builder store(Store v) { store = v; storeSet = true; return this; }

        /** Whether {@link CircuitBreaker#close()} closes the store; default true. */
        public Builder closeStore(boolean v) { closeStore = v; return this; }

        /** Called on the instance whose own write caused a transition. */
        public Builder onStateChange(Consumer<TransitionEvent> v) { onStateChange = v; onStateChangeSet = true; return this; }

        /** Called with the operation and the error whenever a store operation fails. */
        public Builder onStoreError(BiConsumer<String, Throwable> v) { onStoreError = v; onStoreErrorSet = true; return this; }

        /** Whether rejections carry a stack trace; default false (cheap rejections). */
        public Builder writableStackTraces(boolean v) { writableStackTraces = v; return this; }

        /** Fixes the per-instance jitter seed (tests only). */
        Builder jitterSeed(long v) { seed = v; return this; }

        /**
         * Validates every option and builds the breaker. In distributed mode, logs one warning per missing
         * store capability and subscribes to the feed if the local cache was requested.
         *
         * @throws IllegalArgumentException naming the first bad option and its value
         */
        public CircuitBreaker build() {
            CircuitBreakerConfig cfg = new CircuitBreakerConfig(this);
            return new CircuitBreaker(cfg, seed != null ? seed : ThreadLocalRandom.current().nextLong());
        }
    }
}

package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parts of one {@link CircuitBreaker}, wired from its {@link CircuitBreakerConfig} (see the package
 * documentation for what each part does), and their life: the feed subscription, what an eviction frees, and
 * the close. Logs as {@code CircuitBreaker}, the class users see.
 *
 * <p>Thread-safe: the parts are, the feed subscription is made under {@link #feedLock}, and {@link #closed}
 * turns once.
 */
final class BreakerParts {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    /** Local-cache entries older than this are re-read even under a longer stale tolerance. */
    static final long CACHE_POLL_MILLIS = 5_000;

    final CircuitBreakerConfig config;
    final Policy policy;
    final Clock clock;
    final Monotonic time;
    /** The in-process store in local mode; null in distributed mode. */
    final InMemoryStore local;
    /** The LOCAL policy's decorator over the configured store; null without it. */
    final DegradingStore degrading;
    /** The store the parts call: {@link #local}, {@link #degrading} or the configured one. */
    final Store store;
    final boolean closeStore;
    final boolean cacheWanted;
    final StoreAccess access;
    final StoreErrors errors;
    final Observers observers;
    final Operations operations;
    final StateViews views;
    final OutcomeRecorder recorder;
    final CallTimer timer;
    final Calls calls;
    final AtomicBoolean closed = new AtomicBoolean();
    private final Object feedLock = new Object();
    private volatile FeedHandler feed;

    BreakerParts(CircuitBreakerConfig config, long seed) {
        this.config = config;
        this.policy = config.policy();
        this.clock = config.clock();
        this.time = new Monotonic(config.ticker());
        long callTimeoutMillis = config.callTimeout().map(Duration::toMillis).orElse(0L);
        this.errors = new StoreErrors(time, config.onStoreError().orElse(null));
        this.observers = new Observers(time);
        Store configured = config.store().orElse(null);
        this.cacheWanted = config.localCacheStaleTolerance().isPresent();
        if (configured == null) {
            this.local = new InMemoryStore();
            this.degrading = null;
            this.store = local;
            this.closeStore = true;
            this.access = new StoreAccess(local, local, InMemoryStore.class.getName(), LOG, false, null, time);
        } else {
            this.local = null;
            this.degrading = config.storeErrorPolicy() == StoreErrorPolicy.LOCAL
                    ? new DegradingStore(configured, this::degradedStoreError)
                    : null;
            this.store = degrading != null ? degrading : configured;
            this.closeStore = config.closeStore();
            this.access = new StoreAccess(store, configured, Stores.typeOf(configured).getName(), LOG, cacheWanted,
                    observers, time);
        }
        this.operations = new Operations(config.maxOperations().orElse(0), this::evicted, this::added);
        long cacheMaxAge = config.localCacheStaleTolerance()
                .map(d -> Math.min(d.toMillis(), CACHE_POLL_MILLIS)).orElse(0L);
        this.views = new StateViews(local == null, policy, seed, config.openCacheRefresh().toMillis(), cacheMaxAge,
                observers);
        Rejections rejections = new Rejections(config.writableStackTraces());
        // the policy is about a shared store; in local mode the in-process store fails only once closed
        boolean reject = config.storeErrorPolicy() == StoreErrorPolicy.REJECT && local == null;
        Trials trials = new Trials(clock, time, local, access, views, errors, rejections, config.halfOpenPermits(),
                config.trialTimeout(), reject, observers);
        Outliers outliers = policy.quorumOn()
                ? new Outliers(policy, config.instanceId(), config.outlierPolicy(), rejections, observers) : null;
        Gate gate = new Gate(clock, time, local, access, views, trials, errors, rejections, reject,
                outliers != null && outliers.rejects() ? outliers : null);
        this.recorder = new OutcomeRecorder(clock, time, policy, access, views, trials, errors, config.recordFailure(),
                config.recordResult().orElse(null), config.onStateChange().orElse(null), observers,
                config.slowCallDurationThreshold().map(Duration::toMillis).orElse(0L), local,
                policy.quorumOn() ? config.instanceId() : null, outliers,
                config.recordBatching().map(Duration::toMillis).orElse(0L));
        this.timer = callTimeoutMillis > 0 ? new CallTimer() : null;
        this.calls = new Calls(time, gate, recorder, trials, timer, callTimeoutMillis,
                config.fallback().orElse(null), observers);
        Listeners listeners = Listeners.of(config);
        if (listeners != null) {
            observers.add(listeners);
        }
        boolean fleetListener = config.onFleetStateChange().isPresent();
        if (fleetListener && access.feed == null) {
            LOG.warn("onFleetStateChange is set but store {} lacks TransitionFeed: fleet transitions are not reported",
                    configured == null ? "?" : Stores.typeOf(configured).getName());
        }
        boolean follow = configured != null && config.followFeed();
        if (follow && access.feed == null && !fleetListener) {
            LOG.warn("followFeed is set but store {} lacks TransitionFeed: other instances' transitions are seen at "
                    + "the next read", configured.getClass().getName());
        }
        if ((configured != null && cacheWanted) || fleetListener || follow) {
            subscribeFeed();
        }
    }

    /** Subscribes to the store's feed once, if it has one (see {@link FeedHandler}). */
    void subscribeFeed() {
        synchronized (feedLock) {
            if (feed == null && access.feed != null && !closed.get()) {
                Store named = config.store().orElse(store);
                feed = new FeedHandler(access, operations, views, time, Stores.typeOf(named).getName(), observers,
                        local == null && cacheWanted);
            }
        }
    }

    /** The entry of {@code operation}, created if needed (see {@link CircuitBreaker} on operation names). */
    OperationState entry(String operation) {
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        return operations.use(operation);
    }

    /** Registers {@code observer} and tells it of every operation held (see {@link CircuitBreaker#addObserver}). */
    boolean addObserver(CircuitBreakerObserver observer) {
        if (closed.get()) {
            throw new IllegalStateException("circuit breaker is closed");
        }
        if (!observers.add(observer)) {
            return false;
        }
        for (OperationState e : operations.all()) {
            try {
                observer.operationAdded(e);
            } catch (RuntimeException ex) {
                LOG.warn("observer {} threw in operationAdded", observer, ex);
            }
        }
        if (local == null) {
            subscribeFeed();
        }
        return true;
    }

    private void added(OperationState e) {
        Observers.Set o = observers.current();
        if (o != null) {
            o.operationAdded(e);
        }
    }

    /** An operation evicted past maxOperations: drop what only it needed (see {@link CircuitBreaker}). */
    private void evicted(OperationState e) {
        Observers.Set o = observers.current();
        if (o != null) {
            o.operationEvicted(e);
        }
        recorder.flush(e); // its batched outcomes are written, not dropped
        try {
            if (local != null) {
                BreakerState s = local.get(e.name).orElse(null);
                if (s != null && !s.open()) {
                    // A closed state is forgotten; an open one stays open. Best effort: a call of this (least
                    // recently used) operation racing the eviction may open it between the check and the delete.
                    local.delete(e.name);
                }
            } else if (degrading != null) {
                degrading.forget(e.name);
            }
        } catch (StoreException closedMeanwhile) {
            // the breaker is closing: nothing left to free
        }
    }

    /** A store error the LOCAL policy absorbed; never throws (it runs inside a store call). */
    private void degradedStoreError(String operation, Throwable ex) {
        OperationState e = operations.peek(operation);
        if (e != null) {
            errors.report(e, ex);
        } else {
            errors.reportUncounted(operation, ex);
        }
    }

    /** See {@link CircuitBreaker#isLocalCacheActive()}. */
    boolean isLocalCacheActive() {
        FeedHandler f = feed;
        return f != null && f.cacheActive() && !closed.get();
    }

    /** See {@link CircuitBreaker#close()}. Idempotent. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        observers.removeAll();
        try {
            FeedHandler f;
            synchronized (feedLock) {
                f = feed;
            }
            if (f != null) {
                f.close();
            }
        } catch (Throwable ex) { // the store's subscription: every store error, as everywhere
            LOG.warn("closing the feed subscription failed", StoreErrors.storeError(ex));
        } finally {
            if (timer != null) {
                timer.close();
            }
            recorder.close();
            try {
                if (closeStore) {
                    store.close();
                } else if (degrading != null) {
                    degrading.closeLocalOnly(); // the user keeps the real store; ours goes
                }
            } catch (Throwable ex) {
                LOG.warn("closing the store failed", StoreErrors.storeError(ex));
            }
        }
    }

    @Override
    public String toString() {
        return "CircuitBreaker[" + (local != null ? "local" : config.store().map(s -> Stores.typeOf(s).getSimpleName())
                .orElse("?")) + ", " + operations.size() + " operations]";
    }
}

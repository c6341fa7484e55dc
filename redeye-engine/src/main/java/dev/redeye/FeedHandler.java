package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The breaker's subscription to the store's transition feed, which keeps the local cache current and tells
 * the observers (metrics, {@code onFleetStateChange}) what the fleet does: an event updates the views of an
 * operation this instance holds (strictly newer versions only, see {@link StateViews}); a gap distrusts every
 * cache entry until it is re-read. Subscribed once per breaker: at build for the local cache or a fleet
 * listener, or when the first observer is registered. Every event goes to the observers; for the views an
 * event for an operation this instance does not hold is dropped (nothing cached to update).
 *
 * <h2>A subscription that fails</h2>
 * A store that cannot subscribe when the breaker is built (its stream not reachable yet) is retried with
 * backoff, started by the engine's JVM-wide {@link EngineTimer} (no thread per breaker while it waits; the
 * attempt itself runs on a pool thread, since it may wait out a network timeout): after {@value #FIRST_RETRY_MILLIS}
 * ms, then doubling up to every {@value #MAX_RETRY_MILLIS} ms, each delay jittered by up to 20% so a fleet
 * started together does not retry in step. Until it succeeds the local cache is off (every call reads the
 * store) and no fleet transition is reported; once it succeeds both start, and {@link #cacheActive()} turns
 * true. The first failure is logged as a warning, the retries at debug, the success at info. {@link #close()}
 * cancels a pending retry, and a retry that succeeds while the breaker closes gives its subscription back at
 * once. The delays are real time (the timer's), whatever the breaker's ticker.
 */
final class FeedHandler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    /** The delay before the first retry of a failed subscription (real time). */
    static final long FIRST_RETRY_MILLIS = 500;
    /** The longest delay between two retries (real time). */
    static final long MAX_RETRY_MILLIS = 30_000;

    private final StoreAccess access;
    private final Operations operations;
    private final StateViews views;
    private final Monotonic time;
    private final Observers observers;
    private final boolean cache;
    private final String storeName;
    /** Guards {@link #subscription}, {@link #retry}, {@link #closed} and {@link #failures}. */
    private final Object lock = new Object();
    private volatile TransitionFeed.Subscription subscription;
    /** Whether the subscription runs on the store and serves the local cache (see {@link #cacheActive()}). */
    private volatile boolean cacheOn;
    private ScheduledFuture<?> retry;
    private boolean closed;
    private int failures;

    /**
     * Subscribes; if the store refuses, logs why and retries (see the class comment).
     *
     * @param cache whether the subscription serves the local cache (else only the views and the observers)
     */
    FeedHandler(StoreAccess access, Operations operations, StateViews views, Monotonic time, String storeName,
            Observers observers, boolean cache) {
        this.access = access;
        this.operations = operations;
        this.views = views;
        this.time = time;
        this.observers = observers;
        this.cache = cache;
        this.storeName = storeName;
        attempt();
    }

    /** One subscription attempt: on the builder's thread first, then on the timer's. Never throws. */
    private void attempt() {
        TransitionFeed.Subscription s;
        try {
            s = access.subscribe(this::onEvent, this::onGap);
            if (s == null) {
                throw new StoreException("subscribe returned null");
            }
        } catch (StoreException e) { // whatever the store threw (StoreAccess wraps it), a VirtualMachineError aside
            retryLater(e);
            return;
        }
        int failed;
        HeldSubscription pending = null;
        synchronized (lock) {
            if (!closed) {
                subscription = s;
                if (s instanceof HeldSubscription p) {
                    pending = p; // held until a lazily opened store connects: no feed runs yet
                } else {
                    activateCache();
                }
                retry = null;
                failed = failures;
                s = null;
            } else {
                failed = -1;
            }
        }
        if (pending != null) {
            pending.whenLive(this::liveAfterConnect);
        }
        if (s != null) {
            closeQuietly(s); // the breaker closed while this attempt ran
        } else if (failed > 0) {
            LOG.info("subscribed to the transition feed of store {} after {} failed attempt(s){}", storeName, failed,
                    cache ? ": the local cache is on" : "");
        }
    }

    private void retryLater(StoreException e) {
        int n;
        long delay;
        synchronized (lock) {
            if (closed) {
                return;
            }
            n = ++failures;
            delay = delayBefore(n);
            retry = EngineTimer.scheduleBlocking(this::attempt, delay);
        }
        if (n == 1) {
            LOG.warn("could not subscribe to the transition feed of store {}: {} ({} until it succeeds); retrying "
                    + "with backoff", storeName, e.getMessage(),
                    cache ? "the local cache is unavailable" : "fleet transitions are not reported");
        } else {
            LOG.debug("subscription attempt {} to the transition feed of store {} failed: {}; next in {} ms", n,
                    storeName, e.getMessage(), delay);
        }
    }

    /** The jittered delay before retry {@code n} (1 = the first): doubling from the first, capped. */
    static long delayBefore(int n) {
        long base = FIRST_RETRY_MILLIS << Math.min(n - 1, 16);
        double jitter = 0.8 + 0.4 * ThreadLocalRandom.current().nextDouble();
        return (long) (Math.min(base, MAX_RETRY_MILLIS) * jitter);
    }

    /** Under {@link #lock}: turns the local cache on if this subscription serves it. */
    private void activateCache() {
        if (cache) {
            views.activateCache();
            cacheOn = true;
        }
    }

    /** A held subscription started on the store (after its gap, which distrusted every cached view). */
    private void liveAfterConnect() {
        synchronized (lock) {
            if (!closed) {
                activateCache();
            }
        }
    }

    /**
     * Whether the local cache is served by this subscription: it runs on the store (a subscription a lazily
     * opened store holds until it connects does not yet), and was made for the cache.
     */
    boolean cacheActive() {
        return cacheOn;
    }

    private void onEvent(TransitionEvent ev) {
        OperationState e = operations.peek(ev.operation());
        if (e != null) {
            views.noteFeed(e, ev.state(), time.nanos());
        }
        Observers.Set o = observers.current();
        if (o != null) {
            o.feedEvent(ev);
        }
    }

    private void onGap() {
        views.distrustAll();
        Observers.Set o = observers.current();
        if (o != null) {
            o.feedGap();
        }
    }

    @Override
    public void close() {
        TransitionFeed.Subscription s;
        synchronized (lock) {
            closed = true;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            views.deactivateCache();
            cacheOn = false;
            s = subscription;
        }
        if (s != null) {
            s.close();
        }
    }

    private void closeQuietly(TransitionFeed.Subscription s) {
        try {
            s.close();
        } catch (Throwable e) {
            LOG.warn("closing a feed subscription of store {} failed", storeName, StoreErrors.storeError(e));
        }
    }
}

package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The breaker's subscription to the store's transition feed, which keeps the local cache current and tells
 * the observers (metrics, {@code onFleetStateChange}) what the fleet does: an event updates the views of an
 * operation this instance holds (strictly newer versions only, see {@link StateViews}); a gap distrusts every
 * cache entry until it is re-read. Subscribed once per breaker: at build for the local cache or a fleet
 * listener, or when the first observer is registered. Every event goes to the observers; for the views an
 * event for an operation this instance does not hold is dropped (nothing cached to update).
 */
final class FeedHandler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    private final Operations operations;
    private final StateViews views;
    private final Monotonic time;
    private final Observers observers;
    private final boolean cache;
    private final TransitionFeed.Subscription subscription;

    /**
     * Subscribes; if the store refuses, logs why and leaves the local cache off.
     *
     * @param cache whether the subscription serves the local cache (else only the views and the observers)
     */
    FeedHandler(StoreAccess access, Operations operations, StateViews views, Monotonic time, String storeName,
            Observers observers, boolean cache) {
        this.operations = operations;
        this.views = views;
        this.time = time;
        this.observers = observers;
        this.cache = cache;
        TransitionFeed.Subscription s = null;
        try {
            s = access.subscribe(this::onEvent, this::onGap);
            if (s == null) {
                throw new StoreException("subscribe returned null");
            }
            if (cache) {
                views.activateCache();
            }
        } catch (StoreException e) {
            LOG.warn("could not subscribe to the transition feed of store {}: {} ({})", storeName,
                    cache ? "the local cache is unavailable" : "fleet transitions are not reported", e.getMessage());
        }
        this.subscription = s;
    }

    /** Whether the local cache is served by this subscription. */
    boolean cacheActive() {
        return cache && subscription != null;
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
        views.deactivateCache();
        if (subscription != null) {
            subscription.close();
        }
    }
}

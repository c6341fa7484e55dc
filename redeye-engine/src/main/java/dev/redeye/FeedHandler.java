package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The breaker's subscription to the store's transition feed, which keeps the local cache current: an event
 * updates the views of an operation this instance holds (strictly newer versions only, see
 * {@link StateViews}); a gap distrusts every cache entry until it is re-read. Subscribed once, at build; an
 * event for an operation this instance does not hold is dropped (nothing cached to update).
 */
final class FeedHandler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    private final Operations operations;
    private final StateViews views;
    private final Clock clock;
    private final TransitionFeed.Subscription subscription;

    /** Subscribes; if the store refuses, logs why and leaves the local cache off. */
    FeedHandler(StoreAccess access, Operations operations, StateViews views, Clock clock, String storeName) {
        this.operations = operations;
        this.views = views;
        this.clock = clock;
        TransitionFeed.Subscription s = null;
        try {
            s = access.subscribe(this::onEvent, views::distrustAll);
            if (s == null) {
                throw new StoreException("subscribe returned null");
            }
            views.activateCache();
        } catch (StoreException e) {
            LOG.warn("could not subscribe to the transition feed of store {}: the local cache is unavailable ({})",
                    storeName, e.getMessage());
        }
        this.subscription = s;
    }

    boolean active() {
        return subscription != null;
    }

    private void onEvent(TransitionEvent ev) {
        OperationState e = operations.peek(ev.operation());
        if (e != null) {
            views.noteFeed(e, ev.state(), clock.millis());
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

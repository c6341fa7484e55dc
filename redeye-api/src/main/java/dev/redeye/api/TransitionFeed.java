package dev.redeye.api;

import java.util.function.Consumer;

/**
 * Capability: a feed of every transition written through this store by any client. One shared stream per
 * store instance and key prefix, fanned out to many subscribers.
 *
 * <p>Delivery is at-least-once in the common case and may lose events on a connection drop; whenever
 * delivery may have missed events (drop, error, reconnect) the store calls {@code onGap} on every
 * subscriber, then retries its own subscription with backoff. Subscribers must tolerate duplicates and
 * out-of-order delivery by comparing versions.
 */
public interface TransitionFeed {

    /**
     * Subscribes to transitions. Callbacks run on the store's feed thread and must not block; an exception
     * thrown by a callback is logged by the store and does not end the subscription.
     *
     * @param listener receives each transition event
     * @param onGap    runs whenever delivery may have missed events
     * @return a handle that ends this subscription only
     * @throws StoreException if the store is closed or the feed cannot be started
     */
    Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap);

    /** A live subscription; closing it stops delivery to its subscriber only. */
    interface Subscription extends AutoCloseable {
        /** Stops delivery to this subscriber; idempotent. */
        @Override
        void close();
    }
}

package dev.redeye.spi;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.support.FeedSubscribers;
import java.util.function.Consumer;

/**
 * Capability: a feed of every transition written through this store by any client. One shared stream per
 * store instance and key prefix, fanned out to many subscribers.
 *
 * <p><b>Delivery.</b> Prompt: a transition made through any client reaches every live subscriber well within
 * a second (TCK rule R6.10; a feed that delivers nothing would leave every local cache stale for its whole
 * staleTolerance). Events of one key reach each subscriber in increasing version order (R6.9): a store
 * whose backend can deliver them out of order drops the late, older ones, which are obsolete, for example
 * with {@link FeedSubscribers#inVersionOrder}, and forgets what it delivered on every gap: after one the
 * backend may issue a version again (a fail-over that lost writes), and that event must be delivered
 * (R6.12). Every kind of transition is published (R6.11). The feed may lose events on a connection drop or an
 * overflow; whenever delivery may have missed events (drop, error, reconnect, a full queue) the store calls
 * {@code onGap} on every subscriber, then retries its own subscription with backoff. Subscribers still
 * compare versions with what they hold (a store's feed is not the only source of state they read).
 *
 * <p><b>Puts.</b> The engine writes with get-then-put whatever the store offers no atomic capability for
 * (every change of a store without {@link AtomicUpdates}), and its transitions must reach the feed too. So
 * a store that declares this capability but lacks {@link AtomicUpdates} publishes every put whose state
 * has a higher version than the state stored under the key before it (an absent key counts as version 0),
 * deciding it in the same atomic step as the write; {@link TransitionEvent#ofPut} builds the event. A put
 * that keeps or lowers the version (a counter write) publishes nothing. A store with {@link AtomicUpdates}
 * publishes from its updates and may ignore puts.
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

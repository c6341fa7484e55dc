package dev.redeye.spi.support;

import dev.redeye.api.OperationNames;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The subscriber side of a {@link TransitionFeed}, for store implementers: a thread-safe list of
 * subscribers, fan-out of each event and each gap to all of them, and isolation of callbacks (a callback
 * that throws is reported and stays subscribed). Every store's feed uses it, so they all treat subscribers
 * the same way.
 *
 * <p>Adding and removing is cheap enough for subscriptions (copy on write); {@link #publish} and
 * {@link #signalGap} iterate without locking and are meant to run on the store's one feed thread.
 *
 * <p><b>Version order</b> (TCK rule R6.9). A store whose events of one key can reach its feed out of order
 * (Redis appends to its stream in a second call after the state script, so two clients' events of one key
 * can land swapped) builds this with {@link #inVersionOrder}: per operation, only an event with a strictly
 * higher version than the last one delivered is delivered; an older one is obsolete (the subscribers already
 * hold a newer state) and is dropped without a gap. Sound only for a store whose versions never go backwards
 * for a key, which is what makes an older version obsolete, and only between gaps: every
 * {@link #signalGap} forgets the versions delivered (TCK rule R6.12), since what causes a gap (a fail-over to a
 * replica that missed the latest writes, a restart that lost them) can make the backend issue again a version
 * already delivered, and that event carries the backend's current state.
 */
public final class FeedSubscribers {
    /** How many operations {@link #inVersionOrder(BiConsumer)} remembers by default. */
    public static final int DEFAULT_ORDERED_KEYS = 10_000;

    private final CopyOnWriteArrayList<Sub> subscribers = new CopyOnWriteArrayList<>();
    private final BiConsumer<String, Throwable> onCallbackError;
    /** Last delivered version per operation, least recently published first; null when unordered. */
    private final LinkedHashMap<String, Long> lastDelivered;

    /**
     * Fan-out in arrival order (for a feed that already delivers each key's events in version order).
     *
     * @param onCallbackError told when a subscriber's callback throws: a short description of the callback
     *                        (never a secret) and what it threw; typically logs a warning
     * @throws NullPointerException if {@code onCallbackError} is null
     */
    public FeedSubscribers(BiConsumer<String, Throwable> onCallbackError) {
        this(onCallbackError, 0);
    }

    private FeedSubscribers(BiConsumer<String, Throwable> onCallbackError, int orderedKeys) {
        this.onCallbackError = Objects.requireNonNull(onCallbackError, "onCallbackError");
        this.lastDelivered = orderedKeys == 0 ? null : new LinkedHashMap<>(64, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                return size() > orderedKeys;
            }
        };
    }

    /**
     * Fan-out in version order per operation, remembering the last delivered version of up to
     * {@value #DEFAULT_ORDERED_KEYS} operations; see {@link #inVersionOrder(BiConsumer, int)}.
     *
     * @throws NullPointerException if {@code onCallbackError} is null
     */
    public static FeedSubscribers inVersionOrder(BiConsumer<String, Throwable> onCallbackError) {
        return inVersionOrder(onCallbackError, DEFAULT_ORDERED_KEYS);
    }

    /**
     * Fan-out that delivers, per operation, only events whose version is strictly higher than the last one
     * it delivered for that operation: duplicates and late, older events are dropped (they are obsolete,
     * since a newer state was already delivered). Memory is bounded: the last version of at most
     * {@code maxKeys} operations is kept, the least recently published forgotten first (an operation
     * forgotten this way accepts its next event whatever its version), and every operation is forgotten on
     * {@link #signalGap}. Costs one short lock per {@link #publish}.
     *
     * @param onCallbackError see {@link #FeedSubscribers(BiConsumer)}
     * @param maxKeys         how many operations to remember, at least 1
     * @throws NullPointerException     if {@code onCallbackError} is null
     * @throws IllegalArgumentException if {@code maxKeys} is below 1
     */
    public static FeedSubscribers inVersionOrder(BiConsumer<String, Throwable> onCallbackError, int maxKeys) {
        return new FeedSubscribers(onCallbackError, Arguments.atLeast("maxKeys", maxKeys, 1));
    }

    /**
     * Adds a subscriber.
     *
     * @return the handle whose {@code close()} removes this subscriber only (idempotent)
     * @throws NullPointerException if either callback is null
     */
    public TransitionFeed.Subscription add(Consumer<TransitionEvent> listener, Runnable onGap) {
        Sub s = new Sub(Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(onGap, "onGap"));
        subscribers.add(s);
        return s;
    }

    /**
     * Delivers {@code event} to every current subscriber, in subscription order; built
     * {@linkplain #inVersionOrder in version order}, drops it instead when its operation already had an event
     * of the same or a higher version.
     *
     * @return whether the event was delivered (false only when dropped as out of order)
     */
    public boolean publish(TransitionEvent event) {
        if (lastDelivered != null && !newer(event)) {
            return false;
        }
        for (Sub s : subscribers) {
            s.deliver(event);
        }
        return true;
    }

    private boolean newer(TransitionEvent event) {
        synchronized (lastDelivered) {
            Long last = lastDelivered.get(event.operation());
            if (last != null && event.version() <= last) {
                return false;
            }
            lastDelivered.put(event.operation(), event.version());
            return true;
        }
    }

    /**
     * Runs every current subscriber's {@code onGap}: delivery may have missed events. Built
     * {@linkplain #inVersionOrder in version order}, first forgets every version delivered, so the next event of
     * each operation is delivered whatever its version.
     */
    public void signalGap() {
        if (lastDelivered != null) {
            synchronized (lastDelivered) {
                lastDelivered.clear();
            }
        }
        for (Sub s : subscribers) {
            s.gap();
        }
    }

    /** The number of current subscribers. */
    public int size() {
        return subscribers.size();
    }

    /** Whether there is no subscriber. */
    public boolean isEmpty() {
        return subscribers.isEmpty();
    }

    /** Ends every subscription (for the store's {@code close()}). */
    public void clear() {
        for (Sub s : subscribers) {
            s.active = false;
        }
        subscribers.clear();
    }

    private final class Sub implements TransitionFeed.Subscription {
        private final Consumer<TransitionEvent> listener;
        private final Runnable onGap;
        private volatile boolean active = true;

        Sub(Consumer<TransitionEvent> listener, Runnable onGap) {
            this.listener = listener;
            this.onGap = onGap;
        }

        void deliver(TransitionEvent e) {
            if (!active) {
                return;
            }
            try {
                listener.accept(e);
            } catch (RuntimeException | LinkageError | AssertionError t) {
                report("transition listener (event of '" + OperationNames.abbreviate(e.operation()) + "')", t);
            }
        }

        void gap() {
            if (!active) {
                return;
            }
            try {
                onGap.run();
            } catch (RuntimeException | LinkageError | AssertionError t) {
                report("onGap callback", t);
            }
        }

        private void report(String what, Throwable t) {
            try {
                onCallbackError.accept(what + " threw; the subscription stays active", t);
            } catch (RuntimeException ignored) {
                // the reporter itself failed: nothing more useful to do on the feed thread
            }
        }

        @Override
        public void close() {
            active = false;
            subscribers.remove(this);
        }
    }
}

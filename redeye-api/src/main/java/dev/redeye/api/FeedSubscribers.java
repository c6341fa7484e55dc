package dev.redeye.api;

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
 */
public final class FeedSubscribers {
    private final CopyOnWriteArrayList<Sub> subscribers = new CopyOnWriteArrayList<>();
    private final BiConsumer<String, Throwable> onCallbackError;

    /**
     * @param onCallbackError told when a subscriber's callback throws: a short description of the callback
     *                        (never a secret) and what it threw; typically logs a warning
     * @throws NullPointerException if {@code onCallbackError} is null
     */
    public FeedSubscribers(BiConsumer<String, Throwable> onCallbackError) {
        this.onCallbackError = Objects.requireNonNull(onCallbackError, "onCallbackError");
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

    /** Delivers {@code event} to every current subscriber, in subscription order. */
    public void publish(TransitionEvent event) {
        for (Sub s : subscribers) {
            s.deliver(event);
        }
    }

    /** Runs every current subscriber's {@code onGap}: delivery may have missed events. */
    public void signalGap() {
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
                report("transition listener (event of '" + abbreviate(e.operation()) + "')", t);
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

    private static String abbreviate(String s) {
        return s.length() <= 100 ? s : s.substring(0, 97) + "...";
    }
}

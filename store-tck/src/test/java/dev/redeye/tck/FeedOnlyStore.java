package dev.redeye.tck;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.FeedSubscribers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A store that declares {@link TransitionFeed} and no atomic capability, so the engine writes every
 * transition with get-then-put: it publishes each put that raises a key's version, as the SPI requires of
 * such a store ({@link TransitionFeed}, "Puts"), deciding it under one lock with the write, and delivers on
 * the writing thread (so in version order). States live in an {@link InMemoryStore}. With
 * {@code publishPuts} off it is the defect that rule: a feed that never hears of the engine's writes.
 */
final class FeedOnlyStore implements Store, TransitionFeed {

    /** What the clients of one store share: the data, the feed, and the lock deciding publication. */
    static final class Backend implements AutoCloseable {
        private final InMemoryStore data = new InMemoryStore();
        private final FeedSubscribers feed = new FeedSubscribers((what, t) -> { });
        private final boolean publishPuts;

        Backend(boolean publishPuts) {
            this.publishPuts = publishPuts;
        }

        /** A new independent client. */
        Store client() {
            return new FeedOnlyStore(this);
        }

        /** Cuts the feed: every subscriber's onGap runs (the R6.8 hook). */
        void gap() {
            feed.signalGap();
        }

        @Override
        public void close() {
            data.close();
        }
    }

    private final Backend backend;
    private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private FeedOnlyStore(Backend backend) {
        this.backend = backend;
    }

    private void ensureOpen() {
        if (closed) {
            throw new StoreException("FeedOnlyStore client is closed");
        }
    }

    @Override
    public Optional<BreakerState> get(String key) {
        ensureOpen();
        return backend.data.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        ensureOpen();
        synchronized (backend) {
            BreakerState before = backend.data.get(key).orElse(null);
            backend.data.put(key, state, ttl);
            TransitionEvent e = TransitionEvent.ofPut(key, before, state);
            if (e != null && backend.publishPuts) {
                backend.feed.publish(e);
            }
        }
    }

    @Override
    public void delete(String key) {
        ensureOpen();
        synchronized (backend) {
            backend.data.delete(key);
        }
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        ensureOpen();
        Subscription s = backend.feed.add(listener, onGap);
        subscriptions.add(s);
        return s;
    }

    @Override
    public void close() {
        closed = true;
        subscriptions.forEach(Subscription::close);
    }

    @Override
    public String toString() {
        return "FeedOnlyStore" + (backend.publishPuts ? "" : "(puts not published)");
    }
}

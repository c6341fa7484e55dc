package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A client view of an {@link InMemoryStore} ({@link InMemoryStore#newClient()}): the shared data, its own
 * subscriptions and its own closed flag, as another process's connection to one backend would have.
 */
final class InMemoryClient extends ForwardingStore {
    private final List<Subscription> subs = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    InMemoryClient(InMemoryStore backend) {
        super(backend);
    }

    @Override
    protected Store delegate() {
        if (closed) {
            throw new StoreException("InMemoryStore client is closed");
        }
        return super.delegate();
    }

    /** Every capability of the shared store, also once closed (its methods then fail). */
    @Override
    protected boolean offers(Class<?> type) {
        return true;
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Subscription inner = super.subscribe(listener, onGap);
        Subscription outer = new Subscription() {
            @Override
            public void close() {
                inner.close();
                subs.remove(this);
            }
        };
        subs.add(outer);
        return outer;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Subscription s : subs) {
            s.close();
        }
    }

    @Override
    public String toString() {
        return "InMemoryStore.client[" + super.delegate() + "]";
    }
}

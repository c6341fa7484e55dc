package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A store whose transition feed the test drives by hand ({@link #publish}), synchronously on the test's
 * thread, in any order and with any version: duplicates, late events, events racing a read
 * ({@link #duringNextGet}). Everything else goes to the wrapped store; reads are counted.
 */
final class FeedControl extends ForwardingStore {
    private volatile Consumer<TransitionEvent> listener;
    private final AtomicReference<Runnable> duringNextGet = new AtomicReference<>();
    final AtomicInteger reads = new AtomicInteger();

    FeedControl(Store client) {
        super(client);
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> l, Runnable onGap) {
        listener = l;
        return () -> listener = null;
    }

    @Override
    public Optional<BreakerState> get(String key) {
        reads.incrementAndGet();
        Optional<BreakerState> s = super.get(key);
        Runnable r = duringNextGet.getAndSet(null);
        if (r != null) {
            r.run(); // an event that arrives after the store answered, before the engine noted the answer
        }
        return s;
    }

    /** Runs {@code r} inside the next read, after the store answered. */
    void duringNextGet(Runnable r) {
        duringNextGet.set(r);
    }

    /** Delivers an event for {@code op} with {@code state}, as another instance's transition. */
    void publish(String op, BreakerState state) {
        TransitionKind kind = state.open() ? TransitionKind.OPENED : TransitionKind.CLOSED;
        listener.accept(new TransitionEvent(op, kind, kind.from(), state));
    }
}

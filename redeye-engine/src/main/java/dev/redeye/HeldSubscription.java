package dev.redeye;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TransitionFeed.Subscription;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription a {@link ConnectingStore} returned before its real store could take it: it delivers nothing
 * until it is live ({@link #start}), which the engine waits for ({@link #whenLive}) before it trusts the feed
 * (its local cache).
 */
final class HeldSubscription implements TransitionFeed.Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(Stores.class);

    private final Consumer<TransitionEvent> listener;
    private final Runnable onGap;
    /** The owning store's lock, its list of held subscriptions and its closed flag, both guarded by it. */
    private final Object lock;
    private final List<HeldSubscription> held;
    private final BooleanSupplier storeClosed;
    private final String description;
    // guarded by lock
    private Subscription real;
    private boolean cancelled;
    private boolean live;
    private Runnable onLive;

    HeldSubscription(Consumer<TransitionEvent> listener, Runnable onGap, Object lock, List<HeldSubscription> held,
            BooleanSupplier storeClosed, String description) {
        this.listener = listener;
        this.onGap = onGap;
        this.lock = lock;
        this.held = held;
        this.storeClosed = storeClosed;
        this.description = description;
    }

    /** Starts it on the real store's feed; false if the feed refused it (it stays held). */
    boolean start(Store store) {
        Subscription s;
        try {
            s = store.capability(TransitionFeed.class).orElseThrow().subscribe(listener, onGap);
        } catch (Throwable e) { // whatever the store throws but a VirtualMachineError: retried
            LOG.debug("redeye: store {} refused a held feed subscription; retrying: {}", description,
                    StoreErrors.storeError(e).toString());
            return false;
        }
        boolean keep;
        synchronized (lock) {
            keep = !cancelled && !storeClosed.getAsBoolean();
            if (keep) {
                real = s;
                held.remove(this);
            }
        }
        if (!keep) {
            try {
                s.close();
            } catch (Throwable e) {
                LOG.debug("redeye: closing a feed subscription of store {} failed", description,
                        StoreErrors.storeError(e));
            }
            return true;
        }
        try {
            onGap.run(); // what happened before the subscription started is unknown to the subscriber
        } catch (Throwable e) {
            LOG.warn("redeye: a feed subscriber's onGap threw", StoreErrors.storeError(e));
        }
        Runnable then;
        synchronized (lock) {
            live = true;
            then = onLive;
            onLive = null;
        }
        if (then != null) {
            then.run();
        }
        return true;
    }

    /**
     * Runs {@code then} once the subscription runs on the real store (after its {@code onGap}), at once if it
     * already does; never if it is closed first. {@code then} runs on the connector thread and must not throw.
     */
    void whenLive(Runnable then) {
        Objects.requireNonNull(then, "onLive");
        synchronized (lock) {
            if (cancelled) {
                return;
            }
            if (!live) {
                onLive = then;
                return;
            }
        }
        then.run();
    }

    @Override
    public void close() {
        Subscription s;
        synchronized (lock) {
            cancelled = true;
            onLive = null;
            held.remove(this);
            s = real;
            real = null;
        }
        if (s != null) {
            s.close();
        }
    }
}


package dev.redeye.spi.support;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A store that forwards every method of the SPI to another store and declares exactly the capabilities that
 * store declares: the one base for decorators (counting, degrading, connecting, fault injection, test
 * doubles). Each SPI method is forwarded here, once; a subclass overrides the methods it changes and calls
 * {@code super} for the rest.
 *
 * <p>{@link #capability(Class)} returns {@code this} for each capability interface of {@link #CAPABILITIES}
 * that {@link #offers} says is offered (by default: that the delegate offers), so an overridden capability
 * method is what the engine calls, and empty for the others; any other type is looked up on the delegate.
 * Calling a capability method that is not offered throws {@link UnsupportedOperationException}.
 *
 * <p>The capabilities of a delegate given to the constructor are looked up once, there, so a forwarded call
 * costs no lookup. A decorator whose store is known only later (a store that connects on first use) uses the
 * constructor without a delegate and overrides {@link #delegate()} and {@link #offers}; its store's
 * capabilities are looked up per call.
 *
 * <p>Thread-safe if the delegate is. {@link #close()} closes the delegate.
 */
public abstract class ForwardingStore implements Store, AtomicUpdates, TrialClaims, TransitionFeed,
        OperationListing {

    /** The capability interfaces of the SPI, in the order reports list them. */
    public static final List<Class<?>> CAPABILITIES = List.of(AtomicUpdates.class, TrialClaims.class,
            TransitionFeed.class, OperationListing.class);

    private final Store delegate;
    /** The delegate's capabilities, looked up at construction; null when it lacks one, or has no delegate. */
    private final AtomicUpdates updates;
    private final TrialClaims claims;
    private final TransitionFeed feed;
    private final OperationListing listing;

    /**
     * @param delegate the store every call goes to
     * @throws NullPointerException if {@code delegate} is null
     */
    protected ForwardingStore(Store delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.updates = delegate.capability(AtomicUpdates.class).orElse(null);
        this.claims = delegate.capability(TrialClaims.class).orElse(null);
        this.feed = delegate.capability(TransitionFeed.class).orElse(null);
        this.listing = delegate.capability(OperationListing.class).orElse(null);
    }

    /** For a subclass that overrides {@link #delegate()} and {@link #offers}: its store is known later. */
    protected ForwardingStore() {
        this.delegate = null;
        this.updates = null;
        this.claims = null;
        this.feed = null;
        this.listing = null;
    }

    /**
     * The store every call goes to.
     *
     * @throws IllegalStateException if this store was made without one and the subclass does not override this
     */
    protected Store delegate() {
        if (delegate == null) {
            throw new IllegalStateException(getClass().getName() + " was made without a delegate and does not "
                    + "override delegate()");
        }
        return delegate;
    }

    /**
     * Whether this store declares {@code type}, one of {@link #CAPABILITIES}: by default, whether the delegate
     * offers it.
     */
    protected boolean offers(Class<?> type) {
        return capabilityOf(delegate(), type) != null;
    }

    /** {@code d}'s capability {@code type}: the one looked up at construction when {@code d} is that delegate. */
    private Object capabilityOf(Store d, Class<?> type) {
        if (d != delegate) {
            return d.capability(type).orElse(null);
        }
        if (type == AtomicUpdates.class) {
            return updates;
        }
        if (type == TrialClaims.class) {
            return claims;
        }
        if (type == TransitionFeed.class) {
            return feed;
        }
        return type == OperationListing.class ? listing : null;
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        if (CAPABILITIES.contains(type)) {
            return offers(type) ? Optional.of(type.cast(this)) : Optional.empty();
        }
        return delegate().capability(type);
    }

    /** The delegate's capability {@code type}; {@link #delegate()} is asked on every call (it may refuse). */
    private <C> C need(Class<C> type) {
        if (!offers(type)) {
            throw new UnsupportedOperationException(this + " does not offer " + type.getSimpleName());
        }
        Object c = capabilityOf(delegate(), type);
        if (c == null) {
            throw new UnsupportedOperationException("the wrapped store of " + this + " does not offer "
                    + type.getSimpleName());
        }
        return type.cast(c);
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return delegate().get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        delegate().put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        delegate().delete(key);
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        return need(AtomicUpdates.class).apply(key, operation, policy, now);
    }

    @Override
    public Optional<String> claimTrial(String key, int permits, Duration ttl) {
        return need(TrialClaims.class).claimTrial(key, permits, ttl);
    }

    @Override
    public void releaseTrial(String key, String token) {
        need(TrialClaims.class).releaseTrial(key, token);
    }

    @Override
    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        return need(TransitionFeed.class).subscribe(listener, onGap);
    }

    @Override
    public Page page(String cursor, int limit) {
        return need(OperationListing.class).page(cursor, limit);
    }

    @Override
    public void close() {
        delegate().close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + delegate() + "]";
    }
}

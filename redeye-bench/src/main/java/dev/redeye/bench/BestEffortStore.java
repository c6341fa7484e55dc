package dev.redeye.bench;

import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.util.Objects;
import java.util.Optional;

/**
 * A store decorator that hides every optional capability of the store it wraps, leaving only
 * {@code get}/{@code put}/{@code delete}: the same backend, used the way a naive shared breaker would use it
 * (get-then-put, per-instance trial claims). The "atomic vs best-effort" table runs the same workload over a
 * store and over this view of it.
 *
 * <p>Thread-safe as far as the wrapped store is; adds no cost. {@link #close()} closes the wrapped store.
 */
public final class BestEffortStore extends ForwardingStore {

    /**
     * @param delegate the store whose capabilities to hide
     * @throws NullPointerException if {@code delegate} is null
     */
    public BestEffortStore(Store delegate) {
        super(delegate);
    }

    /** Always empty: this view offers no capability at all. */
    @Override
    public <C> Optional<C> capability(Class<C> type) {
        Objects.requireNonNull(type, "type");
        return Optional.empty();
    }
}

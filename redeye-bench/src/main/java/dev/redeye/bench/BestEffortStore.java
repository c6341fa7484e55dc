package dev.redeye.bench;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Store;
import java.time.Duration;
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
public final class BestEffortStore implements Store {
    private final Store delegate;

    /**
     * @param delegate the store whose capabilities to hide
     * @throws NullPointerException if {@code delegate} is null
     */
    public BestEffortStore(Store delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public Optional<BreakerState> get(String key) {
        return delegate.get(key);
    }

    @Override
    public void put(String key, BreakerState state, Duration ttl) {
        delegate.put(key, state, ttl);
    }

    @Override
    public void delete(String key) {
        delegate.delete(key);
    }

    /** Always empty: this view offers no capability at all. */
    @Override
    public <C> Optional<C> capability(Class<C> type) {
        Objects.requireNonNull(type, "type");
        return Optional.empty();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "BestEffortStore[" + delegate + "]";
    }
}

package dev.redeye.tck.broken;

import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;

/**
 * A store that forwards everything to a correct client (an {@code InMemoryStore} client view) and declares
 * exactly what that client declares. Each deliberately broken store extends it and overrides the one piece
 * it gets wrong, so the TCK failures it causes can be attributed to that defect alone.
 */
public class ForwardingStore extends dev.redeye.spi.support.ForwardingStore {
    protected final Store inner;

    protected ForwardingStore(Store inner) {
        super(inner);
        this.inner = inner;
    }

    /** Runs before every atomic operation; a mutant may prepare the key. The default does nothing. */
    void before(String key, Policy policy) {
    }

    /** Every atomic result passes through here; a mutant may alter it. The default returns it unchanged. */
    StateChange written(String key, Policy policy, long now, StateChange change) {
        return change;
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        before(key, policy);
        return written(key, policy, now, super.apply(key, operation, policy, now));
    }

    @Override
    public String toString() {
        return getClass().getSimpleName();
    }
}

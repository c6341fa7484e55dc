package dev.redeye.tck.broken;

import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;

/**
 * Broken on purpose: atomic, but ignores the {@code now} it is given and reads its own clock
 * ({@link System#currentTimeMillis()}) for every rule.
 */
final class OwnClockStore extends ForwardingStore {

    OwnClockStore(Store inner) {
        super(inner);
    }

    private static long ownNow() {
        return System.currentTimeMillis();
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        return super.apply(key, operation, policy, ownNow());
    }
}

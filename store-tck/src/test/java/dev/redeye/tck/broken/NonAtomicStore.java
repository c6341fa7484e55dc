package dev.redeye.tck.broken;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Broken on purpose: records outcomes and trial results as get, apply {@link Transitions}, pause briefly,
 * put (the naive shared breaker). Correct in a single thread; loses updates under concurrency.
 */
final class NonAtomicStore extends ForwardingStore {

    NonAtomicStore(Store inner) {
        super(inner);
    }

    private StateChange readModifyWrite(String key, Function<BreakerState, StateChange> rule) {
        BreakerState prev = get(key).orElse(null);
        StateChange c = rule.apply(prev);
        Thread.yield();
        LockSupport.parkNanos(50_000); // the network round trip between the read and the write
        if (c.changed()) {
            put(key, c.state(), Duration.ofHours(1));
        }
        return c;
    }

    @Override
    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
        return readModifyWrite(key, s -> operation.apply(s, policy, now));
    }
}

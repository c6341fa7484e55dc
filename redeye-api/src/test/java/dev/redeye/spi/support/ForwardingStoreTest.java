package dev.redeye.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ForwardingStoreTest {
    private static final Policy P = Policy.builder().build();

    /** A store with the atomic capability that counts how often its capabilities are looked up. */
    private static final class AtomicOnly implements Store, AtomicUpdates {
        final AtomicInteger lookups = new AtomicInteger();
        final AtomicInteger applies = new AtomicInteger();

        @Override
        public <C> Optional<C> capability(Class<C> type) {
            lookups.incrementAndGet();
            return Store.super.capability(type);
        }

        @Override
        public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
            applies.incrementAndGet();
            return operation.apply(null, policy, now);
        }

        @Override
        public Optional<BreakerState> get(String key) {
            return Optional.empty();
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
        }

        @Override
        public void delete(String key) {
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aForwardedCallLooksNoCapabilityUpAndDeclaresWhatTheDelegateDeclares() {
        AtomicOnly real = new AtomicOnly();
        ForwardingStore f = new ForwardingStore(real) { };
        real.lookups.set(0);
        for (int i = 0; i < 3; i++) {
            f.apply("k", AtomicOperation.failure(), P, i);
        }
        assertEquals(3, real.applies.get());
        assertEquals(0, real.lookups.get(), "looked up once, at construction");
        assertSame(f, f.capability(AtomicUpdates.class).orElseThrow(), "the decorator's own method is called");
        assertTrue(f.capability(TrialClaims.class).isEmpty());
        assertThrows(UnsupportedOperationException.class, () -> f.claimTrial("k", 1, Duration.ofSeconds(1)));
    }

    @Test
    void aDelegateThatRefusesIsAskedOnEveryCall() {
        AtomicOnly real = new AtomicOnly();
        boolean[] closed = {false};
        ForwardingStore f = new ForwardingStore(real) {
            @Override
            protected Store delegate() {
                if (closed[0]) {
                    throw new StoreException("closed (test)");
                }
                return super.delegate();
            }
        };
        f.apply("k", AtomicOperation.failure(), P, 1);
        closed[0] = true;
        assertThrows(StoreException.class, () -> f.apply("k", AtomicOperation.failure(), P, 2));
        assertEquals(1, real.applies.get());
    }
}

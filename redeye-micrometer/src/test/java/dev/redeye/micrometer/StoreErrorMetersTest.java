package dev.redeye.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A store that fails shows in {@code redeye.store.operations{outcome=error}} and {@code redeye.store.errors}. */
class StoreErrorMetersTest {
    private static final String OP = "profile";

    /** A store whose reads fail while {@code down} is set. */
    static final class FlakyStore extends ForwardingStore {
        volatile boolean down;

        FlakyStore(Store delegate) {
            super(delegate);
        }

        @Override
        public Optional<BreakerState> get(String key) {
            if (down) {
                throw new StoreException("backend down (test)");
            }
            return super.get(key);
        }
    }

    @Test
    void storeErrorsAreCountedAndTimedAsErrors() throws Exception {
        FlakyStore store = new FlakyStore(Stores.open("memory:"));
        MeterRegistry r = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().store(store).build(); RedeyeMetrics m = RedeyeMetrics.of(b)) {
            m.bindTo(r);
            Fixtures.succeed(b, OP);
            store.down = true;
            Fixtures.succeed(b, OP); // ALLOW (the default): the call runs; the read was a store error
            Fixtures.succeed(b, OP);
            assertEquals(2, r.get(RedeyeMetrics.STORE_OPERATIONS).tags("store", "FlakyStore", "operation", "get",
                    "outcome", "error").timer().count());
            assertEquals(1, r.get(RedeyeMetrics.STORE_OPERATIONS).tags("operation", "get", "outcome", "success")
                    .timer().count());
            assertEquals(2.0, Fixtures.counter(r, RedeyeMetrics.STORE_ERRORS, OP, "store", "FlakyStore"));
            assertEquals(3, Fixtures.calls(r, OP, "successful").count());
        }
    }
}

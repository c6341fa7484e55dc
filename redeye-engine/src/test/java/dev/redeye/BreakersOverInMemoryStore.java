package dev.redeye;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;

/**
 * Base of the tests whose breakers share one virtual clock and, in distributed mode, one {@link InMemoryStore}:
 * after each test it closes the test's feed {@link #probes}, then the breakers it added to {@link #breakers}
 * (or built with {@link #keep}), then the store.
 */
abstract class BreakersOverInMemoryStore {
    protected final MutableClock clock = new MutableClock();
    protected final InMemoryStore backend = new InMemoryStore();
    protected final List<CircuitBreaker> breakers = new CopyOnWriteArrayList<>();
    protected final FeedProbes probes = new FeedProbes(backend);

    /** Builds a breaker and adds it to {@link #breakers}, to be closed after the test. */
    protected CircuitBreaker keep(CircuitBreakerBuilder b) {
        CircuitBreaker cb = b.build();
        breakers.add(cb);
        return cb;
    }

    @AfterEach
    void closeProbesBreakersThenStore() {
        probes.close();
        breakers.forEach(CircuitBreaker::close);
        backend.close();
    }
}

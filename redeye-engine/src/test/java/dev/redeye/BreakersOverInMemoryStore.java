package dev.redeye;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;

/**
 * Base of the tests whose breakers share one {@link InMemoryStore} and one virtual clock: after each test it
 * closes the test's feed {@link #probes}, then the breakers it added to {@link #breakers}, then the store.
 */
abstract class BreakersOverInMemoryStore {
    protected final MutableClock clock = new MutableClock();
    protected final InMemoryStore backend = new InMemoryStore();
    protected final List<CircuitBreaker> breakers = new CopyOnWriteArrayList<>();
    protected final FeedProbes probes = new FeedProbes(backend);

    @AfterEach
    void closeProbesBreakersThenStore() {
        probes.close();
        breakers.forEach(CircuitBreaker::close);
        backend.close();
    }
}

package dev.redeye.tck;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The whole TCK over {@link InMemoryStore}: every client is a {@link InMemoryStore#newClient() client view} of
 * one shared backing store, so two clients behave like two processes on one backend. R1.7 is skipped (an
 * in-memory store holds validated {@code BreakerState} objects; there is no raw layout to corrupt); R6.8 and
 * R6.12 cut the feed with {@link InMemoryStore#simulateFeedGap()}; R6.12's rewind is a put, which in this store
 * is the raw write (it stores exactly the state given, a lower version too, and publishes nothing).
 */
class InMemoryStoreTckTest extends StoreTck {
    private static InMemoryStore backing;

    @BeforeAll
    static void openBacking() {
        backing = new InMemoryStore();
    }

    @AfterAll
    static void closeBacking() {
        backing.close();
    }

    @Override
    protected Store newClient() {
        return backing.newClient();
    }

    @Override
    protected void interruptFeed(Store client) {
        backing.simulateFeedGap();
    }

    @Override
    protected void rewind(Store client, String key, BreakerState state) {
        client.put(key, state, Duration.ofHours(1));
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, OutcomeBatches.class);
    }
}

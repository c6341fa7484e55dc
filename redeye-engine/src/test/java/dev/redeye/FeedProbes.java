package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.TransitionFeed;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Waits for {@link InMemoryStore}'s in-process feed: a probe subscribed after the breakers gets each event (or
 * gap) after them, since the feed delivers to its subscribers in order, so once the probe has it the breakers
 * have it. Close to end every probe.
 */
final class FeedProbes implements AutoCloseable {
    private final InMemoryStore backend;
    private final List<TransitionFeed.Subscription> probes = new ArrayList<>();

    FeedProbes(InMemoryStore backend) {
        this.backend = backend;
    }

    /** A latch that opens once {@code events} events and {@code gaps} gaps have passed. */
    CountDownLatch probe(int events, int gaps) {
        CountDownLatch latch = new CountDownLatch(events + gaps);
        probes.add(backend.subscribe(e -> latch.countDown(), latch::countDown));
        return latch;
    }

    static void await(CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(10, TimeUnit.SECONDS), "feed delivery timed out");
    }

    @Override
    public void close() {
        probes.forEach(TransitionFeed.Subscription::close);
    }
}

package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** What one TCK subscriber receives: every event in arrival order and the number of gaps. Thread-safe. */
final class FeedCollector implements Consumer<TransitionEvent> {
    final ConcurrentLinkedQueue<TransitionEvent> events = new ConcurrentLinkedQueue<>();
    final AtomicInteger gaps = new AtomicInteger();
    TransitionFeed.Subscription subscription;

    /** Subscribes a new collector to the feed of {@code s} (skips the rule if the store has no feed). */
    static FeedCollector subscribe(Store s) {
        FeedCollector c = new FeedCollector();
        c.subscription = TckSupport.feed(s).subscribe(c, c.gaps::incrementAndGet);
        if (c.subscription == null) {
            fail("subscribe returned null instead of a Subscription");
        }
        return c;
    }

    @Override
    public void accept(TransitionEvent e) {
        events.add(e);
    }

    /** The events of {@code operation}, in arrival order. */
    List<TransitionEvent> of(String operation) {
        return events.stream().filter(e -> e.operation().equals(operation)).collect(Collectors.toList());
    }

    boolean has(String operation, long version) {
        return events.stream().anyMatch(e -> e.operation().equals(operation) && e.version() == version);
    }
}

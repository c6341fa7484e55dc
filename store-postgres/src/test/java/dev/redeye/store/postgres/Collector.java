package dev.redeye.store.postgres;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/** The events and gaps one subscription received. Thread-safe. */
final class Collector {
    final List<TransitionEvent> events = new CopyOnWriteArrayList<>();
    final AtomicInteger gaps = new AtomicInteger();

    /** Subscribes a new collector to {@code feed}. */
    static Collector subscribe(TransitionFeed feed) {
        Collector c = new Collector();
        feed.subscribe(c.events::add, c.gaps::incrementAndGet);
        return c;
    }

    boolean has(String op, long version) {
        return events.stream().anyMatch(e -> e.operation().equals(op) && e.version() == version);
    }

    List<TransitionEvent> of(String op) {
        return events.stream().filter(e -> e.operation().equals(op)).collect(Collectors.toList());
    }
}

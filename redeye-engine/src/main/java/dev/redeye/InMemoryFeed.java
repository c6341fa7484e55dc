package dev.redeye;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed.Subscription;
import dev.redeye.spi.support.FeedSubscribers;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transition feed of an {@link InMemoryStore}: events are queued by the writer and delivered in order on
 * one daemon thread, started with the first subscription and stopped by {@link #close()}. When the queue is
 * full, further events are dropped and every subscriber's {@code onGap} runs once the thread catches up.
 */
final class InMemoryFeed {
    private static final Logger LOG = LoggerFactory.getLogger(InMemoryStore.class);

    private final FeedSubscribers subscribers = new FeedSubscribers((what, t) -> LOG.warn("{}", what, t));
    private final LinkedBlockingQueue<Runnable> deliveries;
    private final AtomicBoolean overflowed = new AtomicBoolean();
    private final Object lock = new Object();
    private volatile Thread thread;
    private volatile boolean closed;

    /** @param capacity how many undelivered events are held before the feed drops and signals a gap */
    InMemoryFeed(int capacity) {
        this.deliveries = new LinkedBlockingQueue<>(capacity);
    }

    Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        start();
        return subscribers.add(listener, onGap);
    }

    boolean hasSubscribers() {
        return !subscribers.isEmpty();
    }

    /** Queues {@code event} for every subscriber. */
    void publish(TransitionEvent event) {
        enqueue(() -> subscribers.publish(event));
    }

    /** Runs every subscriber's {@code onGap}, on the feed thread, in order with the events. */
    void simulateGap() {
        start();
        enqueue(subscribers::signalGap);
    }

    void close() {
        closed = true;
        subscribers.clear();
        Thread t;
        synchronized (lock) {
            t = thread;
            thread = null;
        }
        if (t != null) {
            t.interrupt();
        }
        deliveries.clear();
    }

    /** Queues a delivery; when the queue is full the delivery is dropped and the feed thread signals a gap. */
    private void enqueue(Runnable delivery) {
        if (!deliveries.offer(delivery) && overflowed.compareAndSet(false, true)) {
            LOG.warn("InMemoryStore feed queue is full ({} events): subscribers fall behind; dropping events and "
                    + "signalling a gap", deliveries.size());
        }
    }

    private void start() {
        if (thread != null) {
            return;
        }
        synchronized (lock) {
            if (thread != null || closed) {
                return;
            }
            Thread t = new Thread(this::run, "redeye-memory-feed");
            t.setDaemon(true);
            thread = t;
            t.start();
        }
    }

    private void run() {
        while (!closed) {
            Runnable r;
            try {
                r = deliveries.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (closed) {
                return;
            }
            if (r != null) {
                r.run();
            }
            if (overflowed.compareAndSet(true, false)) {
                subscribers.signalGap(); // events were dropped: subscribers must re-read
            }
        }
    }
}

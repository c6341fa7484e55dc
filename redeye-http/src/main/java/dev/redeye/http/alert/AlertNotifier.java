package dev.redeye.http.alert;

import dev.redeye.http.HttpStateChange;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns state changes into notifications without ever blocking or throwing into the breaker: a
 * {@code Consumer<HttpStateChange>} to give {@code HttpBreakers.Builder.onStateChange} (or a rule's own
 * {@code onStateChange}) that hands each change to one daemon thread, which calls the {@link AlertSink}.
 *
 * <pre>{@code
 * AlertNotifier alerts = AlertNotifier.builder(mailSink).only(c -> c.to() != BreakerStatus.HALF_OPEN).build();
 * HttpBreakers breakers = HttpBreakers.builder(rules).onStateChange(alerts).build();
 * }</pre>
 *
 * <ul>
 * <li>{@link #accept} costs one queue offer: it never waits for the sink and never throws (a filter that throws
 * is logged and the change dropped).</li>
 * <li>The queue is bounded ({@code capacity}, default 100): when the sink is slower than the changes, the
 * newest are dropped and counted ({@link #dropped()}), with a warning at most every 10 s.</li>
 * <li>A sink that throws is logged (at WARN, with the change) and counted ({@link #failed()}); nothing is
 * retried.</li>
 * <li>{@link #close()} delivers what is queued (waiting at most {@code closeTimeout}, default 5 s), then stops
 * the thread; changes accepted after it are dropped.</li>
 * </ul>
 * Thread-safe.
 */
public final class AlertNotifier implements Consumer<HttpStateChange>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AlertNotifier.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AlertSink sink;
    private final Predicate<? super HttpStateChange> filter;
    private final long closeTimeoutMillis;
    private final ThreadPoolExecutor executor;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong lastDropWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    private AlertNotifier(Builder b) {
        this.sink = b.sink;
        this.filter = b.filter;
        this.closeTimeoutMillis = b.closeTimeoutMillis;
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(b.capacity),
                r -> {
                    Thread t = new Thread(r, "redeye-alerts");
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
    }

    /** A builder delivering to {@code sink}. */
    public static Builder builder(AlertSink sink) {
        return new Builder(Objects.requireNonNull(sink, "sink"));
    }

    /** Queues {@code change} for the sink; never blocks, never throws. */
    @Override
    public void accept(HttpStateChange change) {
        try {
            if (change == null || !filter.test(change)) {
                return;
            }
            executor.execute(() -> deliver(change));
        } catch (RejectedExecutionException full) {
            long n = dropped.incrementAndGet();
            long now = System.nanoTime();
            long last = lastDropWarning.get();
            if (now - last >= WARN_EVERY_NANOS && lastDropWarning.compareAndSet(last, now)) {
                LOG.warn("alert queue full or closed: dropped {} ({} so far)", change, n);
            }
        } catch (RuntimeException e) {
            LOG.warn("alert filter threw on {}; dropped", change, e);
        }
    }

    private void deliver(HttpStateChange change) {
        try {
            sink.send(change);
            sent.incrementAndGet();
        } catch (Exception | LinkageError e) {
            failed.incrementAndGet();
            LOG.warn("alert sink {} failed to deliver {}", sink, change, e);
        }
    }

    /** Notifications the sink delivered. */
    public long sent() {
        return sent.get();
    }

    /** Notifications the sink failed to deliver (it threw). */
    public long failed() {
        return failed.get();
    }

    /** Changes dropped because the queue was full or the notifier closed. */
    public long dropped() {
        return dropped.get();
    }

    /** Delivers what is queued (waiting at most the close timeout), then stops the thread. Idempotent. */
    @Override
    public void close() {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(closeTimeoutMillis, TimeUnit.MILLISECONDS)) {
                int left = executor.shutdownNow().size();
                LOG.warn("alert notifier closed with {} notification(s) undelivered", left);
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "AlertNotifier[" + sink + ", sent " + sent + ", failed " + failed + ", dropped " + dropped + "]";
    }

    /** Builds an {@link AlertNotifier}. Not thread-safe. */
    public static final class Builder {
        private final AlertSink sink;
        private Predicate<? super HttpStateChange> filter = c -> true;
        private int capacity = 100;
        private long closeTimeoutMillis = 5_000;

        private Builder(AlertSink sink) {
            this.sink = sink;
        }

        /** Only changes this accepts are sent; default all. */
        public Builder only(Predicate<? super HttpStateChange> v) {
            filter = Objects.requireNonNull(v, "filter");
            return this;
        }

        /**
         * Changes that may wait for the sink (>= 1); default 100.
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder capacity(int v) {
            if (v < 1) {
                throw new IllegalArgumentException("capacity must be >= 1, was " + v);
            }
            capacity = v;
            return this;
        }

        /**
         * How long {@link AlertNotifier#close()} waits for queued notifications; default 5 s.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder closeTimeout(java.time.Duration v) {
            if (v.isNegative()) {
                throw new IllegalArgumentException("closeTimeout must not be negative, was " + v);
            }
            closeTimeoutMillis = v.toMillis();
            return this;
        }

        /** Starts the notifier's thread lazily (on the first change). */
        public AlertNotifier build() {
            return new AlertNotifier(this);
        }
    }
}

package dev.redeye;

import dev.redeye.api.OperationNames;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every store error of a breaker goes: the operation's {@code storeErrors} metric, one WARN line at most
 * every 10 s (by the breaker's clock), and the user's {@code onStoreError} listener. Never throws.
 */
final class StoreErrors {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    static final long LOG_INTERVAL_MILLIS = 10_000;

    private final Clock clock;
    private final BiConsumer<String, Throwable> listener;
    private final AtomicLong lastLog = new AtomicLong(Long.MIN_VALUE);

    StoreErrors(Clock clock, BiConsumer<String, Throwable> listener) {
        this.clock = clock;
        this.listener = listener;
    }

    /** A store error while serving {@code e}: counted, logged (rate-limited) and reported. */
    void report(OperationState e, Throwable ex) {
        e.storeErrors.increment();
        reportUncounted(e.name, ex);
    }

    /** A store error for an operation this breaker holds no entry for (evicted, or never used). */
    void reportUncounted(String operation, Throwable ex) {
        long now = clock.millis();
        long last = lastLog.get();
        if ((last == Long.MIN_VALUE || now - last >= LOG_INTERVAL_MILLIS) && lastLog.compareAndSet(last, now)) {
            LOG.warn("store error for operation '{}' (logged at most every {} s): {}",
                    OperationNames.abbreviate(operation), LOG_INTERVAL_MILLIS / 1000, ex.toString());
        }
        BiConsumer<String, Throwable> l = listener;
        if (l != null) {
            try {
                l.accept(operation, ex);
            } catch (RuntimeException le) {
                LOG.warn("onStoreError listener threw", le);
            }
        }
    }
}

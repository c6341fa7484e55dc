package dev.redeye;

import dev.redeye.api.OperationNames;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every store error of a breaker goes: the operation's {@code storeErrors} metric, one WARN line at most
 * every 10 s (by the breaker's ticker), and the user's {@code onStoreError} listener. Never throws.
 */
final class StoreErrors {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    static final long LOG_INTERVAL_MILLIS = 10_000;

    private final LogLimiter logLimiter;
    private final BiConsumer<String, Throwable> listener;

    /**
     * Whether {@code t}, thrown by a store, is the store's failure, handled under the store error policy: every
     * {@code Throwable} but a {@link VirtualMachineError} (the JVM's own, which no policy can handle). Drivers
     * throw checked exceptions sneakily and fail class loading at run time; all of that is the store's.
     */
    static boolean isStoreError(Throwable t) {
        return !(t instanceof VirtualMachineError);
    }

    /**
     * {@code t} itself if it is a store error ({@link #isStoreError}); a {@link VirtualMachineError} is rethrown.
     * For the {@code catch (Throwable t)} around a store call: {@code handle(StoreErrors.storeError(t))}.
     */
    static Throwable storeError(Throwable t) {
        if (t instanceof VirtualMachineError) {
            throw (VirtualMachineError) t;
        }
        return t;
    }

    StoreErrors(Monotonic time, BiConsumer<String, Throwable> listener) {
        this.logLimiter = new LogLimiter(time, LOG_INTERVAL_MILLIS);
        this.listener = listener;
    }

    /** A store error while serving {@code e}: counted, logged (rate-limited) and reported. */
    void report(OperationState e, Throwable ex) {
        e.storeErrors.increment();
        reportUncounted(e.name, ex);
    }

    /** A store error for an operation this breaker holds no entry for (evicted, or never used). */
    void reportUncounted(String operation, Throwable ex) {
        if (logLimiter.due()) {
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

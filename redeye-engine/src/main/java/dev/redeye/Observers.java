package dev.redeye;

import dev.redeye.CircuitBreakerObserver.CallOutcome;
import dev.redeye.CircuitBreakerObserver.StoreOperation;
import dev.redeye.CircuitBreakerObserver.TrialOutcome;
import dev.redeye.api.TransitionEvent;
import java.time.Clock;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The observers of one breaker, and the one place that calls them: each call is guarded, so an observer that
 * throws is logged (at most every 10 s by the breaker's clock) and never reaches the breaker's caller.
 *
 * <p>The registered observers live in an immutable {@link Set} swapped on add and remove; the hot path reads
 * {@link #current()} once (one volatile read) and does nothing more when it is null.
 */
final class Observers {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    private final Clock clock;
    private final AtomicLong lastLog = new AtomicLong(Long.MIN_VALUE);
    private volatile Set current;

    Observers(Clock clock) {
        this.clock = clock;
    }

    /** The observers now, or null when there is none (the common case). */
    Set current() {
        return current;
    }

    /** @return whether it was added (false if already registered) */
    synchronized boolean add(CircuitBreakerObserver o) {
        Objects.requireNonNull(o, "observer");
        CircuitBreakerObserver[] now = current == null ? new CircuitBreakerObserver[0] : current.all;
        for (CircuitBreakerObserver x : now) {
            if (x == o) {
                return false;
            }
        }
        CircuitBreakerObserver[] next = Arrays.copyOf(now, now.length + 1);
        next[now.length] = o;
        current = new Set(next);
        return true;
    }

    /** @return whether it was registered */
    synchronized boolean remove(CircuitBreakerObserver o) {
        if (current == null) {
            return false;
        }
        CircuitBreakerObserver[] now = current.all;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == o) {
                CircuitBreakerObserver[] next = new CircuitBreakerObserver[now.length - 1];
                System.arraycopy(now, 0, next, 0, i);
                System.arraycopy(now, i + 1, next, i, now.length - i - 1);
                current = next.length == 0 ? null : new Set(next);
                return true;
            }
        }
        return false;
    }

    private void threw(CircuitBreakerObserver o, String method, RuntimeException ex) {
        long now = clock.millis();
        long last = lastLog.get();
        if ((last == Long.MIN_VALUE || now - last >= StoreErrors.LOG_INTERVAL_MILLIS)
                && lastLog.compareAndSet(last, now)) {
            LOG.warn("observer or listener {} threw in {} (logged at most every {} s); the call is not affected",
                    o, method, StoreErrors.LOG_INTERVAL_MILLIS / 1000, ex);
        }
    }

    /** An immutable set of observers and the call-timing rate they asked for. */
    final class Set {
        final CircuitBreakerObserver[] all;
        /** -1: time no call; 0: every call; else a mask: time a call when a random int's masked bits are 0. */
        final int timingMask;
        /** The rate the mask stands for, told to observers with each timed call. */
        final int oneIn;

        Set(CircuitBreakerObserver[] all) {
            this.all = all;
            int min = 0;
            for (CircuitBreakerObserver o : all) {
                int n;
                try {
                    n = o.callTimingOneIn();
                } catch (RuntimeException ex) {
                    threw(o, "callTimingOneIn", ex);
                    n = 0;
                }
                if (n > 0 && (min == 0 || n < min)) {
                    min = n;
                }
            }
            if (min == 0) {
                timingMask = -1;
                oneIn = 0;
            } else {
                int pow = min == 1 ? 1 : Integer.highestOneBit(min - 1) << 1; // rounded up to a power of two
                if (pow <= 0) {
                    pow = 1 << 30;
                }
                timingMask = pow - 1;
                oneIn = pow;
            }
        }

        /** Whether to time this call: per thread and allocation-free ({@link ThreadLocalRandom}). */
        boolean timeThisCall() {
            int m = timingMask;
            return m == 0 || (m > 0 && (ThreadLocalRandom.current().nextInt() & m) == 0);
        }

        void callTimed(OperationState e, CallOutcome outcome, long nanos) {
            for (CircuitBreakerObserver o : all) {
                try {
                    o.callTimed(e, outcome, nanos, oneIn);
                } catch (RuntimeException ex) {
                    threw(o, "callTimed", ex);
                }
            }
        }

        /** For events off the healthy path, where the capturing lambda's allocation does not matter. */
        private void each(String method, Consumer<CircuitBreakerObserver> call) {
            for (CircuitBreakerObserver o : all) {
                try {
                    call.accept(o);
                } catch (RuntimeException ex) {
                    threw(o, method, ex);
                }
            }
        }

        void operationAdded(OperationState e) {
            each("operationAdded", o -> o.operationAdded(e));
        }

        void operationEvicted(OperationState e) {
            each("operationEvicted", o -> o.operationEvicted(e));
        }

        void callRejected(OperationState e, RuntimeException rejection) {
            each("callRejected", o -> o.callRejected(e, rejection));
        }

        void errorIgnored(OperationState e, Throwable error) {
            each("errorIgnored", o -> o.errorIgnored(e, error));
        }

        void trialEnded(OperationState e, TrialOutcome outcome) {
            each("trialEnded", o -> o.trialEnded(e, outcome));
        }

        void storeOperation(StoreOperation op, boolean failed, long nanos) {
            for (CircuitBreakerObserver o : all) {
                try {
                    o.storeOperation(op, failed, nanos);
                } catch (RuntimeException ex) {
                    threw(o, "storeOperation", ex);
                }
            }
        }

        void feedEvent(TransitionEvent ev) {
            each("feedEvent", o -> o.feedEvent(ev));
        }

        void feedGap() {
            each("feedGap", CircuitBreakerObserver::feedGap);
        }
    }
}

package dev.redeye;

import dev.redeye.CircuitBreakerObserver.CallOutcome;
import dev.redeye.CircuitBreakerObserver.CallTiming;
import dev.redeye.CircuitBreakerObserver.TrialOutcome;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.StoreOperation;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The observers of one breaker, and the one place that calls them: each call is guarded, so an observer that
 * throws is logged (at most every 10 s by the breaker's ticker) and never reaches the breaker's caller.
 *
 * <p>The registered observers live in an immutable {@link Set} swapped on add and remove; the hot path reads
 * {@link #current()} once (one volatile read) and does nothing more when it is null. Sampled call timing
 * holds the JVM-wide {@link TimingTicker} while such an observer is registered.
 */
final class Observers {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    private final LogLimiter logLimiter;
    private volatile Set current;
    /** The call timing each registered observer asked for, read once at registration (same order as the set). */
    private CallTiming[] timings = new CallTiming[0];

    Observers(Monotonic time) {
        this.logLimiter = new LogLimiter(time, StoreErrors.LOG_INTERVAL_MILLIS);
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
        CallTiming t;
        try {
            t = Objects.requireNonNullElse(o.callTiming(), CallTiming.NONE);
        } catch (RuntimeException ex) {
            threw(o, "callTiming", ex);
            t = CallTiming.NONE;
        }
        if (t == CallTiming.SAMPLED) {
            TimingTicker.acquire();
        }
        CircuitBreakerObserver[] next = Arrays.copyOf(now, now.length + 1);
        next[now.length] = o;
        timings = Arrays.copyOf(timings, timings.length + 1);
        timings[next.length - 1] = t;
        current = new Set(next, timings);
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
                CallTiming[] nextTimings = new CallTiming[next.length];
                System.arraycopy(timings, 0, nextTimings, 0, i);
                System.arraycopy(timings, i + 1, nextTimings, i, timings.length - i - 1);
                if (timings[i] == CallTiming.SAMPLED) {
                    TimingTicker.release();
                }
                timings = nextTimings;
                current = next.length == 0 ? null : new Set(next, nextTimings);
                return true;
            }
        }
        return false;
    }

    /** Unregisters every observer (the breaker closes): the ticker is not held for them any longer. */
    synchronized void removeAll() {
        for (CallTiming t : timings) {
            if (t == CallTiming.SAMPLED) {
                TimingTicker.release();
            }
        }
        timings = new CallTiming[0];
        current = null;
    }

    private void threw(CircuitBreakerObserver o, String method, RuntimeException ex) {
        if (logLimiter.due()) {
            LOG.warn("observer or listener {} threw in {} (logged at most every {} s); the call is not affected",
                    o, method, StoreErrors.LOG_INTERVAL_MILLIS / 1000, ex);
        }
    }

    /** An immutable set of observers and the call timing they asked for. */
    final class Set {
        final CircuitBreakerObserver[] all;
        final boolean everyCall;
        final boolean sampled;

        Set(CircuitBreakerObserver[] all, CallTiming[] timings) {
            this.all = all;
            boolean every = false;
            boolean some = false;
            for (CallTiming t : timings) {
                every |= t == CallTiming.EVERY_CALL;
                some |= t == CallTiming.SAMPLED;
            }
            this.everyCall = every;
            this.sampled = some && !every;
        }

        /**
         * Whether to time this call of {@code e}: every call, or under sampling the first call of the
         * operation in each ticker epoch. Allocation-free; the racy epoch write may let two concurrent calls
         * both be timed, which the weights absorb.
         */
        boolean timeThisCall(OperationState e) {
            if (everyCall) {
                return true;
            }
            if (!sampled) {
                return false;
            }
            int ep = TimingTicker.epoch;
            if (e.timedEpoch == ep) {
                return false;
            }
            e.timedEpoch = ep;
            return true;
        }

        void callTimed(OperationState e, CallOutcome outcome, long nanos) {
            long weight = everyCall ? 1 : e.weightOfTimedCall(outcome);
            for (CircuitBreakerObserver o : all) {
                try {
                    o.callTimed(e, outcome, nanos, weight);
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

        void stateChanged(TransitionEvent ev) {
            each("stateChanged", o -> o.stateChanged(ev));
        }

        void feedEvent(TransitionEvent ev) {
            each("feedEvent", o -> o.feedEvent(ev));
        }

        void outlier(Outlier outlier) {
            each("outlier", o -> o.outlier(outlier));
        }

        void feedGap() {
            each("feedGap", CircuitBreakerObserver::feedGap);
        }
    }
}

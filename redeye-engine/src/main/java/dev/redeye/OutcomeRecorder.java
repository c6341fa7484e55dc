package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.time.Clock;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Outcome recording: decides what a finished call was (a success, a failure, or not a dependency outcome at
 * all) and records it, best-effort.
 *
 * <h2>What counts</h2>
 * <ul>
 * <li>A call the engine timed out ({@code callTimeout}) is a failure, whatever the predicates say.</li>
 * <li>An interruption or a cancellation is not recorded at all: {@link InterruptedException},
 * {@link CancellationException}, {@link ClosedByInterruptException}, an {@link InterruptedIOException} other
 * than {@link SocketTimeoutException} (a real timeout of the dependency), any exception caused by one of
 * these (searched through the cause chain, so a library's wrapper tells the same), or any exception thrown
 * by a sync call while its thread is interrupted. A rolling deploy interrupting in-flight calls must not write failures
 * to a shared store and open the fleet's breaker. Such a call counts in {@link Metrics#calls()} only; a trial
 * ended this way gives its claim back and leaves the state as it is.</li>
 * <li>Any other exception is a failure if {@code recordFailure} says so (a predicate that throws counts it as
 * a failure); an exception that does not count is a success. A returned result is a failure if
 * {@code recordResult} says so.</li>
 * </ul>
 *
 * <h2>Writes</h2>
 * Writes are best-effort: a store error is counted, logged (rate-limited) and reported, never thrown, and never
 * overrides the call's own result. Nothing is written for a success with nothing to clear (the healthy path:
 * no clock read, no allocation). A trial's outcome carries the version of its open period. A trial failure that
 * could not be written backs this instance off for the window its reopen would have started (see
 * {@link StateViews#backOff}), so that the next trial does not follow it at once. Store work runs
 * with the thread's interrupt status cleared and restores it afterwards, so a store whose I/O reacts to
 * interrupts still gets its write through.
 */
final class OutcomeRecorder {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    /**
     * What a finished call was, for the breaker: a success, a failure, an exception {@code recordFailure}
     * declined (IGNORED: recorded as a success, counted as ignored), or nothing to record (an interrupt, a
     * cancellation, a permit released unused: counted as ignored).
     */
    enum Verdict {
        SUCCESS, FAILURE, IGNORED, NOT_RECORDED;

        /** What an observer calls it. */
        CircuitBreakerObserver.CallOutcome outcome() {
            return this == SUCCESS ? CircuitBreakerObserver.CallOutcome.SUCCESSFUL
                    : this == FAILURE ? CircuitBreakerObserver.CallOutcome.FAILED
                    : CircuitBreakerObserver.CallOutcome.IGNORED;
        }

        /** Whether the store records it as a success. */
        boolean recordsSuccess() {
            return this == SUCCESS || this == IGNORED;
        }
    }

    private final Clock clock;
    private final Monotonic time;
    private final Policy policy;
    /** Consecutive or leaky: a success with no failures counted changes nothing, so it is not written. */
    private final boolean countsFailures;
    private final StoreAccess access;
    private final StateViews views;
    private final Trials trials;
    private final StoreErrors errors;
    private final Predicate<? super Throwable> failurePredicate;
    private final Predicate<Object> resultPredicate;
    private final Consumer<TransitionEvent> stateListener;
    private final Observers observers;
    private final StateViews.StoreCall<StateChange> recordSuccess;
    private final StateViews.StoreCall<StateChange> recordFailure;
    private final StateViews.StoreCall<StateChange> recordSlowSuccess;
    private final StateViews.StoreCall<StateChange> recordSlowFailure;
    /** The in-process store in local mode (whose sliding windows count in place), null in distributed mode. */
    private final InMemoryStore local;
    /** A time window: every outcome rolls it by the clock. */
    private final boolean timeWindow;
    /** The slow-call deadlines; null unless a sliding-window breaker has a slow-call duration threshold. */
    private final SlowCalls slowCalls;
    /** This instance's outlier trips under a quorum, else null. */
    private final Outliers outliers;
    private final StateViews.Note<StateChange> afterWrite = this::afterWrite;
    /** The batches of outcomes under write batching, else null. */
    private final OutcomeBatcher batcher;

    /**
     * @param batchMillis the write batching delay ({@code recordBatching}), 0 without batching
     */
    OutcomeRecorder(Clock clock, Monotonic time, Policy policy, StoreAccess access, StateViews views, Trials trials,
            StoreErrors errors, Predicate<? super Throwable> failurePredicate, Predicate<Object> resultPredicate,
            Consumer<TransitionEvent> stateListener, Observers observers, long slowCallMillis, InMemoryStore local,
            String instance, Outliers outliers, long batchMillis) {
        this.outliers = outliers;
        this.clock = clock;
        this.time = time;
        this.policy = policy;
        this.countsFailures = policy.strategy().countsFailures();
        this.access = access;
        this.views = views;
        this.trials = trials;
        this.errors = errors;
        this.failurePredicate = failurePredicate;
        this.resultPredicate = resultPredicate;
        this.stateListener = stateListener;
        this.observers = observers;
        // Under a quorum each outcome is attributed to this instance (an operation per write); else the shared
        // operations, nothing allocated.
        this.recordSuccess = outcome(access, policy, true, false, instance);
        this.recordFailure = outcome(access, policy, false, false, instance);
        this.recordSlowSuccess = outcome(access, policy, true, true, instance);
        this.recordSlowFailure = outcome(access, policy, false, true, instance);
        this.local = local;
        this.timeWindow = policy.strategy() == Strategy.SLIDING_WINDOW
                && policy.slidingWindowType() == SlidingWindowType.TIME_BASED;
        this.slowCalls = slowCallMillis > 0 ? new SlowCalls(clock, time, slowCallMillis, this, access, policy, errors)
                : null;
        this.batcher = batchMillis > 0 ? new OutcomeBatcher(clock, time, policy, instance, this, batchMillis) : null;
    }

    /** The write batching, or null without {@code recordBatching} (for tests). */
    OutcomeBatcher batcher() {
        return batcher;
    }

    /**
     * Writes the outcomes of {@code e} that write batching holds, if any, before this instance reads or changes the
     * operation otherwise (see {@link OutcomeBatcher}). Never throws.
     */
    void flush(OperationState e) {
        if (batcher != null) {
            batcher.flush(e);
        }
    }

    /** The write of one plain outcome, attributed to {@code instance} when it is not null. */
    private static StateViews.StoreCall<StateChange> outcome(StoreAccess access, Policy policy, boolean success,
            boolean slow, String instance) {
        if (instance != null) {
            return (e, now) -> access.update(e.name, AtomicOperation.outcome(success, slow, instance), policy, now);
        }
        AtomicOperation op = AtomicOperation.outcome(success, slow);
        return (e, now) -> access.update(e.name, op, policy, now);
    }

    /**
     * The token an admitted call runs under: {@code token}, or a {@link SlowCalls.Watch} around it when slow calls
     * are judged while they run.
     */
    Object watch(OperationState e, Object token) {
        return slowCalls == null ? token : slowCalls.watch(e, token);
    }

    /** The slow-call watches, or null without a {@code slowCallDurationThreshold} (for tests). */
    SlowCalls slowCalls() {
        return slowCalls;
    }

    /** Stops the slow-call deadlines, if any, then writes every batch of outcomes held, if any. */
    void close() {
        try {
            if (slowCalls != null) {
                slowCalls.close();
            }
        } finally {
            if (batcher != null) {
                batcher.close();
            }
        }
    }

    /** How deep a cause chain is searched: deeper than any wrapping seen in practice, and a cycle ends. */
    private static final int MAX_CAUSES = 16;

    /**
     * Whether {@code t} is an interruption or a cancellation rather than a dependency's failure: it, or an
     * exception in its cause chain (a client library wrapping the interrupt it saw, a {@code CompletionException}
     * or {@code ExecutionException} around a cancellation), is one of the exceptions that report one.
     */
    static boolean isInterruption(Throwable t) {
        return reported(t, true) != null;
    }

    /**
     * Whether the thread's interrupt status must be set again after a call ended with {@code t}: the
     * exceptions that report an interrupt clear the status when they are thrown, also when a library wraps
     * them afterwards; the engine does not swallow the interrupt. A cancellation alone does not.
     */
    static boolean restoresInterrupt(Throwable t) {
        return reported(t, false) != null;
    }

    /** The first exception of {@code t}'s cause chain that reports an interrupt (or, if asked, a cancellation). */
    private static Throwable reported(Throwable t, boolean cancellation) {
        Throwable c = t;
        for (int i = 0; c != null && i < MAX_CAUSES; i++) {
            if (c instanceof InterruptedException || c instanceof ClosedByInterruptException
                    || (c instanceof InterruptedIOException && !(c instanceof SocketTimeoutException))
                    || (cancellation && c instanceof CancellationException)) {
                return c;
            }
            Throwable next = c.getCause();
            c = next == c ? null : next;
        }
        return null;
    }

    /**
     * A call that threw {@code t}. Never throws.
     *
     * @param timedOut    the engine timed the call out
     * @param onCallThread the call ran on this thread (a sync call), so its interrupt status tells
     * @return what the call was
     */
    Verdict afterThrow(OperationState e, Object permit, Throwable t, boolean timedOut, boolean onCallThread) {
        Verdict v;
        if (timedOut) {
            v = Verdict.FAILURE;
        } else if (isInterruption(t) || (onCallThread && Thread.currentThread().isInterrupted())) {
            v = Verdict.NOT_RECORDED;
        } else {
            v = failed(e, t);
        }
        record(e, permit, v);
        if (v != Verdict.FAILURE) {
            Observers.Set o = observers.current();
            if (o != null) {
                o.errorIgnored(e, t);
            }
        }
        return v;
    }

    /**
     * A call that returned {@code result}; {@code slow}: it took longer than {@code callTimeout}.
     *
     * @return what the call was
     */
    Verdict afterReturn(OperationState e, Object permit, Object result, boolean slow) {
        Predicate<Object> p = resultPredicate;
        Verdict v = Verdict.SUCCESS;
        if (slow) {
            v = Verdict.FAILURE;
        } else if (p != null) {
            try {
                v = p.test(result) ? Verdict.FAILURE : Verdict.SUCCESS;
            } catch (RuntimeException ex) {
                LOG.warn("recordResult predicate threw for operation '{}'; counting the call as a failure",
                        OperationNames.abbreviate(e.name), ex);
                v = Verdict.FAILURE;
            }
        }
        record(e, permit, v);
        return v;
    }

    private Verdict failed(OperationState e, Throwable t) {
        try {
            return failurePredicate.test(t) ? Verdict.FAILURE : Verdict.IGNORED;
        } catch (RuntimeException ex) {
            LOG.warn("recordFailure predicate threw for operation '{}'; counting the call as a failure",
                    OperationNames.abbreviate(e.name), ex);
            return Verdict.FAILURE;
        }
    }

    /** Counts and records one outcome; never throws (writes are best-effort). */
    void record(OperationState e, Object permit, Verdict v) {
        if (v == Verdict.SUCCESS) {
            e.successes.increment();
        } else if (v == Verdict.FAILURE) {
            e.failures.increment();
        } else {
            e.ignored.increment();
        }
        if (permit instanceof SlowCalls.Watch) {
            watchedOutcome(e, (SlowCalls.Watch) permit, v);
            return;
        }
        if (permit instanceof Trials.Trial) {
            trialOutcome(e, (Trials.Trial) permit, v);
            return;
        }
        if (v == Verdict.NOT_RECORDED) {
            return;
        }
        if (v.recordsSuccess() && countsFailures
                && (permit == Gate.UNKNOWN || ((BreakerState) permit).failures() == 0)
                && (batcher == null || !OutcomeBatcher.holds(e))) {
            return; // nothing to clear: the healthy path writes nothing and reads no clock
        }
        if (permit != Gate.UNKNOWN && ((BreakerState) permit).effectiveMode(policy) == BreakerMode.DISABLED) {
            return; // a disabled breaker records nothing
        }
        recordOutcome(e, v.recordsSuccess(), false, permit);
    }

    /**
     * Records a plain outcome: in place in local mode when that is all it changes, into the operation's batch under
     * write batching, else through the store.
     *
     * @param permit what the call was admitted under (a {@link BreakerState} when known), for the batch's check
     */
    private void recordOutcome(OperationState e, boolean success, boolean slow, Object permit) {
        if (local != null && inPlace(e, success, slow)) {
            return;
        }
        if (batcher != null) {
            batcher.add(e, success, slow, permit);
            return;
        }
        writeQuietly(e, slow ? (success ? recordSlowSuccess : recordSlowFailure) : recordCall(success));
    }

    /** {@link InMemoryStore#recordInPlace}; false if it could not (the caller then writes as usual). */
    private boolean inPlace(OperationState e, boolean success, boolean slow) {
        try {
            // a count window's success needs no time; a failure sets lastFailureAt, a time window rolls by it
            long now = success && !timeWindow ? 0L : clock.millis();
            return local.recordInPlace(e.name, !success, slow, policy, now);
        } catch (StoreException closedMeanwhile) {
            return false; // the write that follows reports it
        }
    }

    /** The end of a call watched for slowness: writes what its deadline did not (see {@link SlowCalls}). */
    private void watchedOutcome(OperationState e, SlowCalls.Watch w, Verdict v) {
        if (v == Verdict.NOT_RECORDED) {
            slowCalls.cancel(w);
            return;
        }
        boolean success = v.recordsSuccess();
        long tick = time.nanos();
        switch (slowCalls.end(w, !success)) {
            case HANDED_OVER:
                return;
            case NOTHING:
                break;
            case SLOT_FAILED:
                writeQuietly(e, w.slotFailed());
                break;
            default:
                recordOutcome(e, success, w.slowAt(tick), Gate.UNKNOWN);
        }
        slowCalls.free(w);
    }

    /**
     * Best-effort {@code operation} (not batched: the outcomes held for {@code e} are written first): see
     * {@link #writeQuietly(OperationState, StateViews.StoreCall)}.
     */
    void writeQuietly(OperationState e, AtomicOperation operation) {
        flush(e);
        writeQuietly(e, (x, now) -> access.update(x.name, operation, policy, now));
    }

    /** One batch of outcomes, best-effort; the change it made, or null if the write failed (reported). */
    StateChange writeBatch(OperationState e, AtomicOperation batch) {
        return writeQuietly(e, (x, now) -> access.update(x.name, batch, policy, now));
    }

    /**
     * One best-effort write of an outcome, now: a store error is reported, never thrown; the thread's interrupt
     * status is cleared for the write and restored after it.
     *
     * @return the change, or null if the write failed
     */
    private StateChange writeQuietly(OperationState e, StateViews.StoreCall<StateChange> call) {
        boolean interrupted = Thread.interrupted();
        try {
            long now = clock.millis();
            long tick = time.nanos();
            return write(e, now, tick, call);
        } catch (StoreException ex) {
            errors.report(e, ex);
        } catch (Throwable ex) { // never in place of the call's own outcome; a VirtualMachineError goes on
            LOG.warn("recording an outcome of '{}' failed", OperationNames.abbreviate(e.name),
                    StoreErrors.storeError(ex));
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return null;
    }

    private void trialOutcome(OperationState e, Trials.Trial trial, Verdict v) {
        boolean interrupted = Thread.interrupted();
        try {
            if (v != Verdict.NOT_RECORDED) {
                flush(e); // the outcomes before the trial's reach the store before it
                long now = clock.millis();
                long tick = time.nanos();
                boolean success = v.recordsSuccess();
                try {
                    write(e, now, tick, (x, n) -> access.trialOutcome(x.name, trial.version, success, policy, n));
                } catch (StoreException ex) {
                    errors.report(e, ex);
                    if (v == Verdict.FAILURE) {
                        views.backOff(e, trial.version, now, tick); // as if the reopen had been written
                    }
                    return;
                }
            }
        } catch (Throwable ex) { // never in place of the call's own outcome; a VirtualMachineError goes on
            LOG.warn("recording a trial outcome of '{}' failed", OperationNames.abbreviate(e.name),
                    StoreErrors.storeError(ex));
        } finally {
            try {
                trials.end(e, trial, v == Verdict.NOT_RECORDED ? CircuitBreakerObserver.TrialOutcome.RELEASED
                        : v == Verdict.FAILURE ? CircuitBreakerObserver.TrialOutcome.FAILED
                        : CircuitBreakerObserver.TrialOutcome.SUCCEEDED);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The store's record of one outcome, for {@link #write}; one per outcome, made once. */
    StateViews.StoreCall<StateChange> recordCall(boolean success) {
        return success ? recordSuccess : recordFailure;
    }

    /**
     * This instance's own write at stored time {@code now} (local time {@code tick}, read before the write),
     * through {@link StateViews#stamped}, then {@link #afterWrite}. An exception from the write propagates.
     */
    StateChange write(OperationState e, long now, long tick, StateViews.StoreCall<StateChange> call) {
        return views.stamped(e, now, tick, call, afterWrite);
    }

    /**
     * After this instance's own write: update the views and, for a transition, fire onStateChange and the
     * observers' stateChanged.
     */
    private void afterWrite(OperationState e, StateChange ch, long now, long tick, int stampBefore) {
        views.noteOwnWrite(e, ch.state(), tick, stampBefore);
        if (outliers != null) {
            outliers.afterWrite(e, ch.state(), tick);
        }
        if (ch.isTransition()) {
            Consumer<TransitionEvent> listener = stateListener;
            Observers.Set o = observers.current();
            if (listener == null && o == null) {
                return;
            }
            TransitionEvent event = ch.toEvent(e.name, policy, now);
            if (listener != null) {
                try {
                    listener.accept(event);
                } catch (RuntimeException ex) {
                    LOG.warn("onStateChange listener threw for operation '{}'", OperationNames.abbreviate(e.name), ex);
                }
            }
            if (o != null) {
                o.stateChanged(event);
            }
        }
    }
}

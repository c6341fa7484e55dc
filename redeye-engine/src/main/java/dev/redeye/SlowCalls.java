package dev.redeye;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.time.Clock;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slow calls judged while they run ({@code slowCallDurationThreshold}, sliding-window strategy). Every admitted
 * call that is not a trial runs under a {@link Watch}: a deadline at the threshold on one daemon thread per
 * breaker ("redeye-slow-calls", no thread per call), started with the first watched call and stopped by
 * {@link #close()}. A call still running at its deadline is counted there and then as a slow success
 * ({@link AtomicOperation#slowCall()}), which returns where in the window it went; when the call then ends,
 * a success writes nothing more and a failure marks that slot failed ({@link AtomicOperation#slowCallFailed},
 * fenced by the version), so the call is counted once. A call that ends before its deadline is recorded when it
 * ends, as slow if it took at least the threshold (a deadline a little late by the scheduler). A call that ends
 * in an interrupt or a cancellation (not recorded, see {@link OutcomeRecorder}) cancels its deadline; if the
 * deadline had already counted it, it stays counted as a slow success: it did run that long.
 *
 * <p>Each watched call's two ends (its deadline and its completion) meet in one {@link AtomicInteger}: whichever
 * comes second does what is left, so a completion racing the deadline's write neither waits for the store nor
 * is lost. The deadline's writes run on the watch thread; a store error there is reported like any outcome
 * write's, and the call is then recorded when it ends, as if no deadline had passed.
 */
final class SlowCalls implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);

    private static final int RUNNING = 0;
    /** The deadline passed and its write is under way. */
    private static final int RECORDING = 1;
    /** The deadline's write counted the call in the window: {@link Watch#slot} and {@link Watch#version} say where. */
    private static final int COUNTED = 2;
    /** The deadline's write did not count it (open, disabled, another strategy, a store error). */
    private static final int NOT_COUNTED = 3;
    /** Ended before its deadline. */
    private static final int ENDED = 4;
    private static final int ENDED_OK_WHILE_RECORDING = 5;
    private static final int ENDED_FAILED_WHILE_RECORDING = 6;

    /** What the completion of a watched call still has to write. */
    enum Left {
        /** Record the outcome as usual; {@code slow} says whether it counts as slow. */
        OUTCOME,
        /** Nothing: the deadline counted it as a slow success, or will finish the job. */
        NOTHING,
        /** Mark the counted slot failed. */
        SLOT_FAILED
    }

    private final Clock clock;
    private final Monotonic time;
    private final long thresholdMillis;
    private final long thresholdNanos;
    private final OutcomeRecorder recorder;
    private final StoreAccess access;
    private final Policy policy;
    private final StoreErrors errors;
    private final ScheduledThreadPoolExecutor executor;

    SlowCalls(Clock clock, Monotonic time, long thresholdMillis, OutcomeRecorder recorder, StoreAccess access,
            Policy policy, StoreErrors errors) {
        this.clock = clock;
        this.time = time;
        this.thresholdMillis = thresholdMillis;
        this.thresholdNanos = Monotonic.ofMillis(thresholdMillis);
        this.recorder = recorder;
        this.access = access;
        this.policy = policy;
        this.errors = errors;
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "redeye-slow-calls");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * The token a call admitted under {@code token} runs under: a {@link Watch} around it, or {@code token} itself
     * for a trial (judged by its own outcome) or once the breaker is closed.
     */
    Object watch(OperationState e, Object token) {
        if (token instanceof Trials.Trial
                || (token instanceof BreakerState && ((BreakerState) token).effectiveMode(policy) == BreakerMode.DISABLED)) {
            return token;
        }
        Watch w = new Watch(e, token, time.nanos());
        try {
            w.deadline = executor.schedule(w, thresholdMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            return token;
        }
        return w;
    }

    /** Whether a call that ran {@code nanos} is slow. */
    boolean isSlow(long nanos) {
        return nanos >= thresholdNanos;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** One watched call. */
    final class Watch implements Runnable {
        final OperationState e;
        /** The token the gate admitted the call under. */
        final Object token;
        final long startTick;
        final AtomicInteger phase = new AtomicInteger(RUNNING);
        volatile ScheduledFuture<?> deadline;
        /** Set before {@link #phase} becomes {@link #COUNTED}. */
        private long slot;
        private long version;

        Watch(OperationState e, Object token, long startTick) {
            this.e = e;
            this.token = token;
            this.startTick = startTick;
        }

        /** The call ended ({@code failed}, or a success): what its completion still has to write. */
        Left end(boolean failed) {
            if (phase.compareAndSet(RUNNING, ENDED)) {
                ScheduledFuture<?> d = deadline;
                if (d != null) {
                    d.cancel(false);
                }
                return Left.OUTCOME;
            }
            if (phase.compareAndSet(RECORDING, failed ? ENDED_FAILED_WHILE_RECORDING : ENDED_OK_WHILE_RECORDING)) {
                return Left.NOTHING; // the deadline's write finishes the job
            }
            return phase.get() == COUNTED ? (failed ? Left.SLOT_FAILED : Left.NOTHING) : Left.OUTCOME;
        }

        /** The call ended before its deadline was written, or was not recorded at all: the deadline is off. */
        void cancel() {
            if (phase.compareAndSet(RUNNING, ENDED)) {
                ScheduledFuture<?> d = deadline;
                if (d != null) {
                    d.cancel(false);
                }
            }
        }

        /** Whether the call ran at least the threshold by local time {@code tick}. */
        boolean slowAt(long tick) {
            return isSlow(tick - startTick);
        }

        /** The write that marks this call's slot failed. */
        AtomicOperation slotFailed() {
            return AtomicOperation.slowCallFailed(slot, version);
        }

        /** The deadline: count the call as a slow success now. Runs on the watch thread; never throws. */
        @Override
        public void run() {
            if (!phase.compareAndSet(RUNNING, RECORDING)) {
                return;
            }
            boolean counted = false;
            try {
                StateChange ch = recorder.write(e, clock.millis(), time.nanos(),
                        (x, n) -> access.update(x.name, AtomicOperation.slowCall(), policy, n));
                BreakerState s = ch.state();
                if (ch.changed() && s.window() != null) {
                    slot = s.window().position();
                    version = s.version();
                    counted = true;
                }
            } catch (StoreException ex) {
                errors.report(e, ex);
            } catch (Throwable ex) { // storeError rethrows a VirtualMachineError
                LOG.warn("recording a slow call of '{}' failed", OperationNames.abbreviate(e.name),
                        StoreErrors.storeError(ex));
            }
            if (phase.compareAndSet(RECORDING, counted ? COUNTED : NOT_COUNTED)) {
                return;
            }
            // the call ended while the write was under way: do what its completion left
            boolean failed = phase.get() == ENDED_FAILED_WHILE_RECORDING;
            if (counted) {
                if (failed) {
                    recorder.writeQuietly(e, slotFailed());
                }
            } else {
                recorder.writeQuietly(e, AtomicOperation.outcome(!failed, true));
            }
        }
    }
}

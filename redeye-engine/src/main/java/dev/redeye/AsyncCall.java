package dev.redeye;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One admitted async call: the user's stage, the future handed back, and at most one of three endings, each
 * recorded once: the stage completes (its outcome; a cancelled stage is not a failure), the call timeout
 * fires (a failure: the returned future completes with {@link TimeoutException} and the user's stage is
 * cancelled), or the caller cancels the returned future (not a failure; the user's stage is cancelled).
 * The returned future completes after the outcome is recorded.
 */
final class AsyncCall<T> {
    private final OperationState e;
    private final Object permit;
    private final CompletionStage<T> stage;
    private final OutcomeRecorder recorder;
    private final Monotonic time;
    private final Observers.Set timing;
    private final long startNanos;
    private final CompletableFuture<T> out = new CompletableFuture<>();
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile ScheduledFuture<?> deadline;

    /**
     * @param timing     the observers to tell the call's duration, null if this call is not timed
     * @param startNanos when the call started (the breaker's local time), if timed
     */
    AsyncCall(OperationState e, Object permit, CompletionStage<T> stage, OutcomeRecorder recorder, Monotonic time,
            Observers.Set timing, long startNanos) {
        this.e = e;
        this.permit = permit;
        this.stage = stage;
        this.recorder = recorder;
        this.time = time;
        this.timing = timing;
        this.startNanos = startNanos;
    }

    private void timed(OutcomeRecorder.Verdict v) {
        if (timing != null) {
            timing.callTimed(e, v.outcome(), time.nanos() - startNanos);
        }
    }

    /**
     * Wires the endings and returns the future for the caller.
     *
     * @param timer         null without a call timeout
     * @param timeoutMillis the call timeout
     */
    CompletableFuture<T> start(CallTimer timer, long timeoutMillis) {
        if (timer != null) {
            deadline = timer.schedule(() -> timedOut(timeoutMillis), timeoutMillis);
        }
        stage.whenComplete(this::stageCompleted);
        out.whenComplete((v, t) -> {
            if (out.isCancelled()) {
                cancelledByCaller();
            }
        });
        return out;
    }

    private void stageCompleted(T value, Throwable t) {
        if (!settled.compareAndSet(false, true)) {
            return;
        }
        cancelDeadline();
        Throwable cause = t == null ? null : unwrap(t);
        try {
            timed(cause == null ? recorder.afterReturn(e, permit, value, false)
                    : recorder.afterThrow(e, permit, cause, false, false));
        } finally {
            if (cause == null) {
                out.complete(value);
            } else {
                out.completeExceptionally(cause);
            }
        }
    }

    private void timedOut(long timeoutMillis) {
        if (!settled.compareAndSet(false, true)) {
            return;
        }
        try {
            recorder.record(e, permit, OutcomeRecorder.Verdict.FAILURE);
            timed(OutcomeRecorder.Verdict.FAILURE);
        } finally {
            cancelStage();
            out.completeExceptionally(new TimeoutException("callTimeout of " + timeoutMillis + " ms elapsed"));
        }
    }

    private void cancelledByCaller() {
        if (!settled.compareAndSet(false, true)) {
            return;
        }
        cancelDeadline();
        try {
            recorder.record(e, permit, OutcomeRecorder.Verdict.NOT_RECORDED);
            timed(OutcomeRecorder.Verdict.NOT_RECORDED);
        } finally {
            cancelStage();
        }
    }

    private void cancelDeadline() {
        ScheduledFuture<?> d = deadline;
        if (d != null) {
            d.cancel(false);
        }
    }

    /** Cancels the user's stage where it can be: a stage without a CompletableFuture view cannot. */
    private void cancelStage() {
        try {
            stage.toCompletableFuture().cancel(true);
        } catch (UnsupportedOperationException cannot) {
            // a stage that offers no CompletableFuture (a minimal stage) runs on; its outcome is ignored
        }
    }

    static Throwable unwrap(Throwable t) {
        return (t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null
                ? t.getCause()
                : t;
    }
}

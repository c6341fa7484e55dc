package dev.redeye;

import dev.redeye.OutcomeRecorder.Verdict;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Running guarded calls: {@code execute}, {@code executeAsync} and the permission API share one admission
 * ({@link #admit}: the gate, the counts, the rejection report) and one completion (the {@link OutcomeRecorder}
 * verdicts), so a call behaves the same whichever way it came in. What differs is only who sees the call end:
 * {@code execute} on its own thread (and bounds it with {@code callTimeout}), {@code executeAsync} through the
 * stage ({@link AsyncCall}), and a {@link Permit} when its holder completes it.
 *
 * <p>The healthy sync path allocates nothing: the admission token is the state the gate saw (no permit object
 * is made for {@code execute}); observers cost one volatile read, and under sampled timing one comparison,
 * unless the call is timed.
 */
final class Calls {
    private final Monotonic time;
    private final Gate gate;
    private final OutcomeRecorder recorder;
    private final Trials trials;
    private final CallTimer timer;
    private final long callTimeoutMillis;
    private final long callTimeoutNanos;
    private final Fallback defaultFallback;
    private final Observers observers;

    Calls(Monotonic time, Gate gate, OutcomeRecorder recorder, Trials trials, CallTimer timer, long callTimeoutMillis,
            Fallback defaultFallback, Observers observers) {
        this.time = time;
        this.gate = gate;
        this.recorder = recorder;
        this.trials = trials;
        this.timer = timer;
        this.callTimeoutMillis = callTimeoutMillis;
        this.callTimeoutNanos = Monotonic.ofMillis(callTimeoutMillis);
        this.defaultFallback = defaultFallback;
        this.observers = observers;
    }

    OutcomeRecorder recorder() {
        return recorder;
    }

    /**
     * The one admission of every call: the token the call runs under (see {@link Gate#admit}), counted in
     * {@code calls}; or the rejection, counted in {@code rejections}, reported to the observers and
     * <b>returned</b> (tell it with {@link Rejections#isRejection}): the caller throws it, or answers it.
     *
     * @param quiet the caller answers a rejection without looking at it ({@code executeOrElse}): no exception
     *              is built unless an observer is registered to be told of it (an observer registered while
     *              the call is admitted may miss that one rejection)
     */
    Object admit(OperationState e, boolean quiet) {
        Object token = gate.admit(e, !quiet || observers.current() != null);
        if (Rejections.isRejection(token)) {
            return rejected(e, token);
        }
        e.calls.increment();
        return recorder.watch(e, token);
    }

    private Object rejected(OperationState e, Object rejection) {
        e.rejections.increment();
        Observers.Set o = observers.current();
        if (o != null && rejection instanceof RuntimeException) {
            o.callRejected(e, (RuntimeException) rejection);
        }
        return rejection;
    }

    // ------------------------------------------------------------------------------------------------ sync

    /**
     * {@code executeOrElse} / {@code executeOrElseGet}: a rejection returns {@code orElseGet.get()} when it is
     * given, else {@code orElse}, and builds no exception (unless an observer is registered).
     */
    <T, X extends Exception> T runOrElse(OperationState e, CheckedSupplier<T, X> call, T orElse,
            Supplier<? extends T> orElseGet) throws X {
        Object token = admit(e, true);
        if (Rejections.isRejection(token)) {
            return orElseGet != null ? orElseGet.get() : orElse;
        }
        return proceed(e, token, call);
    }

    /**
     * Runs a call {@link #admit} let through under {@code token}, and records its outcome: the sync half of
     * {@code execute} (whose other half, in {@code CircuitBreaker}, throws or answers a rejection).
     */
    <T, X extends Exception> T proceed(OperationState e, Object token, CheckedSupplier<T, X> call)
            throws X {
        Observers.Set o = observers.current();
        boolean timed = o != null && o.timeThisCall(e);
        long start = timed ? time.nanos() : 0L;
        if (timer != null) {
            return runTimed(e, token, call, o, timed, start);
        }
        T result;
        try {
            result = call.get();
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, false);
            if (timed) {
                o.callTimed(e, v.outcome(), time.nanos() - start);
            }
            throw t;
        }
        Verdict v = recorder.afterReturn(e, token, result, false);
        if (timed) {
            o.callTimed(e, v.outcome(), time.nanos() - start);
        }
        return result;
    }

    private <T, X extends Exception> T runTimed(OperationState e, Object token, CheckedSupplier<T, X> call,
            Observers.Set o, boolean timed, long startNanos) throws X {
        long start = timed ? startNanos : time.nanos();
        CallTimer.Guard guard = timer.interruptAfter(callTimeoutMillis);
        T result;
        try {
            result = call.get();
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, guard != null && guard.finish());
            if (timed) {
                o.callTimed(e, v.outcome(), time.nanos() - startNanos);
            }
            throw t;
        }
        boolean timedOut = guard != null && guard.finish();
        long end = time.nanos();
        Verdict v = recorder.afterReturn(e, token, result, timedOut || end - start > callTimeoutNanos);
        if (timed) {
            o.callTimed(e, v.outcome(), end - startNanos);
        }
        return result;
    }

    private Verdict afterSyncThrow(OperationState e, Object token, Throwable t, boolean timedOut) {
        Verdict v = recorder.afterThrow(e, token, t, timedOut, true);
        if (!timedOut && OutcomeRecorder.restoresInterrupt(t)) {
            Thread.currentThread().interrupt(); // the exception cleared the status; the interrupt is not ours to eat
        }
        return v;
    }

    // ----------------------------------------------------------------------------------------------- async

    <T> CompletableFuture<T> runAsync(OperationState e, Supplier<? extends CompletionStage<T>> call) {
        Object token = admit(e, false);
        if (token instanceof RuntimeException) {
            try {
                return CompletableFuture.completedFuture(fallback(e.name, (RuntimeException) token, null));
            } catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        Observers.Set o = observers.current();
        boolean timed = o != null && o.timeThisCall(e);
        long start = timed ? time.nanos() : 0L;
        CompletionStage<T> stage;
        try {
            stage = Objects.requireNonNull(call.get(), "call returned a null CompletionStage");
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, false); // the supplier ran on this thread
            if (timed) {
                o.callTimed(e, v.outcome(), time.nanos() - start);
            }
            return CompletableFuture.failedFuture(t);
        }
        return new AsyncCall<>(e, token, stage, recorder, time, timed ? o : null, start).start(timer,
                callTimeoutMillis);
    }

    // ------------------------------------------------------------------------------------------- permits

    /** A permit for one call of {@code e}, or a rejected one; never throws a rejection. */
    Permit acquire(OperationState e) {
        Object token = admitHeld(e);
        if (token instanceof RuntimeException) {
            return new Permit(this, e, null, (RuntimeException) token);
        }
        return new Permit(this, e, token, null);
    }

    /**
     * The admission of a call its holder completes later ({@link Permit}, {@link PermitSlot}): the token it runs
     * under, a trial's leased; or the rejection ({@code CircuitOpenException}, {@code StoreUnavailableException}).
     */
    Object admitHeld(OperationState e) {
        Object token = admit(e, false);
        if (token instanceof Trials.Trial) {
            trials.lease(e, (Trials.Trial) token);
        }
        return token;
    }

    // ------------------------------------------------------------------------------------------ fallback

    /** Whether a breaker-wide fallback answers rejections that have no per-call fallback. */
    boolean hasDefaultFallback() {
        return defaultFallback != null;
    }

    /**
     * The answer to a rejection: {@code perCall}'s if given, else the breaker-wide fallback's (a checked
     * exception it throws wrapped in {@link UndeclaredThrowableException}), else the rejection is thrown.
     */
    @SuppressWarnings("unchecked")
    <T> T fallback(String operation, RuntimeException rejection,
            Function<? super RuntimeException, ? extends T> perCall) {
        if (perCall != null) {
            return perCall.apply(rejection);
        }
        Fallback f = defaultFallback;
        if (f == null) {
            throw rejection;
        }
        try {
            return (T) f.apply(operation, rejection);
        } catch (RuntimeException ex) {
            throw ex;
        } catch (Exception ex) {
            throw new UndeclaredThrowableException(ex, "fallback of '" + operation + "' threw a checked exception");
        }
    }
}

package dev.redeye;

import dev.redeye.OutcomeRecorder.Verdict;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreUnavailableException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Clock;
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
    private final Clock clock;
    private final Gate gate;
    private final OutcomeRecorder recorder;
    private final Trials trials;
    private final CallTimer timer;
    private final long callTimeoutMillis;
    private final Fallback defaultFallback;
    private final Observers observers;

    Calls(Clock clock, Gate gate, OutcomeRecorder recorder, Trials trials, CallTimer timer, long callTimeoutMillis,
            Fallback defaultFallback, Observers observers) {
        this.clock = clock;
        this.gate = gate;
        this.recorder = recorder;
        this.trials = trials;
        this.timer = timer;
        this.callTimeoutMillis = callTimeoutMillis;
        this.defaultFallback = defaultFallback;
        this.observers = observers;
    }

    OutcomeRecorder recorder() {
        return recorder;
    }

    /**
     * The one admission of every call: the token the call runs under (see {@link Gate#admit}), counted in
     * {@code calls}; or the rejection, counted in {@code rejections}, reported to the observers and thrown.
     */
    Object admit(OperationState e) {
        try {
            Object token = gate.admit(e);
            e.calls.increment();
            return token;
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            e.rejections.increment();
            Observers.Set o = observers.current();
            if (o != null) {
                o.callRejected(e, rejection);
            }
            throw rejection;
        }
    }

    // ------------------------------------------------------------------------------------------------ sync

    <T, X extends Exception> T run(OperationState e, CheckedSupplier<T, X> call,
            Function<? super RuntimeException, ? extends T> fallback) throws X {
        Object token;
        try {
            token = admit(e);
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            return fallback(e.name, rejection, fallback);
        }
        Observers.Set o = observers.current();
        boolean timed = o != null && o.timeThisCall(e);
        long start = timed ? System.nanoTime() : 0L;
        if (timer != null) {
            return runTimed(e, token, call, o, timed, start);
        }
        T result;
        try {
            result = call.get();
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, false);
            if (timed) {
                o.callTimed(e, v.outcome(), System.nanoTime() - start);
            }
            throw t;
        }
        Verdict v = recorder.afterReturn(e, token, result, false);
        if (timed) {
            o.callTimed(e, v.outcome(), System.nanoTime() - start);
        }
        return result;
    }

    private <T, X extends Exception> T runTimed(OperationState e, Object token, CheckedSupplier<T, X> call,
            Observers.Set o, boolean timed, long startNanos) throws X {
        long start = clock.millis();
        CallTimer.Guard guard = timer.interruptAfter(callTimeoutMillis);
        T result;
        try {
            result = call.get();
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, guard != null && guard.finish());
            if (timed) {
                o.callTimed(e, v.outcome(), System.nanoTime() - startNanos);
            }
            throw t;
        }
        boolean timedOut = guard != null && guard.finish();
        Verdict v = recorder.afterReturn(e, token, result, timedOut || clock.millis() - start > callTimeoutMillis);
        if (timed) {
            o.callTimed(e, v.outcome(), System.nanoTime() - startNanos);
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
        Object token;
        try {
            token = admit(e);
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            try {
                return CompletableFuture.completedFuture(fallback(e.name, rejection, null));
            } catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        Observers.Set o = observers.current();
        boolean timed = o != null && o.timeThisCall(e);
        long start = timed ? System.nanoTime() : 0L;
        CompletionStage<T> stage;
        try {
            stage = Objects.requireNonNull(call.get(), "call returned a null CompletionStage");
        } catch (Throwable t) {
            Verdict v = afterSyncThrow(e, token, t, false); // the supplier ran on this thread
            if (timed) {
                o.callTimed(e, v.outcome(), System.nanoTime() - start);
            }
            return CompletableFuture.failedFuture(t);
        }
        return new AsyncCall<>(e, token, stage, recorder, timed ? o : null, start).start(timer, callTimeoutMillis);
    }

    // ------------------------------------------------------------------------------------------- permits

    /** A permit for one call of {@code e}, or a rejected one; never throws a rejection. */
    Permit acquire(OperationState e) {
        Object token;
        try {
            token = admit(e);
        } catch (CircuitOpenException | StoreUnavailableException rejection) {
            return new Permit(this, e, null, rejection);
        }
        if (token instanceof Trials.Trial) {
            trials.lease(e, (Trials.Trial) token);
        }
        return new Permit(this, e, token, null);
    }

    // ------------------------------------------------------------------------------------------ fallback

    @SuppressWarnings("unchecked")
    private <T> T fallback(String operation, RuntimeException rejection,
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

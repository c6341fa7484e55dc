package dev.redeye;

import dev.redeye.OutcomeRecorder.Verdict;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreUnavailableException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The answer of {@link CircuitBreaker#tryAcquire(String)}: permission to make one call of an operation, or
 * the rejection. For code that cannot hand the breaker a supplier (a reactive pipeline, an interceptor, a
 * coroutine):
 *
 * <pre>{@code
 * Permit permit = breaker.tryAcquire("payment-gateway");
 * if (!permit.isPermitted()) {
 *     throw permit.rejection();                 // CircuitOpenException (retryAfter()) or StoreUnavailableException
 * }
 * try {
 *     Receipt r = gateway.charge(order);
 *     permit.onSuccess();
 *     return r;
 * } catch (IOException e) {
 *     permit.onFailure(e);
 *     throw e;
 * }
 * }</pre>
 *
 * <h2>Why a result object and not {@code Optional<Permit>}</h2>
 * A caller that is refused needs to know why and for how long ({@link CircuitOpenException#retryAfter()},
 * {@link StoreUnavailableException}); an empty {@code Optional} would lose both, and a thrown rejection would
 * force a try/catch on code paths (reactive operators) that prefer values. A rejected permit carries its
 * rejection; {@link #orThrow()} turns it into the exception style.
 *
 * <h2>Completion: exactly one, exactly once</h2>
 * A permitted permit is completed by exactly one of {@link #onSuccess()}, {@link #onResult(Object)},
 * {@link #onFailure(Throwable)} or {@link #release()}; the first completion wins (atomically, whatever thread it runs on) and the others
 * return false and do nothing, so a reactive pipeline that signals both an error and a cancellation records
 * one outcome. {@code onFailure} applies the breaker's {@code recordFailure} predicate and its interrupt and
 * cancellation rules, as {@code execute} does. {@code release()} records nothing: the call was not made, or
 * its end says nothing about the dependency (a cancellation); a trial's claim is given back at once.
 *
 * <h2>A permit never completed</h2>
 * A normal permit that is never completed records nothing and holds nothing. A <em>trial</em> permit holds
 * a fleet-wide trial claim and one of this instance's {@code halfOpenPermits} trial slots: the claim expires in
 * the store after {@code trialTimeout}, and the slot is leased for as long (by the breaker's ticker), after
 * which the next caller that needs a slot takes it back; a completion arriving after that is ignored (returns
 * false). So a lost permit delays recovery by at most {@code trialTimeout}, never forever.
 *
 * <h2>Cost</h2>
 * {@code tryAcquire} costs what {@code execute}'s admission costs, plus this one small object (a permit per
 * call is what makes double completion safe: a shared permit could not tell whose completion it saw).
 * Permits are not timed: observers see their outcomes and counts, not their durations. The breaker's
 * {@code callTimeout} does not apply (the holder runs the call); neither do fallbacks.
 *
 * <p>Thread-safe.
 */
public final class Permit {
    private static final AtomicIntegerFieldUpdater<Permit> DONE =
            AtomicIntegerFieldUpdater.newUpdater(Permit.class, "done");

    private final Calls calls;
    private final OperationState e;
    private final Object token;
    private final RuntimeException rejection;
    private volatile int done;

    Permit(Calls calls, OperationState e, Object token, RuntimeException rejection) {
        this.calls = calls;
        this.e = e;
        this.token = token;
        this.rejection = rejection;
        this.done = rejection != null ? 1 : 0;
    }

    /** The operation this permit is for. */
    public String operation() {
        return e.name;
    }

    /** Whether the call may be made. */
    public boolean isPermitted() {
        return rejection == null;
    }

    /**
     * Whether this permit is a half-open trial: this call's outcome decides whether the breaker closes. It holds
     * a trial claim until it is completed (or its lease runs out, see the class comment).
     */
    public boolean isTrial() {
        return token instanceof Trials.Trial;
    }

    /**
     * Why the call may not be made: a {@link CircuitOpenException} (open, forced open, or half-open with every
     * trial permit taken; {@code retryAfter()} says for how long) or a {@link StoreUnavailableException} (the
     * store failed under {@link StoreErrorPolicy#REJECT}); null for a permitted permit.
     */
    public RuntimeException rejection() {
        return rejection;
    }

    /**
     * This permit if it is permitted.
     *
     * @throws CircuitOpenException      if it is not (see {@link #rejection()})
     * @throws StoreUnavailableException if it is not, the store having failed under REJECT
     */
    public Permit orThrow() {
        if (rejection != null) {
            throw rejection;
        }
        return this;
    }

    /**
     * The call succeeded.
     *
     * @return whether this completed the permit (false if it was already completed, expired, or rejected)
     */
    public boolean onSuccess() {
        if (!complete()) {
            return false;
        }
        calls.recorder().record(e, token, Verdict.SUCCESS);
        return true;
    }

    /**
     * The call returned {@code result} (a status-style outcome such as an HTTP response): a failure if the
     * breaker's {@code recordResult} predicate says so (a predicate that throws counts it as a failure), else a
     * success; a success when no {@code recordResult} is set. The same rule {@code execute} applies to a
     * returned value.
     *
     * @param result what the call returned (may be null; the predicate decides what that means)
     * @return whether this completed the permit (false if it was already completed, expired, or rejected)
     */
    public boolean onResult(Object result) {
        if (!complete()) {
            return false;
        }
        calls.recorder().afterReturn(e, token, result, false);
        return true;
    }

    /**
     * The call failed with {@code error}: a failure if the breaker's {@code recordFailure} predicate says so
     * (else an ignored error); not recorded at all if it is an interrupt or a cancellation.
     *
     * @return whether this completed the permit (false if it was already completed, expired, or rejected)
     * @throws NullPointerException if {@code error} is null (the permit stays open)
     */
    public boolean onFailure(Throwable error) {
        Objects.requireNonNull(error, "error");
        if (!complete()) {
            return false;
        }
        calls.recorder().afterThrow(e, token, error, false, false);
        return true;
    }

    /**
     * The call was not made, or its end says nothing about the dependency (a cancellation): records nothing,
     * gives a trial's claim back.
     *
     * @return whether this completed the permit (false if it was already completed, expired, or rejected)
     */
    public boolean release() {
        if (!complete()) {
            return false;
        }
        calls.recorder().record(e, token, Verdict.NOT_RECORDED);
        return true;
    }

    /** Wins the one completion; for a trial, also against its lease's expiry. */
    private boolean complete() {
        return DONE.compareAndSet(this, 0, 1) && endTrial(e, token);
    }

    /**
     * Whether the call admitted under {@code token} may still be completed: always, but for a trial whose lease
     * ran out (a caller took its slot back: the outcome is too late), whose lease this ends.
     */
    static boolean endTrial(OperationState e, Object token) {
        if (token instanceof Trials.Trial) {
            Trials.Trial t = (Trials.Trial) token;
            if (!t.tryEnd()) {
                return false;
            }
            e.unlease(t);
        }
        return true;
    }

    @Override
    public String toString() {
        return "Permit[" + OperationNames.abbreviate(e.name) + ", " + (rejection != null ? "rejected: " + rejection
                : (isTrial() ? "trial" : "call") + (done != 0 ? ", completed" : "")) + "]";
    }
}

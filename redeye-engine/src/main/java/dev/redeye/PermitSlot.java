package dev.redeye;

import dev.redeye.OutcomeRecorder.Verdict;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreUnavailableException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A {@link Permit} its holder fills again after each completion: permission for one call at a time of one
 * operation, with nothing allocated per call. Made by {@link CircuitBreaker#newPermitSlot(String)}.
 *
 * <p>For adapters of interfaces that take permission in one method and report the outcome in another without
 * handing the caller anything to carry between them (Resilience4j's {@code acquirePermission} and
 * {@code onSuccess}), where a {@link Permit} per call would be the healthy path's only allocation. Code that can
 * carry a permit wants {@link CircuitBreaker#tryAcquire(String)}: a permit per call is what lets any number of
 * holders complete independently.
 *
 * <pre>{@code
 * PermitSlot slot = breaker.newPermitSlot("inventory");     // once, kept by its holder
 * if (!slot.tryAcquire()) {
 *     throw slot.rejection();
 * }
 * try {
 *     Item i = client.fetch();
 *     slot.onSuccess();
 *     return i;
 * } catch (IOException e) {
 *     slot.onFailure(e);
 *     throw e;
 * }
 * }</pre>
 *
 * <h2>The rules of a permit, per acquisition</h2>
 * Admission, outcomes, trials and slow calls are those of {@link Permit}: each acquisition is completed by
 * exactly one of {@link #onSuccess()}, {@link #onResult(Object)}, {@link #onFailure(Throwable)} or
 * {@link #release()}; the first completion wins atomically, whatever thread it runs on, and the slot is empty
 * again once that completion has recorded its outcome. A trial's lease runs out as a permit's does, after which a
 * completion returns false.
 *
 * <h2>Threads</h2>
 * {@link #tryAcquire()} is for the slot's holder, one acquisition at a time: it throws
 * {@link IllegalStateException} while the slot holds a permit (or one is being acquired or completed), so two
 * threads can never hold one slot at once. Any thread may complete. A completion names no acquisition: one that
 * arrives after the slot was emptied and filled again completes the new acquisition. Holders whose completions
 * may arrive late (from other threads) keep track of which acquisition they complete themselves.
 */
public final class PermitSlot {
    private static final int EMPTY = 0;
    private static final int ACQUIRING = 1;
    private static final int HELD = 2;
    private static final int COMPLETING = 3;
    private static final AtomicIntegerFieldUpdater<PermitSlot> STATE =
            AtomicIntegerFieldUpdater.newUpdater(PermitSlot.class, "state");

    private final BreakerParts parts;
    private final Calls calls;
    private final String operation;
    /** The acquisition held: written before {@link #state} becomes HELD, read after winning HELD -> COMPLETING. */
    private OperationState entry;
    private Object token;
    /** The last refusal; read by the thread whose {@link #tryAcquire()} returned false. */
    private RuntimeException rejection;
    private volatile int state;

    PermitSlot(BreakerParts parts, Calls calls, String operation) {
        this.parts = parts;
        this.calls = calls;
        this.operation = operation;
    }

    /** The operation this slot's permits are for. */
    public String operation() {
        return operation;
    }

    /**
     * Asks permission for one call, the same admission as {@link CircuitBreaker#tryAcquire(String)}: true if
     * permitted (the slot now holds the permit), false if refused ({@link #rejection()} says why).
     *
     * @throws IllegalStateException if the slot is not empty, or the breaker is closed
     */
    public boolean tryAcquire() {
        if (!STATE.compareAndSet(this, EMPTY, ACQUIRING)) {
            throw new IllegalStateException("the permit slot of '" + OperationNames.abbreviate(operation)
                    + "' holds a permit: complete it before acquiring again");
        }
        Object t;
        OperationState e;
        try {
            e = parts.entry(operation);
            t = calls.admitHeld(e);
        } catch (RuntimeException | Error ex) {
            state = EMPTY;
            throw ex;
        }
        if (t instanceof RuntimeException) {
            rejection = (RuntimeException) t;
            state = EMPTY;
            return false;
        }
        entry = e;
        token = t;
        STATE.lazySet(this, HELD); // a release store: a completion that sees HELD sees the acquisition
        return true;
    }

    /**
     * Why the last {@link #tryAcquire()} of this thread was refused: a {@link CircuitOpenException} or a
     * {@link StoreUnavailableException} (see {@link Permit#rejection()}); null before any refusal.
     */
    public RuntimeException rejection() {
        return rejection;
    }

    /** Whether the slot holds a permit not completed yet. */
    public boolean isHeld() {
        return state == HELD;
    }

    /** Whether the permit held is a half-open trial (see {@link Permit#isTrial()}); false when empty. */
    public boolean isTrial() {
        return state == HELD && token instanceof Trials.Trial;
    }

    /**
     * The call succeeded.
     *
     * @return whether this completed the permit held (false if the slot holds none, or a trial's lease ran out)
     */
    public boolean onSuccess() {
        return complete(Verdict.SUCCESS, null, null);
    }

    /**
     * The call returned {@code result}: judged by the breaker's {@code recordResult} predicate, as
     * {@link Permit#onResult(Object)}.
     *
     * @return whether this completed the permit held (false if the slot holds none, or a trial's lease ran out)
     */
    public boolean onResult(Object result) {
        return complete(null, result, null);
    }

    /**
     * The call failed with {@code error}: judged as {@link Permit#onFailure(Throwable)} does.
     *
     * @return whether this completed the permit held (false if the slot holds none, or a trial's lease ran out)
     * @throws NullPointerException if {@code error} is null (the permit stays held)
     */
    public boolean onFailure(Throwable error) {
        return complete(null, null, Objects.requireNonNull(error, "error"));
    }

    /**
     * The call was not made, or its end says nothing about the dependency: records nothing, gives a trial's
     * claim back.
     *
     * @return whether this completed the permit held (false if the slot holds none, or a trial's lease ran out)
     */
    public boolean release() {
        return complete(Verdict.NOT_RECORDED, null, null);
    }

    /** Wins the held permit's one completion, records it ({@code verdict}, else {@code error}, else {@code result}). */
    private boolean complete(Verdict verdict, Object result, Throwable error) {
        if (!STATE.compareAndSet(this, HELD, COMPLETING)) {
            return false;
        }
        OperationState e = entry;
        Object t = token;
        entry = null;
        token = null;
        try {
            if (!Permit.endTrial(e, t)) {
                return false;
            }
            if (verdict != null) {
                calls.recorder().record(e, t, verdict);
            } else if (error != null) {
                calls.recorder().afterThrow(e, t, error, false, false);
            } else {
                calls.recorder().afterReturn(e, t, result, false);
            }
            return true;
        } finally {
            STATE.lazySet(this, EMPTY);
        }
    }

    @Override
    public String toString() {
        int s = state;
        return "PermitSlot[" + OperationNames.abbreviate(operation) + ", "
                + (s == HELD ? (token instanceof Trials.Trial ? "trial" : "call") : s == EMPTY ? "empty" : "busy")
                + "]";
    }
}

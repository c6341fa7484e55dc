package dev.redeye;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.Transitions;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * The store as the engine uses it: each capability if the store has it, else the best-effort fallback
 * (get-then-put of the same {@link Transitions} rule). The missing capabilities are looked up once and each
 * logs exactly one warning, at construction.
 *
 * <p>Every method reports any failure of the store as a {@link StoreException}: the store's own, or one
 * wrapping whatever else it threw (a driver's exception, a closed pool's {@link IllegalStateException}, a
 * {@link NullPointerException}, a {@code null} where a value was due). The engine handles store errors in one
 * place, under its policy, and never lets them pass for the protected call's failure.
 */
final class StoreAccess {
    final Store store;
    final AtomicRecording recording;
    final TrialClaims claims;
    final AtomicTransitions transitions;
    final TransitionFeed feed;

    /**
     * @param store     the store the engine talks to (possibly a decorator)
     * @param storeName what warnings call it: the user's store class, never a URI
     */
    StoreAccess(Store store, String storeName, Logger log, boolean localCacheRequested) {
        this.store = store;
        this.recording = store.capability(AtomicRecording.class).orElse(null);
        this.claims = store.capability(TrialClaims.class).orElse(null);
        this.transitions = store.capability(AtomicTransitions.class).orElse(null);
        this.feed = store.capability(TransitionFeed.class).orElse(null);
        if (recording == null) {
            log.warn("store {} lacks AtomicRecording: outcomes are recorded with get-then-put, so failure counts "
                    + "may be lost under concurrency", storeName);
        }
        if (claims == null) {
            log.warn("store {} lacks TrialClaims: half-open trials are claimed per instance, so each instance may "
                    + "run its own trials at the same time", storeName);
        }
        if (transitions == null) {
            log.warn("store {} lacks AtomicTransitions: trial outcomes and forced changes use get-then-put and "
                    + "may be lost under concurrency", storeName);
        }
        if (feed == null && localCacheRequested) {
            log.warn("store {} lacks TransitionFeed: the local cache is unavailable and every call reads the store",
                    storeName);
        }
    }

    /** The stored state, or {@link BreakerState#INITIAL} if none. */
    BreakerState get(String op) {
        try {
            Optional<BreakerState> s = store.get(op);
            return s.orElse(BreakerState.INITIAL); // a null Optional is a store error like any other
        } catch (Exception e) { // also a checked exception a driver threw sneakily
            throw storeError("get", e);
        }
    }

    StateChange record(String op, boolean success, Policy p, long now) {
        try {
            if (recording != null) {
                return nonNull(recording.recordOutcome(op, success, p, now), "recordOutcome");
            }
            BreakerState prev = store.get(op).orElse(null);
            return putIfChanged(op, Transitions.recordOutcome(prev, success, p, now), p);
        } catch (Exception e) {
            throw storeError("recordOutcome", e);
        }
    }

    StateChange trialOutcome(String op, long trialVersion, boolean success, Policy p, long now) {
        try {
            if (transitions != null) {
                return nonNull(success ? transitions.trialSucceeded(op, trialVersion, p, now)
                        : transitions.trialFailed(op, trialVersion, p, now), "trial outcome");
            }
            BreakerState prev = store.get(op).orElse(null);
            return putIfChanged(op, Transitions.trialOutcome(prev, trialVersion, success, p, now), p);
        } catch (Exception e) {
            throw storeError(success ? "trialSucceeded" : "trialFailed", e);
        }
    }

    StateChange force(String op, BreakerStatus target, Policy p, long now) {
        try {
            if (transitions != null) {
                return nonNull(transitions.force(op, target, p, now), "force");
            }
            BreakerState prev = store.get(op).orElse(null);
            StateChange ch = Transitions.force(prev, target, p, now);
            if (target == BreakerStatus.CLOSED) {
                // delete removes the stored trial claims too, which a forced close must drop (AtomicTransitions
                // does it atomically; here it is best effort like the rest of the fallback)
                store.delete(op);
            }
            store.put(op, ch.state(), p.stateTtl());
            return ch;
        } catch (Exception e) {
            throw storeError("force", e);
        }
    }

    /** A trial token, or null if every permit is taken. Only for a store with {@link TrialClaims}. */
    String claim(String op, int permits, Duration ttl) {
        try {
            return claims.claimTrial(op, permits, ttl).orElse(null);
        } catch (Exception e) {
            throw storeError("claimTrial", e);
        }
    }

    void release(String op, String token) {
        try {
            claims.releaseTrial(op, token);
        } catch (Exception e) {
            throw storeError("releaseTrial", e);
        }
    }

    TransitionFeed.Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        try {
            return feed.subscribe(listener, onGap);
        } catch (Exception e) {
            throw storeError("subscribe", e);
        }
    }

    private StateChange putIfChanged(String op, StateChange ch, Policy p) {
        if (ch.changed()) {
            store.put(op, ch.state(), p.stateTtl());
        }
        return ch;
    }

    private static StateChange nonNull(StateChange ch, String method) {
        if (ch == null) {
            throw new StoreException(method + " returned null");
        }
        return ch;
    }

    /** The store's own exception as it is; anything else wrapped, naming the method. */
    static StoreException storeError(String method, Exception e) {
        if (e instanceof StoreException) {
            return (StoreException) e;
        }
        return new StoreException("store " + method + " failed: " + e, e);
    }
}

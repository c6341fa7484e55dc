package dev.redeye;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.Transitions;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * The store as the engine uses it: each capability if the store has it, else the best-effort fallback
 * (get-then-put of the same {@link Transitions} rule, or a per-instance trial claim). The missing
 * capabilities are looked up once and each logs exactly one warning, at construction.
 */
final class StoreAccess {
    final Store store;
    final AtomicRecording recording;
    final TrialClaims claims;
    final AtomicTransitions transitions;
    final TransitionFeed feed;

    /**
     * @param store               the store the engine talks to (possibly a decorator)
     * @param storeName           what warnings call it: the user's store class, never a URI
     */
    StoreAccess(Store store, String storeName, Logger log, boolean localCacheRequested) {
        this.store = store;
        this.recording = store.capability(AtomicRecording.class).orElse(null);
        this.claims = store.capability(TrialClaims.class).orElse(null);
        this.transitions = store.capability(AtomicTransitions.class).orElse(null);
        this.feed = store.capability(TransitionFeed.class).orElse(null);
        String name = storeName;
        if (recording == null) {
            log.warn("store {} lacks AtomicRecording: outcomes are recorded with get-then-put, so failure counts "
                    + "may be lost under concurrency", name);
        }
        if (claims == null) {
            log.warn("store {} lacks TrialClaims: half-open trials are claimed per instance, so each instance may "
                    + "run its own trials at the same time", name);
        }
        if (transitions == null) {
            log.warn("store {} lacks AtomicTransitions: trial outcomes and forced changes use get-then-put and "
                    + "may be lost under concurrency", name);
        }
        if (feed == null && localCacheRequested) {
            log.warn("store {} lacks TransitionFeed: the local cache is unavailable and every call reads the store",
                    name);
        }
    }

    Optional<BreakerState> get(String op) {
        return store.get(op);
    }

    StateChange record(String op, boolean success, Policy p, long now) {
        if (recording != null) {
            return recording.recordOutcome(op, success, p, now);
        }
        BreakerState prev = store.get(op).orElse(null);
        return putIfChanged(op, Transitions.recordOutcome(prev, success, p, now), p);
    }

    StateChange trialOutcome(String op, long trialVersion, boolean success, Policy p, long now) {
        if (transitions != null) {
            return success ? transitions.trialSucceeded(op, trialVersion, p, now)
                    : transitions.trialFailed(op, trialVersion, p, now);
        }
        BreakerState prev = store.get(op).orElse(null);
        return putIfChanged(op, Transitions.trialOutcome(prev, trialVersion, success, p, now), p);
    }

    StateChange force(String op, BreakerStatus target, Policy p, long now) {
        if (transitions != null) {
            return transitions.force(op, target, p, now);
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
    }

    /** A trial token, or null if every permit is taken. */
    String claim(OperationState e, int permits, Duration ttl) {
        if (claims != null) {
            return claims.claimTrial(e.name, permits, ttl).orElse(null);
        }
        return e.claimLocally(permits, ttl.toNanos());
    }

    void release(OperationState e, String token) {
        if (claims != null) {
            claims.releaseTrial(e.name, token);
        } else {
            e.releaseLocally(token);
        }
    }

    private StateChange putIfChanged(String op, StateChange ch, Policy p) {
        if (ch.changed()) {
            store.put(op, ch.state(), p.stateTtl());
        }
        return ch;
    }
}

package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Transitions;

/**
 * The atomic read-modify-writes of a breaker's state, each one {@link Transitions} rule. The same code runs in
 * an entry processor on the member (native mode) and on the client between a read and a compare-and-set (CAS
 * mode). Codes are explicit and stable: they travel to members inside the processor.
 */
enum StateOp {
    FAILURE(1),
    SUCCESS(2),
    TRIAL_SUCCESS(3),
    TRIAL_FAILURE(4),
    FORCE_OPEN(5),
    FORCE_HALF_OPEN(6),
    FORCE_CLOSED(7);

    final int code;

    StateOp(int code) {
        this.code = code;
    }

    /**
     * Applies this rule to the current state.
     *
     * @param trialVersion the open period of a trial outcome (ignored by the other rules)
     */
    StateChange apply(BreakerState current, Policy p, long now, long trialVersion) {
        switch (this) {
            case FAILURE:
                return Transitions.recordFailure(current, p, now);
            case SUCCESS:
                return Transitions.recordSuccess(current, p, now);
            case TRIAL_SUCCESS:
                return Transitions.trialSucceeded(current, trialVersion, p, now);
            case TRIAL_FAILURE:
                return Transitions.trialFailed(current, trialVersion, p, now);
            case FORCE_OPEN:
                return Transitions.force(current, BreakerStatus.FORCED_OPEN, p, now);
            case FORCE_HALF_OPEN:
                return Transitions.force(current, BreakerStatus.HALF_OPEN, p, now);
            default:
                return Transitions.force(current, BreakerStatus.CLOSED, p, now);
        }
    }

    /** The operation a forced change to {@code status} is. */
    static StateOp forcing(BreakerStatus status) {
        switch (dev.redeye.api.TransitionKind.forcedTo(status)) {
            case FORCED_OPEN:
                return FORCE_OPEN;
            case FORCED_HALF_OPEN:
                return FORCE_HALF_OPEN;
            default:
                return FORCE_CLOSED;
        }
    }

    /**
     * Looks an operation up by its code.
     *
     * @throws IllegalArgumentException for an unknown code
     */
    static StateOp fromCode(int code) {
        for (StateOp op : values()) {
            if (op.code == code) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown redeye state operation code " + code);
    }
}

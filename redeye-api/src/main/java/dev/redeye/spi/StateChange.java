package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.util.Objects;

/**
 * The result of one atomic read-modify-write of a breaker's state: the state before, the state after, and
 * the transition it was, if any.
 *
 * @param previous   the state before the change ({@link BreakerState#INITIAL} for a key never written)
 * @param state      the state after the change (equal to {@code previous} when nothing changed)
 * @param transition the kind of transition, or {@code null} when the change was not a transition
 *                   (a sub-threshold increment, the clearing of sub-threshold failures, a trial success below the
 *                   threshold, or no change at all)
 */
public record StateChange(BreakerState previous, BreakerState state, TransitionKind transition) {

    /**
     * @throws NullPointerException if either state is null
     */
    public StateChange {
        Objects.requireNonNull(previous, "previous");
        Objects.requireNonNull(state, "state");
    }

    /** A change that left {@code state} as it was. */
    public static StateChange unchanged(BreakerState state) {
        return new StateChange(state, state, null);
    }

    /** Whether this change was a transition (bumped the version and must be published). */
    public boolean isTransition() {
        return transition != null;
    }

    /** Whether the stored state differs from the previous one, that is whether a write is needed. */
    public boolean changed() {
        return !previous.equals(state);
    }

    /**
     * The event a store publishes for this change, or {@code null} if it was not a transition.
     *
     * @param operation the operation name as the user wrote it
     * @param policy    the policy the change was made under (used only to name the prior status of a forced
     *                  change)
     * @param now       the virtual time of the change
     */
    public TransitionEvent toEvent(String operation, Policy policy, long now) {
        if (transition == null) {
            return null;
        }
        BreakerStatus from = transition.isForced()
                ? Transitions.status(previous, policy, now, 1.0)
                : transition.from();
        return new TransitionEvent(operation, transition, from, state);
    }
}

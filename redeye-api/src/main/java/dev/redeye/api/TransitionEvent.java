package dev.redeye.api;

import java.util.Objects;

/**
 * One transition of one breaker, as published on a {@link TransitionFeed} and passed to
 * {@code onStateChange} listeners.
 *
 * <p>Feeds may deliver duplicates and out of order: a subscriber compares {@code state().version()} with
 * what it already holds and ignores anything not newer.
 *
 * @param operation the operation name exactly as the user wrote it
 * @param kind      what kind of transition this was
 * @param from      the status before the transition
 * @param state     the state after the transition, with its version
 */
public record TransitionEvent(String operation, TransitionKind kind, BreakerStatus from, BreakerState state) {

    /**
     * @throws NullPointerException if any component is null
     */
    public TransitionEvent {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(state, "state");
    }

    /** The status after the transition. */
    public BreakerStatus to() {
        return kind.to();
    }

    /** The version of the state after the transition. */
    public long version() {
        return state.version();
    }
}

package dev.redeye.api;

import dev.redeye.spi.TransitionFeed;
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

    /**
     * The event a put of {@code next} over {@code previous} amounts to, for a store whose feed must publish
     * puts (see {@link TransitionFeed}, "Puts"): a transition when {@code next}'s version is higher than
     * {@code previous}'s (0 when the key was absent), else {@code null}. The kind is inferred from the two
     * states: opening from closed is {@link TransitionKind#OPENED}; an open, unforced state after an open one
     * is {@link TransitionKind#REOPENED} (or {@link TransitionKind#FORCED_HALF_OPEN} after a forced one);
     * closing from open is {@link TransitionKind#CLOSED} (or {@link TransitionKind#FORCED_CLOSED} after a
     * forced one, or when it was already closed); a forced state is {@link TransitionKind#FORCED_OPEN}.
     * Subscribers rely on the state and its version, the kind is informative.
     *
     * @param operation the operation name as the user wrote it
     * @param previous  the state stored before the put, or null if the key was absent
     * @param next      the state the put stores
     * @return the event to publish, or null when the put is not a transition
     * @throws NullPointerException if {@code operation} or {@code next} is null
     */
    public static TransitionEvent ofPut(String operation, BreakerState previous, BreakerState next) {
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(next, "next");
        long before = previous == null ? 0L : previous.version();
        if (next.version() <= before) {
            return null;
        }
        boolean wasOpen = previous != null && previous.open();
        boolean wasForced = previous != null && previous.forced();
        BreakerStatus from = !wasOpen ? BreakerStatus.CLOSED
                : wasForced ? BreakerStatus.FORCED_OPEN : BreakerStatus.OPEN;
        TransitionKind kind;
        if (next.forced()) {
            kind = TransitionKind.FORCED_OPEN;
        } else if (next.open()) {
            kind = !wasOpen ? TransitionKind.OPENED
                    : wasForced ? TransitionKind.FORCED_HALF_OPEN : TransitionKind.REOPENED;
        } else {
            kind = wasOpen && !wasForced ? TransitionKind.CLOSED : TransitionKind.FORCED_CLOSED;
        }
        if (!kind.isForced()) {
            from = kind.from();
        }
        return new TransitionEvent(operation, kind, from, next);
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

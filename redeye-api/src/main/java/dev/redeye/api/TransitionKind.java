package dev.redeye.api;

import dev.redeye.spi.TransitionFeed;

/**
 * What kind of transition a state change was. Every transition bumps {@link BreakerState#version()} and is
 * published on the {@link TransitionFeed}; a sub-threshold increment, the clearing of sub-threshold failures by a
 * success, or a trial success below the success threshold is not a transition and has no kind.
 *
 * <p>Each constant has an explicit, stable {@link #code()} and {@link #wireName()} used wherever a kind is
 * persisted or published (Lua scripts, NOTIFY payloads, stream entries). Never rely on {@link #ordinal()}.
 */
public enum TransitionKind {
    /** Closed to open: the failure threshold (or error-rate threshold) was reached. */
    OPENED(1, "opened", BreakerStatus.CLOSED, BreakerStatus.OPEN),
    /** A trial failed: the breaker opens again with a longer reset window. */
    REOPENED(2, "reopened", BreakerStatus.HALF_OPEN, BreakerStatus.OPEN),
    /** Enough trials succeeded: the breaker closes and every counter resets. */
    CLOSED(3, "closed", BreakerStatus.HALF_OPEN, BreakerStatus.CLOSED),
    // Code 4 is reserved and never used: stored events and scripts of earlier releases used it for a success
    // clearing sub-threshold failures, which is a plain write, not a transition.
    /** An operator held the breaker open ({@code forceOpen}). */
    FORCED_OPEN(5, "forced_open", null, BreakerStatus.FORCED_OPEN),
    /** An operator made the breaker half-open ({@code forceHalfOpen}). */
    FORCED_HALF_OPEN(6, "forced_half_open", null, BreakerStatus.HALF_OPEN),
    /** An operator closed the breaker ({@code reset}). */
    FORCED_CLOSED(7, "forced_closed", null, BreakerStatus.CLOSED),
    /**
     * An operator stored a {@link BreakerMode} ({@code forceMode}): the breaker closes with fresh counters in the
     * new mode.
     */
    MODE_CHANGED(8, "mode_changed", null, BreakerStatus.CLOSED),
    /**
     * In {@link BreakerMode#METRICS_ONLY}, the strategy would have opened the breaker: it stays closed, this is
     * published, and the counters start again.
     */
    WOULD_OPEN(9, "would_open", BreakerStatus.CLOSED, BreakerStatus.CLOSED);

    private final int code;
    private final String wireName;
    private final BreakerStatus from;
    private final BreakerStatus to;

    TransitionKind(int code, String wireName, BreakerStatus from, BreakerStatus to) {
        this.code = code;
        this.wireName = wireName;
        this.from = from;
        this.to = to;
    }

    /** The stable persisted code of this kind. */
    public int code() {
        return code;
    }

    /** The stable lower-case name used in scripts and payloads, for example {@code "opened"}. */
    public String wireName() {
        return wireName;
    }

    /** The status this kind always leads to. */
    public BreakerStatus to() {
        return to;
    }

    /**
     * The status this kind always starts from, or {@code null} for the forced kinds, which can start from
     * any status (the {@link TransitionEvent} then carries the prior status).
     */
    public BreakerStatus from() {
        return from;
    }

    /** Whether this is one of the operator's kinds (a forced status or a mode). */
    public boolean isForced() {
        return from == null;
    }

    /**
     * Looks a kind up by its code.
     *
     * @throws IllegalArgumentException if no kind has that code
     */
    public static TransitionKind fromCode(int code) {
        for (TransitionKind k : values()) {
            if (k.code == code) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown transition kind code " + code);
    }

    /**
     * Looks a kind up by its wire name.
     *
     * @throws IllegalArgumentException if no kind has that name
     */
    public static TransitionKind fromWireName(String name) {
        for (TransitionKind k : values()) {
            if (k.wireName.equals(name)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown transition kind '" + name + "'");
    }

    /** The kind a forced change to {@code status} has. */
    public static TransitionKind forcedTo(BreakerStatus status) {
        switch (status) {
            case FORCED_OPEN:
            case OPEN:
                return FORCED_OPEN;
            case HALF_OPEN:
                return FORCED_HALF_OPEN;
            case CLOSED:
                return FORCED_CLOSED;
            default:
                throw new IllegalArgumentException("cannot force " + status);
        }
    }
}

package dev.redeye.api;

import dev.redeye.spi.Transitions;

/**
 * The externally visible status of one breaker.
 *
 * <p>Only {@code open} and {@code forced} are stored (see {@link BreakerState}); {@link #HALF_OPEN} is
 * derived: an open, non-forced breaker whose reset window has elapsed (see
 * {@link Transitions#status(BreakerState, Policy, long, double)}).
 *
 * <p>Each constant has an explicit, stable {@link #code()} used wherever a status is persisted or sent
 * over the wire. Never rely on {@link #ordinal()}.
 */
public enum BreakerStatus {
    /** Calls flow; outcomes are counted. */
    CLOSED(0),
    /** Calls are rejected until the reset window elapses. */
    OPEN(1),
    /** The reset window has elapsed: a limited number of trial calls may be claimed. */
    HALF_OPEN(2),
    /** Held open by an operator; no trials until {@code reset}. */
    FORCED_OPEN(3);

    private final int code;

    BreakerStatus(int code) {
        this.code = code;
    }

    /** The stable persisted code of this status. */
    public int code() {
        return code;
    }

    /**
     * Looks a status up by its persisted code.
     *
     * @throws IllegalArgumentException if no status has that code
     */
    public static BreakerStatus fromCode(int code) {
        for (BreakerStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown breaker status code " + code);
    }
}

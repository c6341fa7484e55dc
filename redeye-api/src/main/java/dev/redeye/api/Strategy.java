package dev.redeye.api;

/**
 * How a closed breaker decides to open. Each constant has a stable {@link #code()} and
 * {@link #wireName()} for scripts; never rely on {@link #ordinal()}.
 */
public enum Strategy {
    /** Open after {@code failureThreshold} consecutive failures (the default). */
    CONSECUTIVE(0, "consecutive"),
    /**
     * Open once at least {@code minimumCalls} outcomes were seen and the exponentially weighted failure
     * rate reaches {@code errorRateThreshold}. Every closed-phase outcome is written.
     */
    ERROR_RATE(1, "errorRate"),
    /**
     * A leaky count: a failure adds 1 to {@code failures}, a success subtracts 1 (never below 0), and the
     * breaker opens when the count reaches {@code failureThreshold}. Successes between failures slow the
     * count down instead of clearing it, so a dependency failing one call in two opens the breaker where the
     * consecutive strategy never would. {@code maxGapBetweenFailures} restarts the count as it does for the
     * consecutive strategy (a bucket idle that long is drained). A success that lowers the count is a write,
     * not a transition; a success at 0 writes nothing.
     */
    LEAKY(2, "leaky"),
    /**
     * Resilience4j's trip rule over a {@link SlidingWindow} held with the state, so the window is the fleet's:
     * once the window holds at least {@code minimumNumberOfCalls} outcomes (for a count window, at most its size),
     * the breaker opens when the failure rate reaches {@code failureRateThreshold} or the slow-call rate reaches
     * {@code slowCallRateThreshold} (both in percent). Every closed-phase outcome is written; the window empties
     * when the breaker closes.
     */
    SLIDING_WINDOW(3, "slidingWindow");

    private final int code;
    private final String wireName;

    Strategy(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    /** The stable code of this strategy. */
    public int code() {
        return code;
    }

    /** The stable name of this strategy, as used in scripts and on the command line. */
    public String wireName() {
        return wireName;
    }

    /**
     * Whether this strategy decides on the {@code failures} counter (consecutive and leaky), so a success with
     * {@code failures == 0} changes nothing and need not be written.
     */
    public boolean countsFailures() {
        return this == CONSECUTIVE || this == LEAKY;
    }

    /**
     * Looks a strategy up by its wire name (case-insensitive, {@code error-rate} and {@code error_rate}
     * accepted too).
     *
     * @throws IllegalArgumentException if the name is unknown
     */
    public static Strategy fromName(String name) {
        String n = name.replace("-", "").replace("_", "");
        for (Strategy s : values()) {
            if (s.wireName.equalsIgnoreCase(n)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown strategy '" + name + "' (expected consecutive, errorRate, leaky or slidingWindow)");
    }
}

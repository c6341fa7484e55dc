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
    ERROR_RATE(1, "errorRate");

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
        throw new IllegalArgumentException("unknown strategy '" + name + "' (expected consecutive or errorRate)");
    }
}

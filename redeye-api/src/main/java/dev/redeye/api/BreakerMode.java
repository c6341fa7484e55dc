package dev.redeye.api;

/**
 * What a breaker does with its trip rules, fleet-wide. A mode is stored with the state (see
 * {@link BreakerState#mode()}) like a forced state, so an operator's change reaches every instance, and it never
 * expires with the state. Each constant has a stable {@link #code()} and {@link #wireName()}; never rely on
 * {@link #ordinal()}.
 */
public enum BreakerMode {
    /**
     * No operator's mode is stored: the policy's mode applies ({@link Policy#MODE}). Only a stored state holds
     * this value; a policy's mode is one of the others.
     */
    DEFAULT(0, "default"),
    /** Count outcomes, open and reject calls as the strategy says. */
    NORMAL(1, "normal"),
    /**
     * Count outcomes and evaluate the strategy, but never open and never reject: where the breaker would open,
     * a {@link TransitionKind#WOULD_OPEN} transition is published and the counters start again.
     */
    METRICS_ONLY(2, "metrics_only"),
    /** Admit every call and record nothing. */
    DISABLED(3, "disabled");

    private final int code;
    private final String wireName;

    BreakerMode(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    /** The stable code of this mode. */
    public int code() {
        return code;
    }

    /** The stable lower-case name of this mode, for example {@code metrics_only}. */
    public String wireName() {
        return wireName;
    }

    /**
     * Looks a mode up by its code.
     *
     * @throws IllegalArgumentException if no mode has that code
     */
    public static BreakerMode fromCode(int code) {
        for (BreakerMode m : values()) {
            if (m.code == code) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown breaker mode code " + code);
    }

    /**
     * Looks a mode up by its wire name (case-insensitive, {@code -} read as {@code _}).
     *
     * @throws IllegalArgumentException if the name is unknown
     */
    public static BreakerMode fromName(String name) {
        String n = name.replace('-', '_');
        for (BreakerMode m : values()) {
            if (m.wireName.equalsIgnoreCase(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown breaker mode '" + name
                + "' (expected default, normal, metrics_only or disabled)");
    }
}

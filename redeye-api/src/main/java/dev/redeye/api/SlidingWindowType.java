package dev.redeye.api;

/**
 * The two shapes of a {@link SlidingWindow}, named as Resilience4j names them. Each constant has a stable
 * {@link #code()} and {@link #wireName()}; never rely on {@link #ordinal()}.
 */
public enum SlidingWindowType {
    /** The last N outcomes, N from 1 to {@link SlidingWindow#MAX_COUNT_SIZE}. */
    COUNT_BASED(0, "count"),
    /**
     * The outcomes of the last N seconds, N from 1 to {@link SlidingWindow#MAX_TIME_SECONDS}, counted in at most
     * {@link SlidingWindow#MAX_BUCKETS} buckets of whole seconds.
     */
    TIME_BASED(1, "time");

    private final int code;
    private final String wireName;

    SlidingWindowType(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    /** The stable code of this type. */
    public int code() {
        return code;
    }

    /** The stable name of this type: {@code count} or {@code time}. */
    public String wireName() {
        return wireName;
    }

    /**
     * Looks a type up by its code.
     *
     * @throws IllegalArgumentException if no type has that code
     */
    public static SlidingWindowType fromCode(int code) {
        for (SlidingWindowType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown sliding window type code " + code);
    }

    /**
     * Looks a type up by its wire name or its constant name ({@code count}, {@code COUNT_BASED}, {@code time},
     * {@code TIME_BASED}; case-insensitive, {@code -} read as {@code _}).
     *
     * @throws IllegalArgumentException if the name is unknown
     */
    public static SlidingWindowType fromName(String name) {
        String n = name.replace('-', '_');
        for (SlidingWindowType t : values()) {
            if (t.wireName.equalsIgnoreCase(n) || t.name().equalsIgnoreCase(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown sliding window type '" + name + "' (expected count or time)");
    }
}

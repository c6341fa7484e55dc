package dev.redeye.http;

import java.util.Locale;

/**
 * The two levels a request is guarded on: the {@linkplain #SERVICE service} it calls (a whole upstream API) and
 * the {@linkplain #ENDPOINT endpoint} within it. Each level has its own rules and breakers; a request runs only
 * if the breaker of both levels it matched admits it.
 */
public enum Level {
    /** A whole upstream service; its rules may exempt endpoints with a skip list. */
    SERVICE("service"),
    /** One endpoint (or group of endpoints) of a service. */
    ENDPOINT("endpoint");

    private final String wireName;

    Level(String wireName) {
        this.wireName = wireName;
    }

    /**
     * The name used in configuration ({@code type: service}) and as the prefix of a breaker's operation name
     * ({@code service:payments}).
     */
    public String wireName() {
        return wireName;
    }

    /**
     * The level named {@code name} ({@code service} or {@code endpoint}, case-insensitive).
     *
     * @throws IllegalArgumentException for any other name
     */
    public static Level fromName(String name) {
        String n = String.valueOf(name).trim().toLowerCase(Locale.ROOT);
        for (Level l : values()) {
            if (l.wireName.equals(n)) {
                return l;
            }
        }
        throw new IllegalArgumentException("unknown rule type '" + name + "' (expected service or endpoint)");
    }
}

package dev.redeye.api;

import java.util.Locale;
import java.util.Objects;

/**
 * Checks on operation names (the {@code key} of every {@link Store} method) that stores share. Pure; no
 * state.
 */
public final class OperationNames {

    private OperationNames() {
    }

    /**
     * Refuses a name that is not well-formed UTF-16. A backend that stores keys as UTF-8 (Redis through Jedis,
     * Hazelcast's string serialization, PostgreSQL text) turns an unpaired surrogate into {@code ?}, so
     * {@code "a"} plus an unpaired U+D800 and {@code "a?"} would silently share one breaker. Pairs (non-BMP
     * characters such as emoji) and U+0000 are accepted.
     *
     * @return {@code name}, for chaining
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException naming the index and code of the first unpaired surrogate
     */
    public static String requireWellFormed(String name) {
        Objects.requireNonNull(name, "key");
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw unpaired("high", c, i);
            }
            if (Character.isLowSurrogate(c)) {
                throw unpaired("low", c, i);
            }
        }
        return name;
    }

    private static IllegalArgumentException unpaired(String which, char c, int index) {
        return new IllegalArgumentException("operation name is not well-formed UTF-16: unpaired " + which
                + " surrogate U+" + Integer.toHexString(c).toUpperCase(Locale.ROOT) + " at index " + index);
    }
}

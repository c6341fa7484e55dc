package dev.redeye.api;

import dev.redeye.spi.Store;
import java.util.Locale;
import java.util.Objects;

/**
 * The rule for operation names (the {@code key} of every {@link Store} method), and the one way to show a
 * name or any stored text in a message or a log line. Pure; no state.
 *
 * <h2>The engine's rule</h2>
 * The circuit breaker checks every operation name with {@link #requireValid(String)} once, when it first
 * sees the name, before any store call, and throws {@link IllegalArgumentException} to the caller. A valid
 * name is
 * <ul>
 * <li>not empty;</li>
 * <li>at most {@value #MAX_LENGTH} UTF-16 code units long ({@link String#length()}), so at most
 * {@value #MAX_UTF8_BYTES} bytes of UTF-8: a name is stored with the state, carried in every feed event and
 * written to logs, and this bound keeps each of them small and within every store's limits;</li>
 * <li>well-formed UTF-16: no unpaired surrogate, which UTF-8 (the encoding of Redis through Jedis,
 * Hazelcast's string serialization, PostgreSQL text and DynamoDB strings) cannot carry: a driver would turn it
 * into {@code ?} and two names would silently share one breaker;</li>
 * <li>free of U+0000, which PostgreSQL text cannot store.</li>
 * </ul>
 * Every store shipped with redeye accepts every valid name (the TCK checks the longest ones); a store may
 * refuse more, but then it must document it, since a name the engine accepts and the store refuses turns
 * every call of that operation into a store error.
 */
public final class OperationNames {
    /** The longest valid operation name, in UTF-16 code units ({@link String#length()}). */
    public static final int MAX_LENGTH = 1024;
    /** The most UTF-8 bytes a valid name can take: three per code unit (a surrogate pair takes four for two). */
    public static final int MAX_UTF8_BYTES = 3 * MAX_LENGTH;
    /** How many characters of a name {@link #abbreviate(String)} keeps. */
    private static final int SHOWN = 80;

    private OperationNames() {
    }

    /**
     * Checks {@code name} against the engine's rule (see the class comment).
     *
     * @return {@code name}, for chaining
     * @throws NullPointerException     if {@code name} is null (the message is {@code "operation"})
     * @throws IllegalArgumentException saying which part of the rule the name breaks, with the index of the
     *                                  offending character; the message shows the name abbreviated
     */
    public static String requireValid(String name) {
        Objects.requireNonNull(name, "operation");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("operation name must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("operation name is " + name.length() + " characters long; at most "
                    + MAX_LENGTH + " are allowed: '" + abbreviate(name) + "'");
        }
        int nul = name.indexOf('\0');
        if (nul >= 0) {
            throw new IllegalArgumentException("operation name contains U+0000 at index " + nul + ": '"
                    + abbreviate(name) + "'");
        }
        return requireWellFormed(name);
    }

    /**
     * Refuses a name that is not well-formed UTF-16, the part of the rule a store needs for its own encoding
     * (see the class comment). Pairs (non-BMP characters such as emoji) and U+0000 are accepted: a store that
     * cannot store U+0000 checks it itself.
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

    /**
     * {@code text} (an operation name, a key, a stored value) as a message or log line shows it: its first 80
     * characters; see {@link #abbreviate(String, int)}.
     */
    public static String abbreviate(String text) {
        return abbreviate(text, SHOWN);
    }

    /**
     * {@code text} as a message or log line shows it: control characters escaped ({@code \n}, {@code \r},
     * {@code \t}, others as {@code \}{@code uXXXX}), so that a hostile name cannot forge a log line; cut after
     * {@code max} characters of the original (never inside a surrogate pair) and then marked with its full
     * length, as in {@code "abc...(1024 chars)"}. {@code null} shows as {@code "null"}.
     *
     * @param max how many characters of {@code text} to keep, at least 1
     * @throws IllegalArgumentException if {@code max} is below 1
     */
    public static String abbreviate(String text, int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be at least 1, was " + max);
        }
        if (text == null) {
            return "null";
        }
        int end = text.length() <= max ? text.length()
                : Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max;
        StringBuilder sb = null;
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            String escaped = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
                    : c < 0x20 || c == 0x7f ? String.format(Locale.ROOT, "\\u%04x", (int) c) : null;
            if (escaped != null && sb == null) {
                sb = new StringBuilder(end + 16).append(text, 0, i);
            }
            if (sb != null) {
                if (escaped != null) {
                    sb.append(escaped);
                } else {
                    sb.append(c);
                }
            }
        }
        String shown = sb != null ? sb.toString() : end == text.length() ? text : text.substring(0, end);
        return end == text.length() ? shown : shown + "...(" + text.length() + " chars)";
    }
}

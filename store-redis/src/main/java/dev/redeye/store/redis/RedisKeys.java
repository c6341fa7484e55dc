package dev.redeye.store.redis;

import dev.redeye.api.OperationNames;
import java.util.Objects;

/**
 * Maps operation names to Redis keys. Every key of one operation carries the same hash tag, so the state
 * hash and both claim keys of an operation live in one slot and a script touching them is Cluster-safe.
 *
 * <p>The tag is the operation name with {@code %}, <code>{</code> and <code>}</code> percent-encoded
 * ({@code %25}, {@code %7B}, {@code %7D}); the empty name is tagged {@code %}, which no encoded name can
 * equal. The encoding is injective, keeps ordinary names readable in {@code redis-cli}, and the tag never
 * contains a brace. Which part of a key Redis Cluster hashes then depends on the prefix only:
 * <ul>
 * <li>no <code>{</code> in the prefix: the encoded name (one slot per operation);</li>
 * <li>the prefix's first <code>{</code> closed by a <code>}</code> inside the prefix with something between
 * (<code>app{x}:</code>): that part of the prefix, so every key of the store, the feed stream included, is
 * in one slot (one node holds them all);</li>
 * <li>the prefix's first <code>{</code> not closed inside the prefix (<code>app{:</code>): the rest of the
 * prefix, our <code>{</code> and the encoded name, the same for every key of the operation;</li>
 * <li>the prefix's first <code>{</code> followed at once by <code>}</code> (<code>app{}:</code>): nothing,
 * since Redis ignores an empty tag and hashes each whole key, so the state and claim keys of one operation
 * land in different slots and every script fails with CROSSSLOT. {@link #checkPrefix} refuses it.</li>
 * </ul>
 */
final class RedisKeys {
    static final String STATE_SUFFIX = ":state";
    static final String CLAIMS_SUFFIX = ":trial";
    static final String CLAIM1_SUFFIX = ":trial1";
    static final String FEED_SUFFIX = "redeye:feed";

    private final String prefix;

    /**
     * @throws NullPointerException     if {@code prefix} is null
     * @throws IllegalArgumentException if {@link #checkPrefix} refuses it
     */
    RedisKeys(String prefix) {
        this.prefix = checkPrefix(prefix);
    }

    /**
     * Refuses a prefix under which the keys of one operation would not share a Redis Cluster hash slot (a
     * prefix whose first <code>{</code> is followed at once by <code>}</code>: Redis hashes each whole key, see
     * the class Javadoc), or one that is not well-formed UTF-16 (Jedis would send an unpaired surrogate as
     * {@code ?}, so two prefixes would share keys). Checked on every server, not only on a Cluster: data
     * written under such a prefix could not move to one.
     *
     * @return {@code prefix}, for chaining
     * @throws NullPointerException     if {@code prefix} is null
     * @throws IllegalArgumentException naming the prefix and the reason
     */
    static String checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        int open = prefix.indexOf('{');
        if (open >= 0 && open + 1 < prefix.length() && prefix.charAt(open + 1) == '}') {
            throw new IllegalArgumentException("prefix '" + OperationNames.abbreviate(prefix) + "' is refused: its first"
                    + " '{' is followed at once by '}', an empty hash tag, so Redis Cluster would hash each whole key"
                    + " and put the state and claim keys of one operation in different slots (every script would"
                    + " fail with CROSSSLOT). Drop the braces, or put a non-empty tag between them (app{x}: keeps"
                    + " every key of the store in one slot)");
        }
        try {
            OperationNames.requireWellFormed(prefix);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("prefix is refused: " + e.getMessage().replace("operation name", "it"),
                    e);
        }
        return prefix;
    }

    String prefix() {
        return prefix;
    }

    /**
     * {@code <prefix>{<tag>}:state}, the string holding the breaker state (its fields joined by ',': ten, or twelve
     * with a window or a mode).
     */
    String state(String operation) {
        return tagged(operation) + STATE_SUFFIX;
    }

    /** {@code <prefix>{<tag>}:trial}, the sorted set of live trial claims. */
    String claims(String operation) {
        return tagged(operation) + CLAIMS_SUFFIX;
    }

    /** {@code <prefix>{<tag>}:trial1}, the string holding the one-permit trial claim (SET NX PX). */
    String claim1(String operation) {
        return tagged(operation) + CLAIM1_SUFFIX;
    }

    /** {@code <prefix>redeye:feed}, the stream of transition events of this prefix. */
    String feed() {
        return prefix + FEED_SUFFIX;
    }

    /**
     * The SCAN {@code MATCH} pattern of this prefix's state keys: the prefix with the glob's special characters
     * escaped, then <code>{*}:state</code>. It also matches keys that are not state keys of this store (a longer
     * prefix's, say), which {@link #operationOf} then refuses.
     */
    String statePattern() {
        StringBuilder sb = new StringBuilder(prefix.length() + 16);
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.append("{*}").append(STATE_SUFFIX).toString();
    }

    /**
     * The operation whose state key {@code key} is, the inverse of {@link #state}: or null when {@code key} is not
     * the state key of an operation under this prefix (a claim key, the feed, another prefix's key).
     */
    String operationOf(String key) {
        int from = prefix.length() + 1;
        int to = key.length() - 1 - STATE_SUFFIX.length();
        if (to < from || !key.startsWith(prefix) || key.charAt(from - 1) != '{' || key.charAt(to) != '}'
                || !key.endsWith(STATE_SUFFIX)) {
            return null;
        }
        String tag = key.substring(from, to);
        String name = untag(tag);
        return name != null && tag.equals(tag(name)) ? name : null;
    }

    /** The name whose {@link #tag} {@code tag} is, or null when no name has that tag. */
    static String untag(String tag) {
        if (tag.equals("%")) {
            return "";
        }
        StringBuilder sb = new StringBuilder(tag.length());
        for (int i = 0; i < tag.length(); i++) {
            char c = tag.charAt(i);
            if (c == '{' || c == '}') {
                return null;
            }
            if (c != '%') {
                sb.append(c);
                continue;
            }
            String code = tag.regionMatches(i, "%25", 0, 3) ? "%" : tag.regionMatches(i, "%7B", 0, 3) ? "{"
                    : tag.regionMatches(i, "%7D", 0, 3) ? "}" : null;
            if (code == null) {
                return null;
            }
            sb.append(code);
            i += 2;
        }
        return sb.toString();
    }

    private String tagged(String operation) {
        Objects.requireNonNull(operation, "key");
        checkWellFormed(operation);
        StringBuilder sb = new StringBuilder(prefix.length() + operation.length() + 16);
        sb.append(prefix).append('{').append(tag(operation)).append('}');
        return sb.toString();
    }

    /**
     * Refuses a name that is not well-formed UTF-16: Jedis encodes keys and values as UTF-8, where an
     * unpaired surrogate becomes {@code ?}, so {@code "a"} plus an unpaired U+D800 and {@code "a?"} would share a breaker.
     * U+0000 is fine: Redis keys, hash values, stream fields and Lua strings are binary-safe.
     *
     * @throws IllegalArgumentException naming the index of the first unpaired surrogate
     */
    static void checkWellFormed(String operation) {
        OperationNames.requireWellFormed(operation);
    }

    /** The hash tag of an operation name (without the braces). */
    static String tag(String operation) {
        if (operation.isEmpty()) {
            return "%";
        }
        StringBuilder sb = null;
        for (int i = 0; i < operation.length(); i++) {
            char c = operation.charAt(i);
            String rep = c == '%' ? "%25" : c == '{' ? "%7B" : c == '}' ? "%7D" : null;
            if (rep != null && sb == null) {
                sb = new StringBuilder(operation.length() + 8).append(operation, 0, i);
            }
            if (sb != null) {
                if (rep != null) {
                    sb.append(rep);
                } else {
                    sb.append(c);
                }
            }
        }
        return sb == null ? operation : sb.toString();
    }
}

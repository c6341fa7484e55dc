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
 * contains a brace, so the server always hashes exactly the encoded name (or, when the prefix itself
 * contains a <code>{</code>, the same prefix-plus-name substring for every key of the operation).
 */
final class RedisKeys {
    static final String STATE_SUFFIX = ":state";
    static final String CLAIMS_SUFFIX = ":trial";
    static final String CLAIM1_SUFFIX = ":trial1";
    static final String FEED_SUFFIX = "redeye:feed";

    private final String prefix;

    RedisKeys(String prefix) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
    }

    String prefix() {
        return prefix;
    }

    /** {@code <prefix>{<tag>}:state}, the hash holding the breaker state. */
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

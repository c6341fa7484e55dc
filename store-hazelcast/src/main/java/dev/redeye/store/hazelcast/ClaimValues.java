package dev.redeye.store.hazelcast;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stored value of the claims map: the live trial claims of one operation, each with its own expiry, in one
 * {@code String} so that bare members need no redeye class.
 *
 * <pre>
 * redeye-claims/1 3f1c...-uuid=1764500000123&amp;9a2b...-uuid=1764500000456
 * </pre>
 *
 * <p>Each pair is a token (a random UUID) and the epoch ms at which that claim expires. A claim is live while
 * {@code now < expiresAt}; the entry's own TTL only collects the garbage of a key whose claims all expired.
 */
final class ClaimValues {
    static final String PREFIX = "redeye-claims/" + StateValues.FORMAT + " ";
    private static final String FAMILY = "redeye-claims/";

    private ClaimValues() {
    }

    /**
     * The claims in a stored value, in insertion order; empty for null.
     *
     * @throws StoreException if the value is not a claims value of this format
     */
    static Map<String, Long> parse(Object raw, String where) {
        Map<String, Long> m = new LinkedHashMap<>();
        if (raw == null) {
            return m;
        }
        if (!(raw instanceof String) || !((String) raw).startsWith(PREFIX)) {
            String what = raw instanceof String ? "'" + OperationNames.abbreviate((String) raw, 40) + "'"
                    : "a " + raw.getClass().getName();
            if (raw instanceof String && ((String) raw).startsWith(FAMILY)) {
                throw new StoreException("the trial claims at " + where + " are in another format (" + what
                        + "), written by another redeye version; run one redeye-store-hazelcast version on every"
                        + " client and member of this map");
            }
            throw new StoreException("malformed trial claims at " + where + ": " + what);
        }
        String body = ((String) raw).substring(PREFIX.length());
        if (body.isEmpty()) {
            return m;
        }
        for (String pair : body.split("&", -1)) {
            int eq = pair.indexOf('=');
            try {
                if (eq <= 0) {
                    throw new NumberFormatException("not token=expiry");
                }
                m.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
            } catch (NumberFormatException e) {
                throw new StoreException("malformed trial claims at " + where + ": '"
                        + OperationNames.abbreviate(pair, 60) + "' (" + e.getMessage() + ")", e);
            }
        }
        return m;
    }

    /**
     * Adds a claim holding {@code token} if fewer than {@code permits} claims are live at {@code now}, after
     * dropping the expired ones.
     *
     * @return whether the claim was added
     */
    static boolean tryAdd(Map<String, Long> claims, int permits, String token, long now, long ttlMillis) {
        prune(claims, now);
        if (claims.size() >= permits) {
            return false;
        }
        claims.put(token, now + ttlMillis);
        return true;
    }

    /** Removes the claims that expired at {@code now}; returns whether any was removed. */
    static boolean prune(Map<String, Long> claims, long now) {
        return claims.values().removeIf(expiresAt -> expiresAt <= now);
    }

    /** The latest expiry of any claim; {@code Long.MIN_VALUE} for none. */
    static long latestExpiry(Map<String, Long> claims) {
        long max = Long.MIN_VALUE;
        for (long e : claims.values()) {
            max = Math.max(max, e);
        }
        return max;
    }

    /** The value to store, or null when there is no claim left (the entry is then removed). */
    static String encode(Map<String, Long> claims) {
        if (claims.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder(PREFIX.length() + claims.size() * 52).append(PREFIX);
        boolean first = true;
        for (Map.Entry<String, Long> e : claims.entrySet()) {
            if (!first) {
                sb.append('&');
            }
            first = false;
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.toString();
    }
}

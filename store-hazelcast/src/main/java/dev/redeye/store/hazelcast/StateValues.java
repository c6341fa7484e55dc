package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.support.StateCodec;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stored values of the map: one {@code String} per operation ({@link #encode} / {@link #decode} of a
 * {@link StoredValue}), so that bare members compare and store them without any redeye class. Runs on clients
 * and, inside the entry processors, on members: like every class a processor reaches, it uses nothing but
 * {@code redeye-api}, this module and Hazelcast (no SLF4J, which a member need not have).
 *
 * <pre>
 * redeye-state/2 failures=0&amp;lastFailureAt=0&amp;open=0&amp;openedAt=0&amp;openCount=0&amp;errorRate=0.0&amp;samples=0&amp;trialSuccesses=0&amp;forced=0&amp;version=5&amp;expiresAt=1764500000123
 * redeye-state/2 kind=opened&amp;from=0&amp;failures=5&amp;...&amp;claim.3f1c...=1764500000456     the write that was a transition; a claim
 * redeye-state/3 failures=0&amp;...&amp;forced=0&amp;window=c5.7.20011&amp;mode=2&amp;version=9        a state with a window or a stored mode
 * redeye-state/4 failures=3&amp;...&amp;contributors=pod-b,1,1,1764500000456;pod-a,2,2,1764500000123&amp;version=9
 *                                                                      a state with a quorum's contributions
 * redeye-tombstone/2 version=17&amp;expiresAt=1764586400000               a deleted key's last version
 * redeye-tombstone/2 claim.3f1c...=1764500000456                       claims of a key without a state
 * </pre>
 *
 * <p>Field names and encodings are {@link StateCodec}'s; {@code kind} is a {@link TransitionKind#wireName()}
 * and {@code from} a {@link BreakerStatus#code()}; {@code expiresAt} (epoch ms) is absent on a pinned state
 * ({@link BreakerState#pinned()}: forced, or a stored mode); each {@code claim.<token>} holds the claim's expiry
 * (epoch ms), the token being a random UUID. Values hold only digits, letters and {@code . - _ = &}, and in
 * {@code contributors} the characters of {@link Contribution#encodeAll} ({@code , ;} and an instance id's
 * {@code : @ # /}), never {@code &}, {@code =} or a line break: no escaping is needed.
 *
 * <p><b>Format versions.</b> The number after the slash is the format version. A state with contributions
 * ({@link BreakerState#contributors()}, kept under a quorum) is written in format {@value #FORMAT}, whatever its
 * window and mode; a state whose {@link StateCodec} fields include {@code window} or {@code mode} but no
 * contributions in format {@value #WINDOW_FORMAT}; every other state and every tombstone in format
 * {@value #BASE_FORMAT}. Each reader refuses, with a {@link StoreException} naming the format, a value of a format
 * it does not read, instead of dropping the fields it does not know: a reader of format {@value #BASE_FORMAT}
 * alone (the release before sliding windows) refuses formats {@value #WINDOW_FORMAT} and {@value #FORMAT}, a
 * reader of formats {@value #BASE_FORMAT} and {@value #WINDOW_FORMAT} (the release before quorums) refuses format
 * {@value #FORMAT}, so no reader writes a state back without its window, mode or contributions. This code reads
 * all three, refuses a state in a format that does not match its fields (a {@code contributors} field outside
 * format {@value #FORMAT} or missing from it, a {@code window} or {@code mode} in format {@value #BASE_FORMAT}),
 * and refuses any other version saying so, rather than guessing.
 */
final class StateValues {
    /** The newest format version this code writes and reads: a state with contributions. */
    static final int FORMAT = 4;
    /** The format version of a state with a window or a stored mode and without contributions. */
    static final int WINDOW_FORMAT = 3;
    /** The format version of a state without a window, a stored mode or contributions, and of a tombstone. */
    static final int BASE_FORMAT = 2;
    /** A state with contributions. */
    static final String QUORUM_STATE_PREFIX = "redeye-state/" + FORMAT + " ";
    /** A state with a window or a stored mode and without contributions. */
    static final String STATE_PREFIX = "redeye-state/" + WINDOW_FORMAT + " ";
    /** A state without a window, a stored mode or contributions. */
    static final String BASE_STATE_PREFIX = "redeye-state/" + BASE_FORMAT + " ";
    static final String TOMBSTONE_PREFIX = "redeye-tombstone/" + BASE_FORMAT + " ";
    /**
     * Every value written by a transition starts with this, {@link #BASE_TRANSITION_PREFIX} or
     * {@link #QUORUM_TRANSITION_PREFIX}: the feed's listener filter matches them.
     */
    static final String TRANSITION_PREFIX = STATE_PREFIX + StateCodec.EVENT_KIND + "=";
    /** A transition's value of a state without a window, a stored mode or contributions. */
    static final String BASE_TRANSITION_PREFIX = BASE_STATE_PREFIX + StateCodec.EVENT_KIND + "=";
    /** A transition's value of a state with contributions. */
    static final String QUORUM_TRANSITION_PREFIX = QUORUM_STATE_PREFIX + StateCodec.EVENT_KIND + "=";
    /** The field of a state's (or tombstone's) expiry, epoch ms. */
    static final String EXPIRES_AT = "expiresAt";
    /** The prefix of a claim's field name; the rest is its token. */
    static final String CLAIM = "claim.";

    private static final String STATE_FAMILY = "redeye-state/";
    private static final String TOMBSTONE_FAMILY = "redeye-tombstone/";

    private StateValues() {
    }

    /** The value to store for {@code v}, or null when it holds nothing (the entry is then removed). */
    static String encode(StoredValue v) {
        if (v.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder(220 + v.claims.size() * 60);
        if (v.state != null) {
            sb.append(prefixOf(v.state));
            if (v.kind != null) {
                sb.append(StateCodec.EVENT_KIND).append('=').append(v.kind.wireName())
                        .append('&').append(StateCodec.EVENT_FROM).append('=').append(v.from.code()).append('&');
            }
            appendFields(sb, v.state);
            if (v.expiresAt != StoredValue.NEVER) {
                sb.append('&').append(EXPIRES_AT).append('=').append(v.expiresAt);
            }
        } else {
            sb.append(TOMBSTONE_PREFIX);
            if (v.tombstone != BreakerState.UNKNOWN_VERSION) {
                sb.append(StateCodec.VERSION).append('=').append(v.tombstone);
                if (v.expiresAt != StoredValue.NEVER) {
                    sb.append('&').append(EXPIRES_AT).append('=').append(v.expiresAt);
                }
            }
        }
        boolean first = v.state == null && v.tombstone == BreakerState.UNKNOWN_VERSION;
        for (Map.Entry<String, Long> c : v.claims.entrySet()) {
            if (!first) {
                sb.append('&');
            }
            first = false;
            sb.append(CLAIM).append(c.getKey()).append('=').append(c.getValue());
        }
        return sb.toString();
    }

    /**
     * The prefix a state is written with: {@link #QUORUM_STATE_PREFIX} when it has contributions, else
     * {@link #STATE_PREFIX} when its fields include {@code window} or {@code mode}, else {@link #BASE_STATE_PREFIX}.
     */
    static String prefixOf(BreakerState s) {
        if (!s.contributors().isEmpty()) {
            return QUORUM_STATE_PREFIX;
        }
        return s.window() != null || s.mode() != BreakerMode.DEFAULT ? STATE_PREFIX : BASE_STATE_PREFIX;
    }

    /**
     * Decodes a stored value.
     *
     * @param raw   what the map holds (null for nothing)
     * @param where names the data in messages (never a secret)
     * @throws StoreException if the value is not one redeye writes, or was written in another format version
     */
    static StoredValue decode(Object raw, String where) {
        if (raw == null) {
            return StoredValue.NOTHING;
        }
        if (!(raw instanceof String)) {
            throw new StoreException("malformed breaker state at " + where + ": the map holds a "
                    + raw.getClass().getName() + ", not a redeye value (a String)");
        }
        String v = (String) raw;
        boolean isQuorumState = v.startsWith(QUORUM_STATE_PREFIX);
        boolean isState = !isQuorumState && v.startsWith(STATE_PREFIX);
        boolean isBaseState = !isQuorumState && !isState && v.startsWith(BASE_STATE_PREFIX);
        boolean anyState = isQuorumState || isState || isBaseState;
        if (!anyState && !v.startsWith(TOMBSTONE_PREFIX)) {
            checkFamily(v, STATE_FAMILY, where);
            checkFamily(v, TOMBSTONE_FAMILY, where);
            throw new StoreException("malformed breaker state at " + where + ": not a redeye value ('"
                    + OperationNames.abbreviate(v, 40) + "')");
        }
        // the three state prefixes have the same length
        Map<String, String> f = fields(v.substring(anyState ? STATE_PREFIX.length() : TOMBSTONE_PREFIX.length()),
                where);
        if (isBaseState && (f.containsKey(StateCodec.WINDOW) || f.containsKey(StateCodec.MODE))) {
            throw new StoreException("malformed breaker state at " + where + ": a " + BASE_STATE_PREFIX.trim()
                    + " value has no '" + StateCodec.WINDOW + "' or '" + StateCodec.MODE + "' field (those are "
                    + STATE_PREFIX.trim() + "'s and " + QUORUM_STATE_PREFIX.trim() + "'s)");
        }
        if (anyState && isQuorumState != f.containsKey(StateCodec.CONTRIBUTORS)) {
            throw new StoreException("malformed breaker state at " + where + ": " + (isQuorumState
                    ? "a " + QUORUM_STATE_PREFIX.trim() + " value needs a '" + StateCodec.CONTRIBUTORS + "' field"
                    : "a " + (isState ? STATE_PREFIX : BASE_STATE_PREFIX).trim() + " value has no '"
                            + StateCodec.CONTRIBUTORS + "' field (that is " + QUORUM_STATE_PREFIX.trim() + "'s)"));
        }
        Map<String, Long> claims = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, String>> it = f.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, String> e = it.next();
            if (e.getKey().startsWith(CLAIM) && e.getKey().length() > CLAIM.length()) {
                claims.put(e.getKey().substring(CLAIM.length()), number(e.getValue(), "trial claim", where));
                it.remove();
            }
        }
        String expires = f.remove(EXPIRES_AT);
        long expiresAt = expires == null ? StoredValue.NEVER : number(expires, EXPIRES_AT, where);
        if (anyState) {
            if (!f.containsKey(StateCodec.EVENT_KIND)) {
                return new StoredValue(quorumChecked(StateCodec.fromFields(f, where), isQuorumState, where), null,
                        null, expiresAt, BreakerState.UNKNOWN_VERSION, claims);
            }
            f.put(StateCodec.EVENT_OPERATION, ""); // the key names the operation; the codec wants the field
            TransitionEvent e = StateCodec.eventFromFields(f, where);
            return new StoredValue(quorumChecked(e.state(), isQuorumState, where), e.kind(), e.from(), expiresAt,
                    BreakerState.UNKNOWN_VERSION, claims);
        }
        String version = f.remove(StateCodec.VERSION);
        if (!f.isEmpty()) {
            throw new StoreException("malformed tombstone at " + where + ": unknown fields " + f.keySet());
        }
        long n = version == null ? BreakerState.UNKNOWN_VERSION : number(version, "tombstone version", where);
        return new StoredValue(null, null, null, expiresAt, n, claims);
    }

    /**
     * {@code s}, read from a value of format {@value #FORMAT} ({@code quorum}) or not: a format-{@value #FORMAT}
     * value holds at least one contribution ({@code contributors=} with none is no value this code writes).
     */
    private static BreakerState quorumChecked(BreakerState s, boolean quorum, String where) {
        if (quorum && s.contributors().isEmpty()) {
            throw new StoreException("malformed breaker state at " + where + ": a " + QUORUM_STATE_PREFIX.trim()
                    + " value holds at least one contribution, its '" + StateCodec.CONTRIBUTORS + "' field is empty");
        }
        return s;
    }

    private static long number(String s, String what, String where) {
        try {
            long n = Long.parseLong(s);
            if (n < 0) {
                throw new NumberFormatException("negative");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new StoreException("malformed " + what + " at " + where + ": '" + OperationNames.abbreviate(s, 40) + "'", e);
        }
    }

    /** Encodes the result of an atomic change for the trip back from a member: kind, previous, next. */
    static String result(StateChange c) {
        StringBuilder sb = new StringBuilder(400).append('R')
                .append(c.transition() == null ? "-" : c.transition().wireName()).append('\n');
        appendFields(sb, c.previous());
        sb.append('\n');
        appendFields(sb, c.state());
        return sb.toString();
    }

    /** An error found on a member (malformed data), for the trip back; the client throws it. */
    static String error(String message) {
        return "E" + message;
    }

    /**
     * Decodes what {@link #result} or {@link #error} produced.
     *
     * @throws StoreException for an error result or a reply this code does not understand
     */
    static StateChange readResult(Object reply, String where) {
        if (!(reply instanceof String) || ((String) reply).isEmpty()) {
            throw new StoreException("unexpected reply from the member at " + where + ": " + reply);
        }
        String r = (String) reply;
        if (r.charAt(0) == 'E') {
            throw new StoreException(r.substring(1));
        }
        String[] parts = r.split("\n", -1);
        if (r.charAt(0) != 'R' || parts.length != 3) {
            throw new StoreException("unexpected reply from the member at " + where + ": " + OperationNames.abbreviate(r, 80));
        }
        String kind = parts[0].substring(1);
        BreakerState prev = StateCodec.fromFields(fields(parts[1], where), where);
        BreakerState next = StateCodec.fromFields(fields(parts[2], where), where);
        try {
            return new StateChange(prev, next, kind.equals("-") ? null : TransitionKind.fromWireName(kind));
        } catch (IllegalArgumentException e) {
            throw new StoreException("unexpected reply from the member at " + where + ": " + e.getMessage(), e);
        }
    }

    private static void appendFields(StringBuilder sb, BreakerState s) {
        boolean first = true;
        for (Map.Entry<String, String> e : StateCodec.toFields(s).entrySet()) {
            if (!first) {
                sb.append('&');
            }
            first = false;
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
    }

    private static Map<String, String> fields(String body, String where) {
        Map<String, String> m = new LinkedHashMap<>();
        if (body.isEmpty()) {
            return m;
        }
        for (String pair : body.split("&", -1)) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new StoreException("malformed breaker state at " + where + ": '" + OperationNames.abbreviate(pair, 40)
                        + "' is not name=value");
            }
            m.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return m;
    }

    /** A value of a known family but another format version: written by another redeye version. */
    private static void checkFamily(String v, String family, String where) {
        if (!v.startsWith(family)) {
            return;
        }
        int space = v.indexOf(' ');
        String version = space < 0 ? v.substring(family.length()) : v.substring(family.length(), space);
        String reads = family.equals(STATE_FAMILY)
                ? family + BASE_FORMAT + ", " + family + WINDOW_FORMAT + " and " + family + FORMAT
                : family + BASE_FORMAT;
        throw new StoreException("the value at " + where + " is in " + family + version + " format, written by"
                + " another redeye version; this redeye-store-hazelcast reads " + reads + " only: run"
                + " one redeye-store-hazelcast version on every client and member of this map");
    }

    /** Names an operation in messages: quoted, abbreviated, newlines escaped. */
    static String where(String key) {
        return "operation '" + OperationNames.abbreviate(String.valueOf(key), 100) + "'";
    }
}

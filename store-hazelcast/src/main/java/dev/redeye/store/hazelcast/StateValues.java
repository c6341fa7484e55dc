package dev.redeye.store.hazelcast;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StateChange;
import dev.redeye.api.StateCodec;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stored values of the state map: one {@code String} per operation, so that bare members compare and
 * store them without any redeye class. Runs on clients and, inside the entry processors, on members: like
 * every class a processor reaches, it uses nothing but {@code redeye-api}, this module and Hazelcast (no
 * SLF4J, which a member need not have).
 *
 * <pre>
 * redeye-state/1 failures=0&amp;lastFailureAt=0&amp;open=0&amp;openedAt=0&amp;openCount=0&amp;errorRate=0.0&amp;samples=0&amp;trialSuccesses=0&amp;forced=0&amp;version=5
 * redeye-state/1 kind=opened&amp;from=0&amp;failures=5&amp;...            the write that was a transition
 * redeye-tombstone/1 version=17                                   a deleted key's last version
 * </pre>
 *
 * <p>Field names and encodings are {@link StateCodec}'s; {@code kind} is a {@link TransitionKind#wireName()}
 * and {@code from} a {@link BreakerStatus#code()}. Values hold only digits, letters, {@code . - _ = &}: no
 * escaping is needed. The number after the slash is the format version: a reader refuses any other with a
 * {@link StoreException} that says so, rather than guessing.
 */
final class StateValues {
    /** The format version this code writes and reads. */
    static final int FORMAT = 1;
    static final String STATE_PREFIX = "redeye-state/" + FORMAT + " ";
    static final String TOMBSTONE_PREFIX = "redeye-tombstone/" + FORMAT + " ";
    /** Every value written by a transition starts with this: the feed's listener filter matches it. */
    static final String TRANSITION_PREFIX = STATE_PREFIX + StateCodec.EVENT_KIND + "=";

    private static final String STATE_FAMILY = "redeye-state/";
    private static final String TOMBSTONE_FAMILY = "redeye-tombstone/";

    private StateValues() {
    }

    /** A decoded value: a live state (with the transition that wrote it, if any), a tombstone, or nothing. */
    static final class Decoded {
        static final Decoded ABSENT = new Decoded(null, null, null, BreakerState.UNKNOWN_VERSION);

        final BreakerState state;
        final TransitionKind kind;
        final BreakerStatus from;
        /** The last version of a deleted key; {@link BreakerState#UNKNOWN_VERSION} when none. */
        final long tombstone;

        private Decoded(BreakerState state, TransitionKind kind, BreakerStatus from, long tombstone) {
            this.state = state;
            this.kind = kind;
            this.from = from;
            this.tombstone = tombstone;
        }

        boolean isLive() {
            return state != null;
        }

        /**
         * The version a new life of the key starts at: above the tombstone's version, and at least
         * {@code clockMicros} (see the package Javadoc on versions).
         */
        long newLifeBase(long clockMicros) {
            return Math.max(Math.max(clockMicros, 0L), tombstone == BreakerState.UNKNOWN_VERSION ? 0L : tombstone + 1);
        }

        /** The state an atomic operation starts from: the live state, or a new life at {@link #newLifeBase}. */
        BreakerState current(long clockMicros) {
            return state != null ? state : BreakerState.initial(newLifeBase(clockMicros));
        }

        /** The event this value stands for, or null if it was not written by a transition. */
        TransitionEvent event(String operation) {
            return kind == null ? null : new TransitionEvent(operation, kind, from, state);
        }
    }

    /** The value of a state written by a plain write (not a transition). */
    static String state(BreakerState s) {
        StringBuilder sb = new StringBuilder(200).append(STATE_PREFIX);
        appendFields(sb, s);
        return sb.toString();
    }

    /**
     * The value an atomic change writes: the new state, marked with the transition's kind and prior status
     * when it was one (so the feed can filter and rebuild the event from the value alone).
     */
    static String written(StateChange change, TransitionEvent event) {
        if (event == null) {
            return state(change.state());
        }
        StringBuilder sb = new StringBuilder(220).append(STATE_PREFIX)
                .append(StateCodec.EVENT_KIND).append('=').append(event.kind().wireName())
                .append('&').append(StateCodec.EVENT_FROM).append('=').append(event.from().code()).append('&');
        appendFields(sb, change.state());
        return sb.toString();
    }

    /** The value of a deleted key that remembers its last version. */
    static String tombstone(long version) {
        return TOMBSTONE_PREFIX + StateCodec.VERSION + "=" + version;
    }

    /**
     * Decodes a stored value.
     *
     * @param raw   what the map holds (null for nothing)
     * @param where names the data in messages (never a secret)
     * @throws StoreException if the value is not one redeye writes, or was written in another format version
     */
    static Decoded decode(Object raw, String where) {
        if (raw == null) {
            return Decoded.ABSENT;
        }
        if (!(raw instanceof String)) {
            throw new StoreException("malformed breaker state at " + where + ": the map holds a "
                    + raw.getClass().getName() + ", not a redeye value (a String)");
        }
        String v = (String) raw;
        if (v.startsWith(STATE_PREFIX)) {
            Map<String, String> f = fields(v.substring(STATE_PREFIX.length()), where);
            if (!f.containsKey(StateCodec.EVENT_KIND)) {
                return new Decoded(StateCodec.fromFields(f, where), null, null, BreakerState.UNKNOWN_VERSION);
            }
            f.put(StateCodec.EVENT_OPERATION, ""); // the key names the operation; the codec wants the field
            TransitionEvent e = StateCodec.eventFromFields(f, where);
            return new Decoded(e.state(), e.kind(), e.from(), BreakerState.UNKNOWN_VERSION);
        }
        if (v.startsWith(TOMBSTONE_PREFIX)) {
            String version = fields(v.substring(TOMBSTONE_PREFIX.length()), where).get(StateCodec.VERSION);
            try {
                long n = Long.parseLong(String.valueOf(version));
                if (n < 0) {
                    throw new NumberFormatException("negative version " + n);
                }
                return new Decoded(null, null, null, n);
            } catch (NumberFormatException e) {
                throw new StoreException("malformed tombstone at " + where + ": version '" + version + "'", e);
            }
        }
        checkFamily(v, STATE_FAMILY, where);
        checkFamily(v, TOMBSTONE_FAMILY, where);
        throw new StoreException("malformed breaker state at " + where + ": not a redeye value ('"
                + OperationNames.abbreviate(v, 40) + "')");
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
        throw new StoreException("the value at " + where + " is in " + family + version + " format, written by"
                + " another redeye version; this redeye-store-hazelcast reads " + family + FORMAT + " only: run"
                + " one redeye-store-hazelcast version on every client and member of this map");
    }

    /** Names an operation in messages: quoted, abbreviated, newlines escaped. */
    static String where(String key) {
        return "operation '" + OperationNames.abbreviate(String.valueOf(key), 100) + "'";
    }
}

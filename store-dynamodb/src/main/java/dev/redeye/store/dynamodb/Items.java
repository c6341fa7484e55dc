package dev.redeye.store.dynamodb;

import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StateCodec;
import dev.redeye.api.StoreException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The stored layout (layout 1) of an operation's item, one item per operation name:
 *
 * <table>
 * <caption>Attributes of an operation's item</caption>
 * <tr><th>attribute</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code pk}</td><td>S</td><td>partition key, see {@link Keys}</td></tr>
 * <tr><td>{@code op}</td><td>S</td><td>the operation name, whole</td></tr>
 * <tr><td>{@code lay}</td><td>N</td><td>layout, {@code 1}</td></tr>
 * <tr><td>{@code st}</td><td>M of S</td><td>the state, field names and encodings of {@link StateCodec}; absent
 * when the key has no state (never written, deleted, or only claims)</td></tr>
 * <tr><td>{@code v}</td><td>N</td><td>the version of the state, kept after a delete (a tombstone) so that the next
 * life of the key starts above it</td></tr>
 * <tr><td>{@code exp}</td><td>N</td><td>epoch ms (store clock) from which a non-forced state reads as absent;
 * never set on a forced state</td></tr>
 * <tr><td>{@code wc}</td><td>N</td><td>write counter, + 1 on every state write: the compare-and-set token of atomic
 * writes (the version moves only on transitions, so it cannot be that token)</td></tr>
 * <tr><td>{@code lw}</td><td>L of S</td><td>random ids of the last 8 atomic calls that wrote the state, so that a
 * call whose write landed although its answer was lost (a timed-out attempt the SDK retried) recognizes its own
 * write instead of applying the rule twice</td></tr>
 * <tr><td>{@code cl}</td><td>M of N</td><td>trial claims: token to expiry, epoch ms (store clock)</td></tr>
 * <tr><td>{@code gc}</td><td>N</td><td>epoch seconds: the DynamoDB TTL attribute, garbage collection only (never
 * read for correctness; set {@link DynamoDbStore.Builder#retention retention} after the state's expiry; absent on
 * a forced state)</td></tr>
 * </table>
 */
final class Items {
    static final String PK = "pk";
    static final String OP = "op";
    static final String LAYOUT = "lay";
    static final String STATE = "st";
    static final String VERSION = "v";
    static final String EXPIRES = "exp";
    static final String WRITES = "wc";
    static final String CLAIMS = "cl";
    static final String GC = "gc";
    static final String LAST_WRITERS = "lw";
    /** How many writer ids {@code lw} keeps. */
    static final int WRITER_MEMORY = 8;
    static final int LAYOUT_1 = 1;

    private Items() {
    }

    static AttributeValue s(String v) {
        return AttributeValue.builder().s(v).build();
    }

    static AttributeValue n(long v) {
        return AttributeValue.builder().n(Long.toString(v)).build();
    }

    static Map<String, AttributeValue> key(String partitionKey) {
        Map<String, AttributeValue> k = new HashMap<>(2);
        k.put(PK, s(partitionKey));
        return k;
    }

    /** The state as the {@code st} map: every {@link StateCodec} field as a string. */
    static AttributeValue encodeState(BreakerState state) {
        Map<String, AttributeValue> m = new LinkedHashMap<>();
        StateCodec.toFields(state).forEach((k, v) -> m.put(k, s(v)));
        return AttributeValue.builder().m(m).build();
    }

    /**
     * Reads an item.
     *
     * @param item  the item as read, or null / empty when there is none
     * @param name  the operation name the item was read for
     * @param nowMs the store clock, to judge the state's expiry
     * @throws StoreException if the item is malformed or belongs to another name (a hash collision)
     */
    static Stored decode(Map<String, AttributeValue> item, String name, long nowMs, String table) {
        if (item == null || item.isEmpty()) {
            return Stored.ABSENT;
        }
        String where = "'" + OperationNames.abbreviate(name) + "' in table " + table;
        AttributeValue op = item.get(OP);
        if (op == null || op.s() == null) {
            throw new StoreException("malformed item for " + where + ": no 'op' attribute (not written by redeye?)");
        }
        if (!op.s().equals(name)) {
            throw new StoreException("the item for " + where + " belongs to another operation name ('"
                    + OperationNames.abbreviate(op.s()) + "'): a SHA-256 collision or an item not written by redeye");
        }
        long layout = number(item, LAYOUT, -1, where);
        if (layout != LAYOUT_1) {
            throw new StoreException("malformed item for " + where + ": unknown layout " + layout
                    + " (this version reads layout " + LAYOUT_1 + ")");
        }
        long writes = number(item, WRITES, -1, where);
        long lastVersion = number(item, VERSION, BreakerState.UNKNOWN_VERSION, where);
        AttributeValue st = item.get(STATE);
        BreakerState live = null;
        if (st != null) {
            if (!st.hasM()) {
                throw new StoreException("malformed item for " + where + ": 'st' is not a map");
            }
            Map<String, String> fields = new HashMap<>();
            for (Map.Entry<String, AttributeValue> e : st.m().entrySet()) {
                if (e.getValue().s() == null) {
                    throw new StoreException("malformed breaker state at " + where + ": field '" + e.getKey()
                            + "' is not a string");
                }
                fields.put(e.getKey(), e.getValue().s());
            }
            BreakerState state = StateCodec.fromFields(fields, where);
            long exp = number(item, EXPIRES, Long.MAX_VALUE, where);
            // A forced state never expires, whatever an older writer left in 'exp' (TCK R1.9, R5.7).
            live = !state.forced() && nowMs >= exp ? null : state;
        }
        return new Stored(true, live, writes, lastVersion);
    }

    /** A random id for one atomic call (64 random bits, base 36). */
    static String newWriterId() {
        return Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    /** The writer ids an item remembers ({@code lw}); empty when none. */
    static List<String> lastWriters(Map<String, AttributeValue> item) {
        AttributeValue lw = item == null ? null : item.get(LAST_WRITERS);
        if (lw == null || !lw.hasL()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(lw.l().size());
        for (AttributeValue a : lw.l()) {
            if (a.s() != null) {
                out.add(a.s());
            }
        }
        return out;
    }

    /** The {@code lw} list after a write by {@code writer}: the last {@link #WRITER_MEMORY} ids, newest last. */
    static AttributeValue withWriter(Map<String, AttributeValue> item, String writer) {
        List<String> ids = new ArrayList<>(lastWriters(item));
        ids.add(writer);
        List<AttributeValue> kept = new ArrayList<>();
        for (String id : ids.subList(Math.max(0, ids.size() - WRITER_MEMORY), ids.size())) {
            kept.add(s(id));
        }
        return AttributeValue.builder().l(kept).build();
    }

    /** The claims map of an item: token to expiry (epoch ms); empty when there is none. */
    static Map<String, Long> claims(Map<String, AttributeValue> item, String where) {
        AttributeValue cl = item == null ? null : item.get(CLAIMS);
        Map<String, Long> out = new HashMap<>();
        if (cl == null) {
            return out;
        }
        if (!cl.hasM()) {
            throw new StoreException("malformed item for " + where + ": 'cl' is not a map");
        }
        for (Map.Entry<String, AttributeValue> e : cl.m().entrySet()) {
            try {
                out.put(e.getKey(), Long.parseLong(e.getValue().n()));
            } catch (RuntimeException ex) {
                throw new StoreException("malformed trial claim at " + where + ": expiry of '" + e.getKey()
                        + "' is not a number", ex);
            }
        }
        return out;
    }

    private static long number(Map<String, AttributeValue> item, String name, long absent, String where) {
        AttributeValue a = item.get(name);
        if (a == null) {
            return absent;
        }
        try {
            return Long.parseLong(a.n());
        } catch (RuntimeException e) {
            throw new StoreException("malformed item for " + where + ": '" + name + "' is not an integer", e);
        }
    }

    /**
     * An item as read.
     *
     * @param exists      whether there is an item (a tombstone or a claims-only item counts)
     * @param live        the live state, or null (none, deleted, expired)
     * @param writes      the write counter, or -1 when the item has none (claims only)
     * @param lastVersion the version of the last state stored, {@link BreakerState#UNKNOWN_VERSION} if none
     */
    record Stored(boolean exists, BreakerState live, long writes, long lastVersion) {
        static final Stored ABSENT = new Stored(false, null, -1, BreakerState.UNKNOWN_VERSION);
    }
}

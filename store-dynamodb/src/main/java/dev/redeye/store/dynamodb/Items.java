package dev.redeye.store.dynamodb;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StateCodec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongPredicate;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The stored layout of an operation's item, one item per operation name. Layout 2 is layout 1 plus two fields
 * of the state map {@code st}: {@code window} and {@code mode}. Layout 3 is layout 2 plus one more,
 * {@code contributors} (a quorum's contributions). An item is written in layout 3 while its state has
 * contributions, else in layout 2 while it carries a window or a mode, else in layout 1 (see {@link #layoutOf}),
 * so that a reader that knows only the earlier layouts refuses it with an error naming the layout instead of
 * reading a breaker without its window, its operator's mode or its contributions (and writing it back without
 * them).
 *
 * <table>
 * <caption>Attributes of an operation's item</caption>
 * <tr><th>attribute</th><th>type</th><th>meaning</th></tr>
 * <tr><td>{@code pk}</td><td>S</td><td>partition key, see {@link Keys}</td></tr>
 * <tr><td>{@code op}</td><td>S</td><td>the operation name, whole</td></tr>
 * <tr><td>{@code lay}</td><td>N</td><td>layout: {@code 3} when {@code st} holds {@code contributors}, else
 * {@code 2} when it holds {@code window} or {@code mode}, else {@code 1}</td></tr>
 * <tr><td>{@code st}</td><td>M of S</td><td>the state, field names and encodings of {@link StateCodec}; absent
 * when the key has no state (never written, deleted, or only claims). Among them, {@code st.window} (S) is
 * {@link dev.redeye.api.SlidingWindow#encode()}, absent when the state has no window, and {@code st.mode} (S,
 * decimal like every field of the map) is {@link BreakerMode#code()}, absent for
 * {@link BreakerMode#DEFAULT}, and {@code st.contributors} (S) is {@link Contribution#encodeAll} of the state's
 * {@linkplain BreakerState#contributors() contributions}, absent when it has none</td></tr>
 * <tr><td>{@code v}</td><td>N</td><td>the version of the state, kept after a delete (a tombstone) so that the next
 * life of the key starts above it</td></tr>
 * <tr><td>{@code exp}</td><td>N</td><td>epoch ms (store clock) from which a state that is not
 * {@linkplain BreakerState#pinned() pinned} reads as absent; never set on a pinned state (forced, or a stored
 * mode)</td></tr>
 * <tr><td>{@code wc}</td><td>N</td><td>write counter, + 1 on every state write: the compare-and-set token of atomic
 * writes (the version moves only on transitions, so it cannot be that token: a write that only counts an outcome
 * or only records one in the window keeps the version)</td></tr>
 * <tr><td>{@code lw}</td><td>M of M</td><td>the writers whose answer may not have reached them yet: per store
 * instance (a random id), {@code x} (N) the epoch ms (its clock) until which the entry must stay and {@code c}
 * (NS) the ids of that instance's atomic calls that wrote the state and were still running at its last write.
 * A call whose write landed although its answer was lost (the SDK retried it, and the retry failed its
 * condition) finds its own id there instead of applying the rule twice, however many writers wrote in between:
 * only its own instance removes a call id, once that call has returned. Another instance's entry is removed
 * by any writer once past {@code x} (the writer's call deadline plus {@value #WRITER_SKEW_MARGIN_MILLIS} ms
 * for clock skew, longer than that writer can still be asking)</td></tr>
 * <tr><td>{@code cl}</td><td>M of N</td><td>trial claims: token to expiry, epoch ms (store clock)</td></tr>
 * <tr><td>{@code gc}</td><td>N</td><td>epoch seconds: the DynamoDB TTL attribute, garbage collection only (never
 * read for correctness; set {@link DynamoDbStore.Builder#retention retention} after the state's expiry; absent on
 * a pinned state)</td></tr>
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
    static final String WRITER_UNTIL = "x";
    static final String WRITER_CALLS = "c";
    /** How much longer than a writer's call deadline its {@code lw} entry stays: the clock skew tolerated. */
    static final long WRITER_SKEW_MARGIN_MILLIS = 10_000;
    /** The layout of an item whose state has neither a window nor a stored mode (and of tombstones, claims). */
    static final int LAYOUT_1 = 1;
    /** The layout of an item whose state has a window or a stored mode, and no contributions. */
    static final int LAYOUT_2 = 2;
    /**
     * The layout of an item whose state has contributions ({@link BreakerState#contributors()}, kept under a
     * quorum), with or without a window or a mode; the newest this version reads. The releases before quorums
     * read layouts 1 and 2 only and refuse any other, so they never read such a state without its contributions
     * and write it back without them.
     */
    static final int LAYOUT_3 = 3;

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

    /**
     * The layout a write of {@code state} gives its item: {@link #LAYOUT_3} when the state has contributions
     * (a field a layout-2 reader would drop), else {@link #LAYOUT_2} when it has a window or a mode other than
     * {@link BreakerMode#DEFAULT} (fields a layout-1 reader would drop), else {@link #LAYOUT_1}.
     */
    static int layoutOf(BreakerState state) {
        if (!state.contributors().isEmpty()) {
            return LAYOUT_3;
        }
        return state.window() != null || state.mode() != BreakerMode.DEFAULT ? LAYOUT_2 : LAYOUT_1;
    }

    /** The state as the {@code st} map: every {@link StateCodec} field as a string. */
    static AttributeValue encodeState(BreakerState state) {
        Map<String, AttributeValue> m = new LinkedHashMap<>();
        StateCodec.toFields(state).forEach((k, v) -> m.put(k, s(v)));
        return AttributeValue.builder().m(m).build();
    }

    /**
     * Reads an item of any layout this version knows ({@link #LAYOUT_1}, {@link #LAYOUT_2}, {@link #LAYOUT_3}).
     *
     * @param item  the item as read, or null / empty when there is none
     * @param name  the operation name the item was read for
     * @param nowMs the store clock, to judge the state's expiry
     * @throws StoreException naming the key, if the item is malformed (among that: a {@code contributors} field
     *                        {@link Contribution#decodeAll} refuses, or one that does not match the layout), of
     *                        an unknown layout, or belongs to another name (a hash collision)
     */
    static Stored decode(Map<String, AttributeValue> item, String name, long nowMs, String table) {
        return decode(item, name, nowMs, table, LAYOUT_3);
    }

    /**
     * Reads an item as a reader that knows the layouts up to {@code newestLayout}: an item of a later layout is
     * refused, never read with fields missing. {@link #decode(Map, String, long, String)} passes the newest
     * layout; {@link #LAYOUT_1} refuses the later layouts as the versions before layout 2 did, {@link #LAYOUT_2}
     * as the versions before layout 3 did.
     */
    static Stored decode(Map<String, AttributeValue> item, String name, long nowMs, String table, int newestLayout) {
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
        if (layout < LAYOUT_1 || layout > newestLayout) {
            throw new StoreException("malformed item for " + where + ": unknown layout " + layout
                    + " (this version reads layouts " + LAYOUT_1 + " to " + newestLayout
                    + "; an item written by a newer redeye needs that version to read it)");
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
            if (layout == LAYOUT_1 && (fields.containsKey(StateCodec.WINDOW) || fields.containsKey(StateCodec.MODE))) {
                throw new StoreException("malformed item for " + where + ": layout 1 holds no '" + StateCodec.WINDOW
                        + "' or '" + StateCodec.MODE + "' field (an item that has them is layout 2)");
            }
            if (layout < LAYOUT_3 && fields.containsKey(StateCodec.CONTRIBUTORS)) {
                throw new StoreException("malformed item for " + where + ": layout " + layout + " holds no '"
                        + StateCodec.CONTRIBUTORS + "' field (an item that has it is layout " + LAYOUT_3 + ")");
            }
            BreakerState state = StateCodec.fromFields(fields, where);
            if (layout == LAYOUT_3 && state.contributors().isEmpty()) {
                // An empty or missing field: the store writes layout 3 only with contributions, and no field
                // without them.
                throw new StoreException("malformed item for " + where + ": layout " + LAYOUT_3 + " without "
                        + "contributions (its '" + StateCodec.CONTRIBUTORS + "' field is missing or empty)");
            }
            long exp = number(item, EXPIRES, Long.MAX_VALUE, where);
            // A pinned state (forced, or a stored mode) never expires, whatever an older writer left in 'exp'
            // (TCK R1.9, R5.7): an operator's decision must not lapse back to the configured behaviour.
            live = !state.pinned() && nowMs >= exp ? null : state;
        }
        return new Stored(true, live, writes, lastVersion);
    }

    /** A random id for one store instance, its key in {@code lw} (63 random bits, base 36). */
    static String newInstanceId() {
        return Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    /** Whether the item's {@code lw} records that call {@code call} of store instance {@code instance} wrote it. */
    static boolean writtenBy(Map<String, AttributeValue> item, String instance, long call) {
        AttributeValue entry = writers(item).get(instance);
        return entry != null && calls(entry).contains(Long.toString(call));
    }

    /**
     * The {@code lw} map of a write by call {@code call} of {@code instance}: that instance's entry holds the
     * call and those of its calls the item recorded that are still running ({@code running}), until
     * {@code untilMs}; other instances' entries are kept unless past their {@code x} by {@code nowMs}.
     * Entries that are not of this layout are dropped (they can only be garbage).
     */
    static AttributeValue writersAfter(Map<String, AttributeValue> item, String instance, long call,
                                       LongPredicate running, long nowMs, long untilMs) {
        Map<String, AttributeValue> out = new HashMap<>();
        for (Map.Entry<String, AttributeValue> e : writers(item).entrySet()) {
            if (e.getKey().equals(instance)) {
                continue;
            }
            AttributeValue x = e.getValue().hasM() ? e.getValue().m().get(WRITER_UNTIL) : null;
            if (x != null && x.n() != null && !calls(e.getValue()).isEmpty() && parse(x.n(), -1) >= nowMs) {
                out.put(e.getKey(), e.getValue());
            }
        }
        List<String> mine = new ArrayList<>();
        mine.add(Long.toString(call));
        AttributeValue own = writers(item).get(instance);
        if (own != null) {
            for (String c : calls(own)) {
                long id = parse(c, -1);
                if (id != call && id >= 0 && running.test(id)) {
                    mine.add(c);
                }
            }
        }
        out.put(instance, AttributeValue.builder().m(Map.of(WRITER_UNTIL, n(untilMs),
                WRITER_CALLS, AttributeValue.builder().ns(mine).build())).build());
        return AttributeValue.builder().m(out).build();
    }

    private static Map<String, AttributeValue> writers(Map<String, AttributeValue> item) {
        AttributeValue lw = item == null ? null : item.get(LAST_WRITERS);
        return lw == null || !lw.hasM() ? Map.of() : lw.m();
    }

    private static List<String> calls(AttributeValue entry) {
        AttributeValue c = entry.hasM() ? entry.m().get(WRITER_CALLS) : null;
        return c == null || !c.hasNs() ? List.of() : c.ns();
    }

    private static long parse(String number, long otherwise) {
        try {
            return Long.parseLong(number);
        } catch (NumberFormatException e) {
            return otherwise;
        }
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

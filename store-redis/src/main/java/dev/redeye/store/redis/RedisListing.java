package dev.redeye.store.redis;

import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import dev.redeye.spi.OperationListing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BiFunction;
import redis.clients.jedis.ClusterPipeline;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The {@link OperationListing} of a {@link RedisStore}: {@code SCAN} over the keys matching the prefix's state
 * keys ({@link RedisKeys#statePattern()}), each key decoded back to its operation ({@link RedisKeys#operationOf}),
 * claim keys, the feed stream and other prefixes' keys left out.
 *
 * <p><b>Per page</b>: one {@code SCAN cursor MATCH pattern COUNT max(limit, 250)}, then the states of the
 * operations it found in one more round trip ({@code MGET} on a standalone server; on a Cluster, where one
 * {@code MGET} cannot span slots, a pipeline of {@code GET}s to the nodes owning them). {@code SCAN} returns what a slice of
 * the keyspace holds, so a page may hold fewer entries than the limit, none included, before the end; it never
 * holds more: the operations of a {@code SCAN} beyond the limit travel in the cursor (their names, base64) and make
 * the next page, which then sends no {@code SCAN}. Expired keys are never returned by {@code SCAN}. A key may be
 * listed twice while keys are added (the {@code SCAN} guarantee); callers keep the last entry.
 *
 * <p><b>Cluster.</b> Every master is scanned in turn, in the order of the lowest slot each owns (read with
 * {@code CLUSTER SLOTS} when one master's scan ends); the cursor names the master by that slot. Under a prefix
 * whose hash tag is closed inside it ({@code app{x}:}), every key is in one slot and only its master is scanned. A
 * listing that runs through a resharding or a fail-over may miss or repeat keys of the slots that moved.
 *
 * <p>An entry carries no state ({@link OperationListing.Entry#nameOnly}) when its key went between the
 * {@code SCAN} and the read, holds the hash of an earlier release, or holds malformed data: the caller's
 * {@code get} then tells which.
 *
 * <p>Thread-safe: it keeps no state between pages.
 */
final class RedisListing {
    /** The {@code SCAN} count of a page below this limit: fewer round trips over a keyspace shared with others. */
    static final int MIN_SCAN_COUNT = 250;
    private static final int SLOTS = 16384;
    /** The node part of a cursor on a standalone server (one node). */
    private static final String STANDALONE = "s";
    private static final String VERSION = "r1";

    private final UnifiedJedis client;
    private final RedisKeys keys;
    /** Decodes a stored value into a state, or throws (malformed): the store's own decoding. */
    private final BiFunction<String, String, BreakerState> decode;
    /** The one slot every key of the prefix is in (its hash tag is closed inside it), or -1. */
    private final int prefixSlot;

    RedisListing(UnifiedJedis client, RedisKeys keys, BiFunction<String, String, BreakerState> decode) {
        this.client = client;
        this.keys = keys;
        this.decode = decode;
        this.prefixSlot = closedTag(keys.prefix()) ? JedisClusterCRC16.getSlot(keys.prefix()) : -1;
    }

    /** Whether the prefix's first <code>{</code> is closed inside it with something between (one slot). */
    static boolean closedTag(String prefix) {
        int open = prefix.indexOf('{');
        int close = open < 0 ? -1 : prefix.indexOf('}', open + 1);
        return close > open + 1;
    }

    OperationListing.Page page(String cursorText, int limit) {
        OperationListing.checkLimit(limit);
        Cursor at = Cursor.parse(cursorText);
        boolean cluster = client instanceof JedisCluster;
        if (cluster == (at.node < 0) && cursorText != null) {
            throw new IllegalArgumentException("not a cursor of this store's listings (a cursor of a "
                    + (cluster ? "standalone server" : "Cluster") + "): " + abbreviated(cursorText));
        }
        if (!at.pending.isEmpty()) {
            int n = Math.min(limit, at.pending.size());
            List<String> now = at.pending.subList(0, n);
            List<OperationListing.Entry> entries = read(now);
            List<String> rest = at.pending.subList(n, at.pending.size());
            return new OperationListing.Page(entries, rest.isEmpty() && at.done
                    ? null : new Cursor(at.node, at.scan, at.done, rest).text());
        }
        return cluster ? scanCluster(at, limit) : scanStandalone(at, limit);
    }

    private OperationListing.Page scanStandalone(Cursor at, int limit) {
        ScanResult<String> r = client.scan(at.scan, params(limit));
        List<String> found = operations(r.getResult());
        boolean done = r.isCompleteIteration();
        return pageOf(found, limit, -1, r.getCursor(), done, this::read);
    }

    private OperationListing.Page scanCluster(Cursor at, int limit) {
        int node = at == Cursor.START && prefixSlot >= 0 ? prefixSlot : at.node;
        try (Connection c = ((JedisCluster) client).getConnectionFromSlot(node)) {
            Jedis j = new Jedis(c);
            ScanResult<String> r = j.scan(at.scan, params(limit));
            List<String> found = operations(r.getResult());
            String scan = r.getCursor();
            boolean done = false;
            if (r.isCompleteIteration()) {
                int next = prefixSlot >= 0 ? -1 : nextMaster(j, node);
                if (next < 0) {
                    done = true;
                } else {
                    node = next;
                    scan = ScanParams.SCAN_POINTER_START;
                }
            }
            return pageOf(found, limit, node, scan, done, this::read);
        }
    }

    /** A page of the first {@code limit} of {@code found}, the others carried in the cursor. */
    private static OperationListing.Page pageOf(List<String> found, int limit, int node, String scan, boolean done,
            java.util.function.Function<List<String>, List<OperationListing.Entry>> reader) {
        int n = Math.min(limit, found.size());
        List<OperationListing.Entry> entries = n == 0 ? List.of() : reader.apply(found.subList(0, n));
        List<String> rest = found.subList(n, found.size());
        return new OperationListing.Page(entries, done && rest.isEmpty()
                ? null : new Cursor(node, scan, done, rest).text());
    }

    private ScanParams params(int limit) {
        return new ScanParams().match(keys.statePattern()).count(Math.max(limit, MIN_SCAN_COUNT));
    }

    /** The operations of the state keys among {@code scanned}, in their order. */
    private List<String> operations(List<String> scanned) {
        List<String> out = new ArrayList<>(scanned.size());
        for (String k : scanned) {
            String op = keys.operationOf(k);
            if (op != null) {
                out.add(op);
            }
        }
        return out;
    }

    /**
     * The master of a Cluster that comes after the one owning {@code slot}, in the order of the lowest slot each
     * owns: that slot, or -1 after the last.
     */
    private static int nextMaster(Jedis j, int slot) {
        // the lowest slot of each master, by the master's address; and the master owning each slot
        TreeMap<String, Integer> lowest = new TreeMap<>();
        String[] owner = new String[SLOTS];
        for (Object o : j.clusterSlots()) {
            List<?> range = (List<?>) o;
            int from = ((Long) range.get(0)).intValue();
            int to = ((Long) range.get(1)).intValue();
            List<?> master = (List<?>) range.get(2);
            String id = text(master.get(0)) + ":" + master.get(1);
            lowest.merge(id, from, Math::min);
            for (int s = from; s <= to && s < SLOTS; s++) {
                owner[s] = id;
            }
        }
        Integer current = owner[slot] == null ? slot : lowest.get(owner[slot]);
        int next = -1;
        for (int low : lowest.values()) {
            if (low > current && (next < 0 || low < next)) {
                next = low;
            }
        }
        return next;
    }

    private static String text(Object o) {
        return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
    }

    /** The entries of {@code names} with their states, read with one MGET on a standalone server. */
    private List<OperationListing.Entry> read(List<String> names) {
        if (client instanceof JedisCluster) {
            return readCluster(names);
        }
        String[] ks = names.stream().map(keys::state).toArray(String[]::new);
        List<String> values = client.mget(ks);
        List<OperationListing.Entry> out = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            out.add(entry(names.get(i), values.get(i)));
        }
        return out;
    }

    /**
     * The entries of {@code names} with their states, read on a Cluster in one pipeline of GETs sent to the nodes
     * owning their slots (one MGET cannot span slots); a reply that is an error (a slot that moved, a hash) leaves
     * its entry without a state.
     */
    private List<OperationListing.Entry> readCluster(List<String> names) {
        List<Response<String>> replies = new ArrayList<>(names.size());
        try (ClusterPipeline p = ((JedisCluster) client).pipelined()) {
            for (String name : names) {
                replies.add(p.get(keys.state(name)));
            }
            p.sync();
        }
        List<OperationListing.Entry> out = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            String value;
            try {
                value = replies.get(i).get();
            } catch (JedisDataException movedOrWrongType) {
                value = null;
            }
            out.add(entry(names.get(i), value));
        }
        return out;
    }

    private OperationListing.Entry entry(String name, String value) {
        if (value == null) {
            return OperationListing.Entry.nameOnly(name);
        }
        try {
            return new OperationListing.Entry(name, decode.apply(name, value));
        } catch (StoreException malformed) {
            return OperationListing.Entry.nameOnly(name);
        }
    }

    private static String abbreviated(String cursor) {
        return cursor.length() <= 40 ? cursor : cursor.substring(0, 40) + "...";
    }

    /**
     * Where a listing stands: the node (the lowest slot of a Cluster master, -1 on a standalone server), its
     * {@code SCAN} cursor, whether the last node's scan is complete, and the operations found but not yet returned.
     * Its text is {@code r1~node~scan~done~nNAME,nNAME...}, each name in base64url after an {@code n}.
     */
    private record Cursor(int node, String scan, boolean done, List<String> pending) {
        static final Cursor START = new Cursor(0, ScanParams.SCAN_POINTER_START, false, List.of());

        static Cursor parse(String text) {
            if (text == null) {
                return START;
            }
            String[] parts = text.split("~", -1);
            try {
                if (parts.length != 5 || !parts[0].equals(VERSION) || !parts[2].matches("[0-9]{1,20}")
                        || !(parts[3].equals("0") || parts[3].equals("1"))) {
                    throw new IllegalArgumentException("malformed");
                }
                int node = parts[1].equals(STANDALONE) ? -1 : Integer.parseInt(parts[1]);
                if (node >= SLOTS || node < -1) {
                    throw new IllegalArgumentException("no such slot");
                }
                List<String> pending = new ArrayList<>();
                if (!parts[4].isEmpty()) {
                    Base64.Decoder d = Base64.getUrlDecoder();
                    for (String n : parts[4].split(",", -1)) {
                        if (!n.startsWith("n")) {
                            throw new IllegalArgumentException("malformed name");
                        }
                        pending.add(new String(d.decode(n.substring(1)), StandardCharsets.UTF_8));
                    }
                }
                boolean done = parts[3].equals("1");
                if (done && pending.isEmpty()) {
                    throw new IllegalArgumentException("ended");
                }
                return new Cursor(node, parts[2], done, pending);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("not a cursor of this store's listings: " + abbreviated(text), e);
            }
        }

        String text() {
            StringBuilder sb = new StringBuilder(VERSION).append('~').append(node < 0 ? STANDALONE : node)
                    .append('~').append(scan).append('~').append(done ? '1' : '0').append('~');
            Base64.Encoder e = Base64.getUrlEncoder().withoutPadding();
            for (int i = 0; i < pending.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                sb.append('n').append(e.encodeToString(pending.get(i).getBytes(StandardCharsets.UTF_8)));
            }
            return sb.toString();
        }
    }
}

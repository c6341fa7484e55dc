package dev.redeye.store.dynamodb;

import dev.redeye.api.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One subscriber's position in one feed item: a shard ({@code f#s<i>}) or the single feed head of earlier
 * releases ({@code f#head}). It remembers the last sequence number delivered and the lost count seen, and turns
 * each read of the item into the events to deliver and whether subscribers must be told of a gap. Not
 * thread-safe: the feed's poller owns it (under the feed's lock).
 *
 * <p><b>Eventually consistent reads.</b> An eventually consistent {@code GetItem} returns one whole version of
 * the item, possibly an earlier one than a read before it returned. Every version's ring holds the events up to
 * its own {@code seq}, so an earlier version only holds nothing new: {@link #read} answers {@link Read#STALE}
 * when the sequence number or the lost count went backwards, and the caller confirms with a strongly consistent
 * read. Only a confirmed step back (the item was deleted or the table recreated) resets the cursor, with a gap.
 * A ring overrun or a lost count that grew is judged on one whole version, so an earlier version never fakes
 * either; it only delays them until a later read.
 */
final class FeedCursor {
    private final String key;
    /** The shard count this store writes and reads with; 0 for the earlier releases' head, which has none. */
    private final int shards;
    private long lastSeq;
    private long lastLost;
    private int mismatch;

    FeedCursor(String key, int shards) {
        this.key = key;
        this.shards = shards;
    }

    String key() {
        return key;
    }

    boolean legacy() {
        return shards == 0;
    }

    /** Starts from the item as it is (a strongly consistent read): only later events are delivered. */
    void baseline(Map<String, AttributeValue> item) {
        lastSeq = number(item, Feed.SEQ);
        lastLost = lost(item);
    }

    /**
     * What one read of the item brings.
     *
     * @param item       the item read, or null when there is none
     * @param consistent whether the read was strongly consistent (a step back is then real)
     * @return {@link Read#STALE} for an unconfirmed step back, else the events to deliver and whether to signal a
     *         gap
     * @throws StoreException if the item is malformed
     */
    Read read(Map<String, AttributeValue> item, boolean consistent) {
        long seq = number(item, Feed.SEQ);
        long lost = lost(item);
        boolean gap = false;
        String why = null;
        if (seq < lastSeq || lost < lastLost) {
            if (!consistent) {
                return Read.STALE;
            }
            gap = true; // deleted or recreated: start again from here
            why = "feed item " + key + " went back from seq " + lastSeq + " to " + seq;
            lastSeq = seq;
            lastLost = lost;
        }
        List<AttributeValue> ring = item == null || item.get(Feed.EVENTS) == null ? List.of() : item.get(Feed.EVENTS).l();
        if (seq > lastSeq) {
            long oldest = ring.isEmpty() ? seq + 1 : number(ring.get(0).m(), Feed.EVENT_SEQ);
            if (oldest > lastSeq + 1) {
                gap = true;
                why = "fell behind the ring of feed item " + key + " (events " + (lastSeq + 1) + " to " + (oldest - 1)
                        + " are gone)";
            }
        }
        if (lost > lastLost) {
            gap = true;
            why = (lost - lastLost) + " event(s) could not be written to feed item " + key;
            lastLost = lost;
        }
        int of = shards == 0 || item == null ? 0 : (int) number(item, Feed.SHARDS);
        if (of != 0 && of != shards) {
            gap = true; // events of the shards this store does not read are missed
            why = "feed item " + key + " was last written by a store with feedShards=" + of + ", this store reads "
                    + shards + " shards: every instance of a fleet must use the same feedShards";
        }
        mismatch = of != 0 && of != shards ? of : 0;
        List<Event> events = new ArrayList<>();
        for (AttributeValue e : ring) {
            long s = number(e.m(), Feed.EVENT_SEQ);
            if (s > lastSeq) {
                events.add(new Event(s, Feed.lineOf(e)));
                lastSeq = s;
            }
        }
        lastSeq = Math.max(lastSeq, seq);
        return new Read(events, gap, why);
    }

    /** The shard count of the store that last wrote this shard when it differs from this store's, else 0. */
    int mismatch() {
        return mismatch;
    }

    long lastSeq() {
        return lastSeq;
    }

    /**
     * The lost count of the item: {@code lost}, less, on the earlier releases' head, the {@code mv} notices that
     * this release's writers add there together with {@code lost} (a notice tells an earlier release's reader of
     * an event it cannot read; it is not a lost event).
     */
    private long lost(Map<String, AttributeValue> item) {
        long lost = number(item, Feed.LOST);
        return shards == 0 ? lost - number(item, Feed.MOVED) : lost;
    }

    private long number(Map<String, AttributeValue> item, String attribute) {
        AttributeValue a = item == null ? null : item.get(attribute);
        if (a == null) {
            return 0;
        }
        try {
            return Long.parseLong(a.n());
        } catch (RuntimeException e) {
            throw new StoreException("malformed feed item " + key + ": attribute " + attribute + " holds " + a, e);
        }
    }

    /** One event line of a ring, with its sequence number. */
    record Event(long seq, String line) {
    }

    /**
     * What a read brings: events in sequence order and whether subscribers may have missed some ({@code why}
     * says why, for the log).
     */
    record Read(List<Event> events, boolean gap, String why) {
        /** An earlier version of the item than one read before: confirm with a strongly consistent read. */
        static final Read STALE = new Read(List.of(), false, null);

        boolean stale() {
            return this == STALE;
        }
    }
}

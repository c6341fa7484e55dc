package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.StoreException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@link FeedCursor} on item versions built here: what an eventually consistent read may return (an earlier
 * version after a later one) delivers nothing twice, loses nothing and is no gap until a consistent read confirms
 * it; ring overruns, lost counts and another shard count are gaps.
 */
class FeedCursorTest {
    /** A version of a shard item: {@code seq}, the ring's events {@code from..seq}, {@code lost}, {@code of}. */
    private static Map<String, AttributeValue> shard(long seq, long from, long lost, int of) {
        Map<String, AttributeValue> m = new HashMap<>();
        m.put(Feed.SEQ, Items.n(seq));
        List<AttributeValue> ring = new ArrayList<>();
        for (long s = from; s <= seq; s++) {
            ring.add(AttributeValue.builder().m(Map.of(Feed.EVENT_SEQ, Items.n(s), Feed.EVENT_LINE, Items.s("e" + s)))
                    .build());
        }
        m.put(Feed.EVENTS, AttributeValue.builder().l(ring).build());
        if (lost > 0) {
            m.put(Feed.LOST, Items.n(lost));
        }
        if (of > 0) {
            m.put(Feed.SHARDS, Items.n(of));
        }
        return m;
    }

    private static List<Long> seqs(FeedCursor.Read r) {
        return r.events().stream().map(FeedCursor.Event::seq).toList();
    }

    @Test
    void anEarlierVersionAfterALaterOneIsStaleNotAGapAndNothingIsDeliveredTwice() {
        FeedCursor c = new FeedCursor("f#s3", 16);
        c.baseline(shard(2, 1, 0, 16));
        FeedCursor.Read r = c.read(shard(5, 1, 0, 16), false);
        assertEquals(List.of(3L, 4L, 5L), seqs(r));
        assertFalse(r.gap());
        // an eventually consistent read served by a replica that has not seen seq 4 and 5 yet
        FeedCursor.Read stale = c.read(shard(3, 1, 0, 16), false);
        assertTrue(stale.stale(), "a step back on an eventually consistent read asks for a consistent read");
        assertEquals(List.of(), seqs(stale));
        // the consistent read that confirms it shows the item as it is: nothing new, no gap
        FeedCursor.Read confirmed = c.read(shard(5, 1, 0, 16), true);
        assertFalse(confirmed.gap());
        assertEquals(List.of(), seqs(confirmed));
        assertEquals(List.of(6L), seqs(c.read(shard(6, 1, 0, 16), false)), "later events still arrive");
    }

    @Test
    void anEarlierVersionReadBeforeTheLaterOneDelaysEventsWithoutLosingThem() {
        FeedCursor c = new FeedCursor("f#s0", 16);
        c.baseline(shard(2, 1, 0, 16));
        assertEquals(List.of(3L), seqs(c.read(shard(3, 1, 0, 16), false)));
        assertEquals(List.of(4L, 5L), seqs(c.read(shard(5, 1, 0, 16), false)));
    }

    @Test
    void aStaleLostCountIsNotAGapAndAGrownOneIs() {
        FeedCursor c = new FeedCursor("f#s1", 16);
        c.baseline(shard(4, 1, 2, 16));
        assertTrue(c.read(shard(4, 1, 1, 16), false).stale(), "lost went back: an earlier version");
        FeedCursor.Read r = c.read(shard(4, 1, 3, 16), false);
        assertTrue(r.gap(), "lost grew");
        assertFalse(c.read(shard(4, 1, 3, 16), false).gap(), "one gap per lost event");
    }

    @Test
    void aConfirmedStepBackIsAResetWithAGap() {
        FeedCursor c = new FeedCursor("f#s2", 16);
        c.baseline(shard(7, 1, 1, 16));
        FeedCursor.Read r = c.read(null, true); // the item was deleted, or the table recreated
        assertTrue(r.gap());
        assertEquals(List.of(1L), seqs(c.read(shard(1, 1, 0, 16), false)), "starts again from the new item");
    }

    @Test
    void fallingBehindTheRingIsAGapAndTheRingsEventsFollow() {
        FeedCursor c = new FeedCursor("f#s4", 16);
        c.baseline(shard(2, 1, 0, 16));
        FeedCursor.Read r = c.read(shard(40, 9, 0, 16), false);
        assertTrue(r.gap(), "events 3 to 8 are gone");
        assertEquals(32, r.events().size());
        assertEquals(9L, r.events().get(0).seq());
    }

    @Test
    void aShardWrittenWithAnotherShardCountIsAGapOnEveryRead() {
        FeedCursor c = new FeedCursor("f#s0", 8);
        c.baseline(shard(1, 1, 0, 8));
        assertTrue(c.read(shard(2, 1, 0, 16), false).gap());
        assertEquals(16, c.mismatch());
        assertTrue(c.read(shard(2, 1, 0, 16), false).gap(), "still mismatched: still a gap");
        assertFalse(c.read(shard(3, 1, 0, 8), false).gap(), "written with this store's count again");
        assertEquals(0, c.mismatch());
    }

    @Test
    void onTheEarlierReleasesHeadNoticesAreNotLostEvents() {
        FeedCursor c = new FeedCursor(Keys.FEED_HEAD, 0);
        Map<String, AttributeValue> head = shard(3, 1, 2, 0);
        head.put(Feed.MOVED, Items.n(2));
        c.baseline(head);
        Map<String, AttributeValue> noticed = shard(3, 1, 5, 0);
        noticed.put(Feed.MOVED, Items.n(5));
        assertFalse(c.read(noticed, false).gap(), "three notices of this release's writers: no gap");
        Map<String, AttributeValue> lost = shard(4, 1, 6, 0);
        lost.put(Feed.MOVED, Items.n(5));
        FeedCursor.Read r = c.read(lost, false);
        assertTrue(r.gap(), "an earlier release's writer lost an event");
        assertEquals(List.of(4L), seqs(r), "and its appended event is delivered");
    }

    @Test
    void aMalformedNumberIsAStoreExceptionNamingTheItem() {
        FeedCursor c = new FeedCursor("f#s9", 16);
        Map<String, AttributeValue> bad = new HashMap<>(Map.of(Feed.SEQ, Items.s("many")));
        StoreException e = assertThrows(StoreException.class, () -> c.read(bad, false));
        assertTrue(e.getMessage().contains("f#s9"), e.getMessage());
    }
}

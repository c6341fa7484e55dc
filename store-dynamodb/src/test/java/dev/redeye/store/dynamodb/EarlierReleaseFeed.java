package dev.redeye.store.dynamodb;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.support.StateCodec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * The feed protocol of the releases before the sharded feed, on the one item {@code f#head}, request for request
 * as their feed wrote and read it (the module README's layout): a writer reads the head consistently and writes it
 * back with its event appended under {@code seq = :seen}, or adds 1 to {@code lost}; a reader reads the head
 * consistently, delivers the ring's events above its last sequence number, and has a gap when {@code lost} grew or
 * the ring no longer holds the next event. For the upgrade tests: an instance of an earlier release sharing the
 * table with this one.
 */
final class EarlierReleaseFeed {
    private final DynamoDbClient client;
    private final String table;
    private long lastSeq;
    private long lastLost;

    /** A reader starting from the head as it is now. */
    EarlierReleaseFeed(DynamoDbClient client, String table) {
        this.client = client;
        this.table = table;
        Map<String, AttributeValue> head = head();
        lastSeq = number(head, Feed.SEQ);
        lastLost = number(head, Feed.LOST);
    }

    /** An earlier release's writer appending {@code event} (compare-and-set on {@code seq}, retried). */
    void append(TransitionEvent event) {
        for (int attempt = 0; attempt < 10; attempt++) {
            Map<String, AttributeValue> head = head();
            long seq = number(head, Feed.SEQ);
            List<AttributeValue> ring = new ArrayList<>(head == null || head.get(Feed.EVENTS) == null ? List.of()
                    : head.get(Feed.EVENTS).l());
            ring.add(AttributeValue.builder().m(Map.of(Feed.EVENT_SEQ, Items.n(seq + 1), Feed.EVENT_LINE,
                    Items.s(StateCodec.eventToLine(event)))).build());
            while (ring.size() > 32) {
                ring.remove(0);
            }
            boolean first = head == null || !head.containsKey(Feed.SEQ);
            Map<String, AttributeValue> values = new HashMap<>(Map.of(":lay", Items.n(1), ":next", Items.n(seq + 1),
                    ":ev", AttributeValue.builder().l(ring).build()));
            if (!first) {
                values.put(":seen", Items.n(seq));
            }
            try {
                client.updateItem(u -> u.tableName(table).key(Items.key(Keys.FEED_HEAD))
                        .updateExpression("SET #lay = :lay, #seq = :next, #ev = :ev")
                        .conditionExpression(first ? "attribute_not_exists(#seq)" : "#seq = :seen")
                        .expressionAttributeNames(Map.of("#lay", Items.LAYOUT, "#seq", Feed.SEQ, "#ev", Feed.EVENTS))
                        .expressionAttributeValues(values));
                return;
            } catch (ConditionalCheckFailedException e) {
                // another writer appended first: read again
            }
        }
        throw new AssertionError("the earlier release's head write stayed contended");
    }

    /** An earlier release's writer that could not append its event. */
    void markLost() {
        client.updateItem(u -> u.tableName(table).key(Items.key(Keys.FEED_HEAD)).updateExpression("ADD #lost :one")
                .expressionAttributeNames(Map.of("#lost", Feed.LOST)).expressionAttributeValues(Map.of(":one", Items.n(1))));
    }

    /** One poll of an earlier release's reader: the event lines it delivers, and whether it signals a gap. */
    Poll poll() {
        Map<String, AttributeValue> head = head();
        long seq = number(head, Feed.SEQ);
        long lost = number(head, Feed.LOST);
        boolean gap = false;
        if (seq < lastSeq) {
            gap = true;
            lastSeq = seq;
        }
        List<AttributeValue> ring = head == null || head.get(Feed.EVENTS) == null ? List.of() : head.get(Feed.EVENTS).l();
        if (seq > lastSeq && (ring.isEmpty() || number(ring.get(0).m(), Feed.EVENT_SEQ) > lastSeq + 1)) {
            gap = true;
        }
        if (lost > lastLost) {
            gap = true;
        }
        lastLost = Math.max(lastLost, lost);
        List<String> lines = new ArrayList<>();
        for (AttributeValue e : ring) {
            long s = number(e.m(), Feed.EVENT_SEQ);
            if (s > lastSeq) {
                lastSeq = s;
                lines.add(e.m().get(Feed.EVENT_LINE).s());
            }
        }
        lastSeq = Math.max(lastSeq, seq);
        return new Poll(lines, gap);
    }

    record Poll(List<String> lines, boolean gap) {
    }

    private Map<String, AttributeValue> head() {
        var r = client.getItem(g -> g.tableName(table).key(Items.key(Keys.FEED_HEAD)).consistentRead(true));
        return r.hasItem() && !r.item().isEmpty() ? r.item() : null;
    }

    private static long number(Map<String, AttributeValue> m, String a) {
        return m == null || m.get(a) == null ? 0 : Long.parseLong(m.get(a).n());
    }
}

package dev.redeye.store.dynamodb;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.FeedSubscribers;
import dev.redeye.spi.support.StateCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The transition feed without DynamoDB Streams: one feed-head item per table ({@code pk = f#head}) holding a
 * sequence number {@code seq}, a ring {@code ev} of the last events ({@code {s: seq, e: event line}}, newest
 * last) and a counter {@code lost} of events that could not be written.
 *
 * <p><b>Writing</b>: after a transition's state write, {@link #publish} reads the head (consistent) and writes
 * it back with the event appended under the condition {@code seq = :seen} (single-item compare-and-set),
 * retrying a lost condition a few times with jitter. If that still fails, it adds 1 to {@code lost} (an
 * unconditional {@code ADD}), so that every subscriber learns that it may have missed an event. A process
 * that dies between the state write and the head write loses the event silently; subscribers that need
 * certainty re-read (the engine's local cache does, after {@code staleTolerance}).
 *
 * <p><b>Reading</b>: one poller thread per store instance, started by the first subscription, reads the head
 * every poll interval while anyone subscribes and fans new events out in sequence order through
 * {@link FeedSubscribers}. It calls {@code onGap} when the ring no longer holds the next event it expects
 * (it fell more than the ring size behind), when {@code lost} grew, and once per streak of failed polls, then
 * retries with a backoff (the poll interval doubling up to 5 s). Events of one operation are delivered in
 * version order: an event older than one already delivered for the same operation is dropped (a later
 * transition's head write can land before an earlier one's).
 */
final class Feed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Feed.class);
    static final String SEQ = "seq";
    static final String EVENTS = "ev";
    static final String LOST = "lost";
    static final String EVENT_SEQ = "s";
    static final String EVENT_LINE = "e";
    /** The most bytes of event lines the ring keeps, so the head item stays far below DynamoDB's 400 KB. */
    static final int RING_BYTES = 32 * 1024;
    private static final int PUBLISH_ATTEMPTS = 10;
    private static final long MAX_BACKOFF_MILLIS = 5_000;

    private final Requests requests;
    private final int ringSize;
    private final long pollMillis;
    /** Version order per operation (R6.9): a later transition's head write can land before an earlier one's. */
    private final FeedSubscribers subscribers = FeedSubscribers.inVersionOrder((what, t) -> LOG.warn("{}", what, t));
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private Thread poller;
    private boolean running = true;
    private boolean baseline;
    private long lastSeq;
    private long lastLost;
    private volatile boolean injectFault;

    Feed(Requests requests, int ringSize, Duration pollInterval) {
        this.requests = requests;
        this.ringSize = ringSize;
        this.pollMillis = Math.max(1, pollInterval.toMillis());
    }

    // ------------------------------------------------------------------------------------------ writing

    /**
     * Appends an event to the head; never throws (the state write it follows has happened). The head's attempts
     * stop a little before the call's deadline ({@link Requests#beforeLostCount}), so that the lost count can
     * still be written by then.
     */
    void publish(TransitionEvent event, long deadline) {
        String line = StateCodec.eventToLine(event);
        long headDeadline = requests.beforeLostCount(deadline);
        try {
            for (int attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
                Map<String, AttributeValue> head = requests.get("feed head read", null, Keys.FEED_HEAD, headDeadline);
                long seq = head == null ? 0 : number(head.get(SEQ));
                List<AttributeValue> ring = new ArrayList<>(head == null || head.get(EVENTS) == null
                        ? List.of() : head.get(EVENTS).l());
                ring.add(AttributeValue.builder().m(Map.of(EVENT_SEQ, Items.n(seq + 1), EVENT_LINE, Items.s(line)))
                        .build());
                trim(ring);
                Map<String, AttributeValue> values = values(":lay", Items.n(Items.LAYOUT_1), ":next", Items.n(seq + 1),
                        ":ev", AttributeValue.builder().l(ring).build());
                boolean first = head == null || !head.containsKey(SEQ); // no head yet, or one made by 'ADD lost'
                if (!first) {
                    values.put(":seen", Items.n(seq));
                }
                UpdateItemRequest.Builder u = UpdateItemRequest.builder().key(Items.key(Keys.FEED_HEAD))
                        .updateExpression("SET #lay = :lay, #seq = :next, #ev = :ev")
                        .conditionExpression(first ? "attribute_not_exists(#seq)" : "#seq = :seen")
                        .expressionAttributeNames(names("#lay", Items.LAYOUT, "#seq", SEQ, "#ev", EVENTS))
                        .expressionAttributeValues(values);
                if (requests.update("feed head write", null, u, headDeadline)) {
                    return;
                }
                Requests.backoff(attempt, 20, headDeadline);
            }
            LOG.warn("the feed head of table {} stayed contended for {} attempts; event of '{}' (version {}) not "
                    + "written, subscribers are told of a gap", requests.table(), PUBLISH_ATTEMPTS,
                    OperationNames.abbreviate(event.operation()), event.version());
        } catch (StoreException e) {
            LOG.warn("writing the feed head of table {} failed; event of '{}' (version {}) not written, subscribers"
                    + " are told of a gap: {}", requests.table(), OperationNames.abbreviate(event.operation()), event.version(),
                    e.getMessage());
        }
        markLost(deadline);
    }

    private void markLost(long deadline) {
        try {
            requests.update("feed head lost count", null, UpdateItemRequest.builder().key(Items.key(Keys.FEED_HEAD))
                    .updateExpression("ADD #lost :one")
                    .expressionAttributeNames(names("#lost", LOST))
                    .expressionAttributeValues(values(":one", Items.n(1))), deadline);
        } catch (StoreException e) {
            LOG.warn("could not even count the lost event on the feed head of table {}: {}", requests.table(),
                    e.getMessage());
        }
    }

    /** Drops the oldest events beyond the ring size or the byte budget; the newest always stays. */
    private void trim(List<AttributeValue> ring) {
        long bytes = 0;
        for (AttributeValue e : ring) {
            bytes += lineOf(e).length();
        }
        while (ring.size() > 1 && (ring.size() > ringSize || bytes > RING_BYTES)) {
            bytes -= lineOf(ring.remove(0)).length();
        }
    }

    // ------------------------------------------------------------------------------------------ reading

    TransitionFeed.Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap, long deadline) {
        lock.lock();
        try {
            requests.ensureOpen();
            if (!baseline) {
                readBaseline(deadline); // throws StoreException: the feed cannot start
            }
            TransitionFeed.Subscription s = subscribers.add(listener, onGap);
            if (poller == null) {
                poller = new Thread(this::pollLoop, "redeye-dynamodb-feed " + requests.table());
                poller.setDaemon(true);
                poller.start();
            }
            return s;
        } finally {
            lock.unlock();
        }
    }

    /** Makes the poller's next read fail, as a dropped connection would (the TCK's interruptFeed hook). */
    void injectFault() {
        injectFault = true;
    }

    boolean pollerAlive() {
        Thread t = poller;
        return t != null && t.isAlive();
    }

    private void readBaseline(long deadline) {
        Map<String, AttributeValue> head = requests.get("feed head read", null, Keys.FEED_HEAD, deadline);
        lastSeq = head == null ? 0 : number(head.get(SEQ));
        lastLost = head == null ? 0 : number(head.get(LOST));
        baseline = true;
    }

    private void pollLoop() {
        long pause = pollMillis;
        boolean failing = false;
        while (true) {
            lock.lock();
            try {
                if (running) {
                    wake.await(pause, TimeUnit.MILLISECONDS);
                }
                if (!running) {
                    return;
                }
                if (subscribers.isEmpty()) {
                    baseline = false; // the next subscriber starts from the head as it is then
                    pause = pollMillis;
                    continue;
                }
                try {
                    pollOnce();
                    failing = false;
                    pause = pollMillis;
                } catch (StoreException | IllegalArgumentException e) {
                    if (!running) {
                        return;
                    }
                    if (!failing) {
                        LOG.warn("polling the feed head of table {} failed; subscribers are told of a gap and the "
                                + "poll is retried with backoff: {}", requests.table(), e.getMessage());
                        subscribers.signalGap();
                    }
                    failing = true;
                    pause = Math.min(MAX_BACKOFF_MILLIS, pause * 2);
                }
            } catch (InterruptedException e) {
                return; // close()
            } finally {
                lock.unlock();
            }
        }
    }

    private void pollOnce() {
        if (injectFault) {
            injectFault = false;
            throw new StoreException("feed poll failed (injected fault)");
        }
        Map<String, AttributeValue> head = requests.get("feed poll", null, Keys.FEED_HEAD, Requests.NO_DEADLINE);
        long seq = head == null ? 0 : number(head.get(SEQ));
        long lost = head == null ? 0 : number(head.get(LOST));
        boolean gap = false;
        if (seq < lastSeq) {
            gap = true; // the head was deleted or the table recreated: start again from here
            lastSeq = seq;
        }
        List<AttributeValue> ring = head == null || head.get(EVENTS) == null ? List.of() : head.get(EVENTS).l();
        if (seq > lastSeq) {
            long oldest = ring.isEmpty() ? seq + 1 : number(ring.get(0).m().get(EVENT_SEQ));
            if (oldest > lastSeq + 1) {
                gap = true; // fell more than the ring behind
            }
        }
        if (lost > lastLost) {
            gap = true; // a writer could not append its event
        }
        lastLost = Math.max(lastLost, lost);
        if (gap) {
            subscribers.signalGap();
        }
        for (AttributeValue e : ring) {
            long s = number(e.m().get(EVENT_SEQ));
            if (s <= lastSeq) {
                continue;
            }
            lastSeq = s;
            TransitionEvent event;
            try {
                event = StateCodec.eventFromLine(lineOf(e), "feed head of table " + requests.table() + ", seq " + s);
            } catch (StoreException ex) {
                LOG.warn("skipping a malformed feed event: {}", ex.getMessage());
                subscribers.signalGap();
                continue;
            }
            subscribers.publish(event); // drops an older transition whose head write landed late
        }
        lastSeq = Math.max(lastSeq, seq);
    }

    private static String lineOf(AttributeValue e) {
        AttributeValue line = e.m().get(EVENT_LINE);
        if (line == null || line.s() == null) {
            throw new StoreException("malformed feed event: no line");
        }
        return line.s();
    }

    private static long number(AttributeValue a) {
        if (a == null) {
            return 0;
        }
        try {
            return Long.parseLong(a.n());
        } catch (RuntimeException e) {
            throw new StoreException("malformed feed head: a number attribute holds " + a, e);
        }
    }

    static Map<String, String> names(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static Map<String, AttributeValue> values(Object... kv) {
        Map<String, AttributeValue> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (AttributeValue) kv[i + 1]);
        }
        return m;
    }

    /** Stops the poller (waiting up to 5 s) and ends every subscription. */
    @Override
    public void close() {
        Thread t;
        lock.lock();
        try {
            running = false;
            wake.signalAll();
            t = poller;
        } finally {
            lock.unlock();
        }
        subscribers.clear();
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

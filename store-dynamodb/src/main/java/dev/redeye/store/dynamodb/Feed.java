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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The transition feed without DynamoDB Streams, sharded: transitions go to one of {@code S} feed shards, items
 * {@code f#s0} to {@code f#s<S-1>} chosen by a hash of the operation name ({@link Keys#feedShard}), each holding
 * its own sequence number {@code seq}, a ring {@code ev} of its last events ({@code {s: seq, e: event line}},
 * newest last), a counter {@code lost} of events that could not be written to it, and {@code of}, the shard count
 * of the store that wrote it. So no item takes every transition's write or every subscriber's read: each shard
 * is written by the transitions of its operations only, and read by a subscribed store once per poll interval.
 *
 * <p><b>Writing</b>: after a transition's state write, {@link #publish} reads the operation's shard (strongly
 * consistent) and writes it back with the event appended under the condition {@code seq = :seen} (single-item
 * compare-and-set), retrying a lost condition a few times with jitter. If that still fails, it adds 1 to the
 * shard's {@code lost} (an unconditional {@code ADD}), so that every subscriber learns that it may have missed
 * an event. All events of one operation go to one shard, in the order their head writes land there; a process
 * that dies between the state write and the head write loses the event silently (subscribers that need certainty
 * re-read: the engine's local cache does, after {@code staleTolerance}).
 *
 * <p><b>Reading</b>: one poller thread per store instance, started by the first subscription, reads one feed
 * item at a time, the next one every {@code pollInterval / items}, so that each item is read once per poll
 * interval and the reads of a store are spread over the interval instead of coming in a burst. These reads are
 * eventually consistent (half the read capacity), which the ordering allows: a read returns one whole version of
 * the item, an earlier version holds nothing that a later one lacks, and {@link FeedCursor} recognizes an
 * earlier version than one already read (its {@code seq} or {@code lost} went back) and confirms it with a
 * strongly consistent read before taking it as a reset. The first subscription's baseline is read strongly
 * consistent, so that every transition written after {@code subscribe} returns is delivered. New events are fanned
 * out in sequence order per shard through {@link FeedSubscribers}; {@code onGap} runs when a shard's ring no
 * longer holds the next event expected (the subscriber fell more than the ring behind on that shard), when a
 * shard's {@code lost} grew, when a shard was written by a store with another shard count (every poll of it,
 * while that lasts), and once per streak of failed polls, which then back off (the poll interval doubling up to
 * 5 s). Events of one operation are delivered in version order: an event older than one already delivered for
 * the same operation is dropped (a later transition's head write can land before an earlier one's).
 *
 * <p><b>Earlier releases</b> wrote and read one feed head, {@code f#head}. With {@code legacyHead} on (the
 * default), a rolling upgrade is safe both ways: the poller also reads {@code f#head} as one more item of its
 * rotation and delivers what an earlier release's writer appended there, and every transition's writer adds 1 to
 * both {@code lost} and {@code mv} of {@code f#head}, so that an earlier release's reader, which knows only
 * {@code lost}, is told of a gap (its engine re-reads) while this release's readers subtract {@code mv}. Once no
 * instance of an earlier release is left, {@code legacyHead} off stops both.
 */
final class Feed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Feed.class);
    static final String SEQ = "seq";
    static final String EVENTS = "ev";
    static final String LOST = "lost";
    /** On a shard: the shard count of the store that last wrote it. */
    static final String SHARDS = "of";
    /** On the earlier releases' head: notices added with {@code lost} by this release's writers. */
    static final String MOVED = "mv";
    static final String EVENT_SEQ = "s";
    static final String EVENT_LINE = "e";
    /** The most bytes of event lines a ring keeps, so a feed item stays far below DynamoDB's 400 KB. */
    static final int RING_BYTES = 32 * 1024;
    /** The default number of feed shards. */
    static final int DEFAULT_SHARDS = 16;
    /** The most feed shards: a subscription's baseline reads every one of them. */
    static final int MAX_SHARDS = 256;
    private static final int PUBLISH_ATTEMPTS = 10;
    private static final long MAX_BACKOFF_MILLIS = 5_000;

    private final Requests requests;
    private final int ringSize;
    private final long pollNanos;
    private final int shards;
    private final boolean legacyHead;
    /** Version order per operation (R6.9): a later transition's head write can land before an earlier one's. */
    private final FeedSubscribers subscribers = FeedSubscribers.inVersionOrder((what, t) -> LOG.warn("{}", what, t));
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    /** The items the poller reads in turn: the shards, then the earlier releases' head with {@code legacyHead}. */
    private final List<FeedCursor> cursors = new ArrayList<>();
    private final AtomicBoolean mismatchLogged = new AtomicBoolean();
    private Thread poller;
    private boolean running = true;
    private boolean baseline;
    private int next;
    private volatile boolean injectFault;

    Feed(Requests requests, int ringSize, Duration pollInterval, int shards, boolean legacyHead) {
        this.requests = requests;
        this.ringSize = ringSize;
        this.pollNanos = Math.max(1, pollInterval.toNanos());
        this.shards = checkShards(shards);
        this.legacyHead = legacyHead;
        for (int i = 0; i < shards; i++) {
            cursors.add(new FeedCursor(Keys.feedShardKey(i), shards));
        }
        if (legacyHead) {
            cursors.add(new FeedCursor(Keys.FEED_HEAD, 0));
        }
        next = ThreadLocalRandom.current().nextInt(cursors.size());
    }

    /**
     * Validates a shard count.
     *
     * @throws IllegalArgumentException unless between 1 and {@value #MAX_SHARDS}
     */
    static int checkShards(int shards) {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new IllegalArgumentException("feedShards must be between 1 and " + MAX_SHARDS + " (every instance "
                    + "of a fleet the same), was " + shards);
        }
        return shards;
    }

    /** The partition keys the poller reads, in its order (tests). */
    List<String> itemKeys() {
        return cursors.stream().map(FeedCursor::key).toList();
    }

    // ------------------------------------------------------------------------------------------ writing

    /**
     * Appends an event to its operation's shard; never throws (the state write it follows has happened). The
     * shard's attempts stop a little before the call's deadline ({@link Requests#beforeLostCount}), so that the
     * lost count can still be written by then.
     */
    void publish(TransitionEvent event, long deadline) {
        String pk = Keys.feedShardKey(Keys.feedShard(event.operation(), shards));
        if (!append(pk, event, requests.beforeLostCount(deadline))) {
            markLost(pk, deadline);
        }
        if (legacyHead) {
            noticeLegacyReaders(deadline);
        }
    }

    private boolean append(String pk, TransitionEvent event, long headDeadline) {
        String line = StateCodec.eventToLine(event);
        try {
            for (int attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
                Map<String, AttributeValue> head = requests.get("feed shard read", null, pk, headDeadline);
                long seq = head == null ? 0 : number(head.get(SEQ));
                long of = head == null ? 0 : number(head.get(SHARDS));
                if (of != 0 && of != shards && mismatchLogged.compareAndSet(false, true)) {
                    LOG.error("feed shard {} of table {} was written by a store with feedShards={}, this store uses {}:"
                            + " every instance of a fleet must use the same feedShards, or subscribers miss events (they"
                            + " are told of gaps meanwhile)", pk, requests.table(), of, shards);
                }
                List<AttributeValue> ring = new ArrayList<>(head == null || head.get(EVENTS) == null
                        ? List.of() : head.get(EVENTS).l());
                ring.add(AttributeValue.builder().m(Map.of(EVENT_SEQ, Items.n(seq + 1), EVENT_LINE, Items.s(line)))
                        .build());
                trim(ring);
                Map<String, AttributeValue> values = values(":lay", Items.n(Items.LAYOUT_1), ":next", Items.n(seq + 1),
                        ":ev", AttributeValue.builder().l(ring).build(), ":of", Items.n(shards));
                boolean first = head == null || !head.containsKey(SEQ); // no shard yet, or one made by 'ADD lost'
                if (!first) {
                    values.put(":seen", Items.n(seq));
                }
                UpdateItemRequest.Builder u = UpdateItemRequest.builder().key(Items.key(pk))
                        .updateExpression("SET #lay = :lay, #seq = :next, #ev = :ev, #of = :of")
                        .conditionExpression(first ? "attribute_not_exists(#seq)" : "#seq = :seen")
                        .expressionAttributeNames(names("#lay", Items.LAYOUT, "#seq", SEQ, "#ev", EVENTS, "#of", SHARDS))
                        .expressionAttributeValues(values);
                if (requests.update("feed shard write", null, u, headDeadline)) {
                    return true;
                }
                Requests.backoff(attempt, 20, headDeadline);
            }
            LOG.warn("feed shard {} of table {} stayed contended for {} attempts; event of '{}' (version {}) not "
                    + "written, subscribers are told of a gap", pk, requests.table(), PUBLISH_ATTEMPTS,
                    OperationNames.abbreviate(event.operation()), event.version());
        } catch (StoreException e) {
            LOG.warn("writing feed shard {} of table {} failed; event of '{}' (version {}) not written, subscribers"
                    + " are told of a gap: {}", pk, requests.table(), OperationNames.abbreviate(event.operation()),
                    event.version(), e.getMessage());
        }
        return false;
    }

    private void markLost(String pk, long deadline) {
        try {
            requests.update("feed shard lost count", null, UpdateItemRequest.builder().key(Items.key(pk))
                    .updateExpression("ADD #lost :one")
                    .expressionAttributeNames(names("#lost", LOST))
                    .expressionAttributeValues(values(":one", Items.n(1))), deadline);
        } catch (StoreException e) {
            LOG.warn("could not even count the lost event on feed shard {} of table {}: {}", pk, requests.table(),
                    e.getMessage());
        }
    }

    /**
     * Tells the readers of earlier releases, which read only {@code f#head}, that they missed an event: {@code lost}
     * grows (they signal a gap and their engine re-reads), and {@code mv} with it, so that this release's readers
     * of {@code f#head} do not count it as lost.
     */
    private void noticeLegacyReaders(long deadline) {
        try {
            requests.update("feed head notice", null, UpdateItemRequest.builder().key(Items.key(Keys.FEED_HEAD))
                    .updateExpression("ADD #lost :one, #mv :one")
                    .expressionAttributeNames(names("#lost", LOST, "#mv", MOVED))
                    .expressionAttributeValues(values(":one", Items.n(1))), deadline);
        } catch (StoreException e) {
            LOG.warn("could not add the notice for earlier releases' readers to the feed head of table {} (they may"
                    + " miss this transition until they re-read): {}", requests.table(), e.getMessage());
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

    /** Reads every feed item strongly consistent: the subscription starts from the feed as it is now. */
    private void readBaseline(long deadline) {
        for (FeedCursor c : cursors) {
            c.baseline(requests.get("feed baseline read", null, c.key(), deadline));
        }
        baseline = true;
    }

    private void pollLoop() {
        long step = Math.max(1, pollNanos / cursors.size());
        long pause = step;
        long failingPause = 0;
        while (true) {
            lock.lock();
            try {
                if (running) {
                    wake.awaitNanos(pause);
                }
                if (!running) {
                    return;
                }
                if (subscribers.isEmpty()) {
                    baseline = false; // the next subscriber starts from the feed as it is then
                    pause = step;
                    continue;
                }
                try {
                    pollOnce(cursors.get(next));
                    next = (next + 1) % cursors.size();
                    failingPause = 0;
                    pause = step;
                } catch (StoreException | IllegalArgumentException e) {
                    if (!running) {
                        return;
                    }
                    if (failingPause == 0) {
                        LOG.warn("polling the feed of table {} failed; subscribers are told of a gap and the poll is "
                                + "retried with backoff: {}", requests.table(), e.getMessage());
                        subscribers.signalGap();
                    }
                    failingPause = Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_BACKOFF_MILLIS),
                            failingPause == 0 ? pollNanos : failingPause * 2);
                    pause = failingPause;
                }
            } catch (InterruptedException e) {
                return; // close()
            } finally {
                lock.unlock();
            }
        }
    }

    private void pollOnce(FeedCursor c) {
        if (injectFault) {
            injectFault = false;
            throw new StoreException("feed poll failed (injected fault)");
        }
        int mismatchBefore = c.mismatch();
        FeedCursor.Read r = c.read(requests.get("feed poll", null, c.key(), Requests.NO_DEADLINE, false), false);
        if (r.stale()) {
            r = c.read(requests.get("feed poll", null, c.key(), Requests.NO_DEADLINE, true), true);
        }
        if (c.mismatch() != 0 && mismatchBefore == 0) {
            LOG.error("{}; subscribers are told of a gap on every poll of it while this lasts", r.why());
        }
        if (r.gap()) {
            LOG.debug("feed of table {}: gap: {}", requests.table(), r.why());
            subscribers.signalGap();
        }
        for (FeedCursor.Event e : r.events()) {
            TransitionEvent event;
            try {
                event = StateCodec.eventFromLine(e.line(), "feed item " + c.key() + " of table " + requests.table()
                        + ", seq " + e.seq());
            } catch (StoreException ex) {
                LOG.warn("skipping a malformed feed event: {}", ex.getMessage());
                subscribers.signalGap();
                continue;
            }
            subscribers.publish(event); // drops an older transition whose head write landed late
        }
    }

    static String lineOf(AttributeValue e) {
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

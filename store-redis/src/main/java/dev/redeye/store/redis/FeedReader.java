package dev.redeye.store.redis;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.FeedSubscribers;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.BuilderFactory;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.resps.StreamEntry;

/**
 * The one reader thread of a store instance: blocks in XREAD BLOCK on the feed stream over its dedicated
 * connection and fans every entry out to every subscriber of the instance. On any failure it calls every
 * subscriber's {@code onGap}, waits with exponential backoff, reconnects and resumes after the last entry
 * it delivered (so only entries trimmed away meanwhile are lost).
 *
 * <p><b>Bounded reads.</b> Jedis runs a command it knows as blocking (XREAD with BLOCK) with the client
 * config's blocking socket timeout, which is infinite unless configured, so on a user-supplied pool a
 * silently dead TCP connection would block the reader forever. The reader therefore sends XREAD as a plain
 * command and sets the connection's socket timeout to the block time plus a margin itself: a read that
 * gets no answer in time fails, signals a gap and reconnects, whatever connector supplied the connection.
 *
 * <p><b>Order.</b> Each event is appended in a second call after the state script that made the transition,
 * so two clients' events of one operation can land in the stream in the wrong order. Subscribers get each
 * operation's events in increasing version order: an entry older than one already delivered for its
 * operation is obsolete and dropped ({@link FeedSubscribers#inVersionOrder}).
 *
 * <p><b>Trimmed entries.</b> The stream is trimmed to about {@code maxLength} entries. When a read returns
 * as many entries as a reader that fell behind the trimming would get (a full batch, or {@code maxLength}),
 * the reader compares the stream's first entry with the last one it read before; if the first is newer,
 * entries may have been trimmed unseen and every subscriber's {@code onGap} runs (a false positive is
 * harmless: subscribers re-read).
 *
 * <p><b>A stream that went backwards.</b> After a fail-over the new primary may hold a shorter stream, or
 * none, or stamp new entries with a clock that is behind: its end is then below the reader's position and
 * new entries would be skipped. The reader checks the stream's end after every reconnect and every read that
 * found nothing; when it is below the position, it signals a gap and reads on from that end.
 */
final class FeedReader {
    private static final Logger LOG = LoggerFactory.getLogger(FeedReader.class);
    private static final int READ_COUNT = 256;
    /**
     * The field of a gap marker entry: a store instance that failed to publish an event appends
     * {@code gap <its feed client name>} once the stream accepts writes again, and every reader that reads it
     * signals a gap (the lost event cannot be recovered, only re-read from the state).
     */
    static final String GAP_FIELD = "gap";

    private final FeedConnector connector;
    private final String streamKey;
    private final String clientName;
    private final int blockMillis;
    private final int readTimeoutMillis;
    private final long maxLength;
    private final long backoffMinMillis;
    private final long backoffMaxMillis;
    /**
     * In version order per operation (TCK rule R6.9): the state script and the XADD of its event are two
     * calls, so two clients' events of one operation can land in the stream swapped; the later, older one is
     * obsolete and dropped (versions never go backwards in this store).
     */
    private final FeedSubscribers subscribers = FeedSubscribers.inVersionOrder(
            (what, t) -> LOG.warn("redeye feed subscriber: {}", what, t));
    private final Object sleeper = new Object();

    private volatile boolean closed;
    private volatile Connection current;
    private volatile Thread thread;
    /** Read and written by the reader thread only, after {@link #start()}. */
    private StreamEntryID lastId;

    FeedReader(FeedConnector connector, String streamKey, String clientName, int blockMillis, long maxLength,
            long backoffMinMillis, long backoffMaxMillis) {
        this.connector = connector;
        this.streamKey = streamKey;
        this.clientName = clientName;
        this.blockMillis = blockMillis;
        this.readTimeoutMillis = readTimeoutMillis(blockMillis);
        this.maxLength = maxLength;
        this.backoffMinMillis = backoffMinMillis;
        this.backoffMaxMillis = backoffMaxMillis;
    }

    /** The socket timeout of one XREAD BLOCK: the block time plus the larger of 1 s and half of it. */
    static int readTimeoutMillis(int blockMillis) {
        return blockMillis + Math.max(1_000, blockMillis / 2);
    }

    /**
     * Connects, fixes the position (the stream's current last entry, so every event published after this
     * returns is delivered) and starts the reader thread. Jedis exceptions propagate.
     */
    void start() {
        Connection c = connector.open(clientName);
        try {
            c.setSoTimeout(readTimeoutMillis);
            List<StreamEntry> last = new Jedis(c).xrevrange(streamKey, "+", "-", 1);
            lastId = last.isEmpty() ? new StreamEntryID(0, 0) : last.get(0).getID();
        } catch (RuntimeException e) {
            connector.discard(c);
            throw e;
        }
        current = c;
        Thread t = new Thread(this::run, clientName);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    TransitionFeed.Subscription add(Consumer<TransitionEvent> listener, Runnable onGap) {
        return subscribers.add(listener, onGap);
    }

    /**
     * Runs every subscriber's {@code onGap} now, on the calling thread: this instance failed to publish an
     * event, so its subscribers would otherwise never learn they missed it.
     */
    void signalGap() {
        boolean interrupted = Thread.currentThread().isInterrupted();
        subscribers.signalGap();
        if (!interrupted) {
            Thread.interrupted(); // an interrupt a subscriber left is not the publishing caller's
        }
    }

    Thread thread() {
        return thread;
    }

    /** Stops the thread and frees the connection; waits up to {@code joinMillis} for the thread to end. */
    void close(long joinMillis) {
        closed = true;
        Connection c = current;
        if (c != null) {
            try {
                c.disconnect(); // unblocks a pending XREAD BLOCK at once
            } catch (RuntimeException ignored) {
                // already gone
            }
        }
        synchronized (sleeper) {
            sleeper.notifyAll();
        }
        Thread t = thread;
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(joinMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("redeye feed reader {} did not stop within {} ms (a subscriber callback may be blocking)",
                        clientName, joinMillis);
            }
        }
        subscribers.clear();
    }

    private void run() {
        Connection c = current;
        long backoff = backoffMinMillis;
        int failedAttempts = 0;
        try {
            while (!closed) {
                try {
                    if (c == null) {
                        c = connector.open(clientName);
                        current = c;
                        c.setSoTimeout(readTimeoutMillis);
                        if (closed) {
                            break;
                        }
                        LOG.info("redeye feed reader {} reconnected to {} after {} failed attempt(s)", clientName,
                                connector.describe(), failedAttempts);
                        rebaseIfRewound(new Jedis(c)); // a fail-over's new primary may hold a shorter stream
                    }
                    Jedis jedis = new Jedis(c);
                    while (!closed) {
                        StreamEntryID before = lastId;
                        List<Map.Entry<String, List<StreamEntry>>> batch = c.executeCommand(xread(before));
                        backoff = backoffMinMillis;
                        failedAttempts = 0;
                        if (batch == null) {
                            rebaseIfRewound(jedis); // XREAD BLOCK timed out: nothing new, or nothing above lastId
                            continue;
                        }
                        int n = 0;
                        for (Map.Entry<String, List<StreamEntry>> stream : batch) {
                            n += stream.getValue().size();
                        }
                        if (n >= Math.min(READ_COUNT, maxLength) && trimmedPast(jedis, before)) {
                            LOG.warn("redeye feed reader {} fell behind the trimming of {} (feedMaxLength {}):"
                                    + " entries after {} may be lost; signalling a gap", clientName,
                                    OperationNames.abbreviate(streamKey), maxLength, before);
                            subscribers.signalGap();
                            clearInterrupt();
                        }
                        for (Map.Entry<String, List<StreamEntry>> stream : batch) {
                            for (StreamEntry entry : stream.getValue()) {
                                lastId = entry.getID(); // advanced first: a failing entry is never re-read
                                dispatch(entry);
                            }
                        }
                        clearInterrupt();
                    }
                } catch (RuntimeException e) {
                    if (closed) {
                        break;
                    }
                    failedAttempts++;
                    if (failedAttempts == 1) {
                        LOG.warn("redeye feed reader {} lost its connection to {} ({}); signalling a gap,"
                                + " reconnecting with backoff", clientName, connector.describe(), e.toString());
                    } else {
                        LOG.debug("redeye feed reader {}: reconnect attempt {} failed ({}); next in {} ms",
                                clientName, failedAttempts, e.toString(), backoff);
                    }
                    connector.discard(c);
                    c = null;
                    current = null;
                    subscribers.signalGap();
                    clearInterrupt();
                    pause(backoff);
                    backoff = Math.min(backoff * 2, backoffMaxMillis);
                }
            }
        } finally {
            connector.discard(c);
            current = null;
        }
    }

    /**
     * XREAD COUNT n BLOCK ms STREAMS key id, deliberately not marked as a blocking command, so Jedis keeps
     * the connection's own (bounded) socket timeout instead of switching to the infinite blocking one.
     */
    private CommandObject<List<Map.Entry<String, List<StreamEntry>>>> xread(StreamEntryID after) {
        CommandArguments args = new CommandArguments(Protocol.Command.XREAD)
                .add(Protocol.Keyword.COUNT).add(READ_COUNT)
                .add(Protocol.Keyword.BLOCK).add(blockMillis)
                .add(Protocol.Keyword.STREAMS).key(streamKey).add(after.toString());
        return new CommandObject<>(args, BuilderFactory.STREAM_READ_RESPONSE);
    }

    /**
     * Detects a stream whose end moved below the reader's position: after a fail-over to a primary that lost
     * the stream or whose clock is behind, new entries get ids below {@link #lastId}, and XREAD after it would
     * skip them all, silently, until that clock catches up. When the stream's last entry (none for a missing or
     * empty stream) is below {@code lastId}, every subscriber's {@code onGap} runs and the reader moves its
     * position back to that entry, so everything appended from now on is delivered. Checked after every XREAD
     * that found nothing (at most one XREVRANGE per {@code feedBlock} while the stream is idle; an XREAD that
     * returns entries proves the end is above the position) and after every reconnect.
     */
    private void rebaseIfRewound(Jedis jedis) {
        List<StreamEntry> last = jedis.xrevrange(streamKey, "+", "-", 1);
        StreamEntryID end = last.isEmpty() ? new StreamEntryID(0, 0) : last.get(0).getID();
        if (end.compareTo(lastId) >= 0) {
            return;
        }
        LOG.warn("redeye feed reader {}: the end of {} ({}) is below the last entry read ({}): the stream was lost"
                + " or rewritten (a fail-over, a server clock behind); signalling a gap and reading on from {}",
                clientName, OperationNames.abbreviate(streamKey), last.isEmpty() ? "no entry" : end, lastId, end);
        lastId = end;
        subscribers.signalGap();
        clearInterrupt();
    }

    /** Whether the stream's first entry is newer than {@code lastRead}: entries may have been trimmed unseen. */
    private boolean trimmedPast(Jedis jedis, StreamEntryID lastRead) {
        List<StreamEntry> first = jedis.xrange(streamKey, "-", "+", 1);
        return !first.isEmpty() && first.get(0).getID().compareTo(lastRead) > 0;
    }

    /**
     * A subscriber callback may leave this thread's interrupt flag set (its own business, for example a
     * blocking call it gave up). Only {@link #close} stops the reader, so the flag is cleared after every
     * callback: left set it would end every backoff pause at once and make a failing reader spin.
     */
    private static void clearInterrupt() {
        Thread.interrupted();
    }

    /** Waits {@code millis} unless the reader is closed meanwhile; interrupts do not end the wait. */
    private void pause(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        synchronized (sleeper) {
            long left;
            while (!closed && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(sleeper, left);
                } catch (InterruptedException e) {
                    // not a stop signal (close() sets closed and notifies): keep waiting out the backoff
                }
            }
        }
    }

    private void dispatch(StreamEntry entry) {
        String gapBy = entry.getFields().get(GAP_FIELD);
        if (gapBy != null) {
            if (!gapBy.equals(clientName)) { // this instance's own subscribers had theirs when the publish failed
                LOG.info("redeye feed reader {}: {} failed to publish an event earlier; signalling a gap", clientName,
                        OperationNames.abbreviate(gapBy));
                subscribers.signalGap();
            }
            return;
        }
        TransitionEvent event;
        try {
            event = StateCodec.eventFromFields(entry.getFields(), "feed entry " + entry.getID() + " of " + streamKey);
        } catch (StoreException e) {
            LOG.warn("redeye feed reader {} skipped a malformed entry: {}", clientName, e.getMessage());
            return;
        }
        subscribers.publish(event);
    }
}

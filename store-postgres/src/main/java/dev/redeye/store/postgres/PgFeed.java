package dev.redeye.store.postgres;

import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.support.FeedSubscribers;
import dev.redeye.spi.support.StateCodec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.BitSet;
import java.util.Objects;
import java.util.function.Consumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transition feed of one {@link PostgresStore}: one dedicated LISTEN connection and one daemon thread
 * that polls it with {@link PGConnection#getNotifications(int)} and fans every event out to the
 * subscribers. Started by the first subscription, stopped by {@link #close()}.
 *
 * <p>The connection is used by the feed thread only (after the subscribing thread that opened it starts
 * that thread). On a lost connection it tries one immediate reconnect; if that works, every subscriber gets
 * one {@code onGap} once the new connection listens; if not, every subscriber gets {@code onGap} at once,
 * the thread retries with exponential backoff (100 ms doubling to 10 s), and calls {@code onGap} again once
 * it listens. Either way a subscriber that re-reads after its last {@code onGap} misses nothing.
 *
 * <p>Polled ({@code feed=poll}, for PgBouncer in transaction mode, where LISTEN cannot work, or for fleets too
 * large for a LISTEN session each): the same thread, no LISTEN and no connection of its own: every
 * {@code pollMillis} the thread borrows a connection from the store's source, reads the events table (where
 * every transition writes its event) after the highest id it has read, and the ids it is still waiting for
 * ({@link PollPosition}), in id order, at most {@value StateSql#POLL_BATCH} rows a round trip, and gives the
 * connection back. It starts after the highest id at its first subscription and keeps its position across
 * failed polls (saying {@code onGap} when polls start failing and when they work again). Each poll is one
 * indexed round trip in a transaction of its own, so store instances sharing a pool hold at most its
 * connections, and behind PgBouncer no server session is held between polls.
 *
 * <p>A LISTEN connection silent for {@value #VALIDATE_IDLE_MILLIS} ms is validated with a round trip bounded by
 * {@value #VALIDATE_TIMEOUT_SECONDS} s, so a server that froze or vanished without closing the connection
 * is noticed within about three seconds, not when TCP gives up. The thread belongs to the feed: a subscriber
 * that sets its interrupt flag has it cleared after the callback (an interrupt must not break the pool
 * borrow or the backoff wait of the next reconnect), and anything that escapes the loop (an {@link Error}
 * thrown by a subscriber, a driver bug) is logged, signalled as a gap, and the loop starts again after a
 * backoff. Only {@link #close()} ends it.
 */
final class PgFeed {
    private static final Logger LOG = LoggerFactory.getLogger(PgFeed.class);
    static final int POLL_MILLIS = 250;
    static final long VALIDATE_IDLE_MILLIS = 2_000;
    static final int VALIDATE_TIMEOUT_SECONDS = 1;
    private static final long MIN_BACKOFF_MILLIS = 100;
    private static final long MAX_BACKOFF_MILLIS = 10_000;
    private static final long JOIN_MILLIS = 5_000;
    /** How long a polled feed waits for an id missing below the highest it read (see {@link PollPosition}). */
    static final long HOLE_GRACE_MILLIS = 10_000;
    /** The most ids a polled feed waits for at once. */
    static final int MAX_HOLES = 1_000;
    /** A polled feed's bound on one poll's reply (a frozen server fails the poll instead of hanging it). */
    static final int POLL_NETWORK_TIMEOUT_MILLIS = 5_000;

    private final SqlRunner.Source source;
    private final TableNames names;
    private final String selectEvent;
    /** Polled: the interval between polls in milliseconds; 0 for LISTEN. */
    private final long pollMillis;
    private final String pollEvents;
    private final String lastEventId;
    private final FeedSubscribers subscribers;
    private final Object lock = new Object();
    private final StopSignal stop = new StopSignal();
    private Thread thread;                // guarded by lock
    private volatile boolean stopped;
    private volatile int backendPid = -1;

    // Owned by the feed thread once it runs.
    private Listening conn;
    private PollPosition position;

    /**
     * @param pollMillis 0 for a LISTEN feed; else a polled feed's interval between polls
     */
    PgFeed(SqlRunner.Source source, TableNames names, StateSql sql, long pollMillis) {
        this.source = source;
        this.names = names;
        this.selectEvent = sql.selectEvent;
        this.pollMillis = pollMillis;
        this.pollEvents = sql.pollEvents;
        this.lastEventId = sql.lastEventId;
        this.subscribers = new FeedSubscribers((what, t) -> LOG.warn("{} on channel {}", what, names.channel, t));
    }

    TransitionFeed.Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(onGap, "onGap");
        synchronized (lock) {
            if (stop.stopped()) {
                throw new StoreException("PostgresStore on " + names.states + " is closed");
            }
            if (thread == null) {
                try {
                    if (pollMillis > 0) {
                        if (position == null) {
                            position = startPosition();
                        }
                    } else {
                        conn = listen();
                    }
                } catch (SQLException | RuntimeException e) {
                    throw new StoreException("cannot start the transition feed on channel " + names.channel + ": "
                            + e.getMessage(), e);
                }
                Thread t = new Thread(this::run, "redeye-pg-feed " + names.channel);
                t.setDaemon(true);
                thread = t;
                TransitionFeed.Subscription sub = subscribers.add(listener, onGap);
                t.start();
                return sub;
            }
            return subscribers.add(listener, onGap);
        }
    }

    int backendPid() {
        return backendPid;
    }

    boolean threadAlive() {
        synchronized (lock) {
            return thread != null && thread.isAlive();
        }
    }

    /** Stops the thread, waits for it to close its connection, and drops every subscriber. Idempotent. */
    void close() {
        Thread t;
        stop.stop();
        stopped = true;
        synchronized (lock) {
            t = thread;
        }
        if (t == Thread.currentThread()) {
            // close() from a callback: this thread owns the connection; give it back before the caller
            // closes the pool it came from. The loop ends as soon as the callback returns.
            closeQuietly(conn);
            conn = null;
            backendPid = -1;
        } else if (t != null) {
            try {
                t.join(JOIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("feed thread {} did not stop within {} ms", t.getName(), JOIN_MILLIS);
            }
        }
        subscribers.clear();
    }

    private void run() {
        long backoff = MIN_BACKOFF_MILLIS;
        while (!stopped) {
            try {
                listenLoop();
            } catch (RuntimeException | Error e) {
                if (stopped) {
                    break;
                }
                // The loop died (a subscriber's Error, a driver bug): say so, and start it again.
                LOG.error("transition feed on channel {} failed; restarting it after {} ms", names.channel, backoff, e);
                closeQuietly(conn);
                conn = null;
                backendPid = -1;
                gap();
                if (!pause(backoff)) {
                    break;
                }
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
            }
        }
        closeQuietly(conn);
        conn = null;
        backendPid = -1;
    }

    private void listenLoop() {
        if (pollMillis > 0) {
            pollLoop();
            return;
        }
        long lastActivity = System.nanoTime();
        while (!stopped) {
            if (conn == null) {
                if (!reconnectWithBackoff()) {
                    return;
                }
                lastActivity = System.nanoTime();
                continue;
            }
            try {
                PGNotification[] batch = conn.pg.getNotifications(POLL_MILLIS);
                if (batch != null && batch.length > 0) {
                    lastActivity = System.nanoTime();
                    for (PGNotification n : batch) {
                        dispatch(n);
                    }
                } else if (System.nanoTime() - lastActivity > VALIDATE_IDLE_MILLIS * 1_000_000L) {
                    // getNotifications cannot see a silently dead or frozen peer; a round trip can.
                    if (!conn.connection.isValid(VALIDATE_TIMEOUT_SECONDS)) {
                        throw new SQLException("feed connection failed validation within "
                                + VALIDATE_TIMEOUT_SECONDS + " s");
                    }
                    lastActivity = System.nanoTime();
                }
            } catch (SQLException | RuntimeException e) {
                if (stopped) {
                    return;
                }
                LOG.warn("transition feed on channel {} lost its connection ({}); reconnecting", names.channel,
                        e.getMessage());
                closeQuietly(conn);
                conn = null;
                backendPid = -1;
                // One immediate attempt: on success the subscribers get a single onGap, after LISTEN.
                try {
                    conn = listen();
                    LOG.info("transition feed on channel {} listens again", names.channel);
                    gap();
                } catch (SQLException | RuntimeException again) {
                    LOG.warn("transition feed on channel {} cannot reconnect yet ({})", names.channel,
                            again.getMessage());
                    gap();
                }
            }
        }
    }

    /** Waits {@code millis} unless the feed stops meanwhile; false once it stops (interrupts do not stop it). */
    private boolean pause(long millis) {
        return stop.pause(millis);
    }

    /** Retries {@link #listen()} with exponential backoff; false if the feed was stopped meanwhile. */
    private boolean reconnectWithBackoff() {
        long backoff = MIN_BACKOFF_MILLIS;
        while (true) {
            if (!pause(backoff)) {
                return false;
            }
            try {
                conn = listen();
                LOG.info("transition feed on channel {} listens again", names.channel);
                gap();
                return true;
            } catch (SQLException | RuntimeException e) {
                LOG.warn("transition feed on channel {} cannot reconnect ({}); next attempt in {} ms",
                        names.channel, e.getMessage(), Math.min(backoff * 2, MAX_BACKOFF_MILLIS));
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
            }
        }
    }

    /** Borrows a connection from the store's source, unwraps it to PGConnection and LISTENs. */
    private Listening listen() throws SQLException {
        SqlRunner.Lease lease = source.open();
        try {
            Connection c = lease.connection;
            if (!c.isWrapperFor(PGConnection.class)) {
                throw new StoreException("the transition feed needs a PostgreSQL JDBC connection (org.postgresql"
                        + ".PGConnection); the data source gave " + c.getClass().getName());
            }
            PGConnection pg = c.unwrap(PGConnection.class);
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // LISTEN takes effect at commit; a poll is a transaction of its own
            }
            try (Statement st = c.createStatement()) {
                st.execute("LISTEN " + TableNames.quote(names.channel));
            }
            PreparedStatement select = c.prepareStatement(selectEvent);
            Listening l = new Listening(lease, c, pg, select);
            backendPid = pg.getBackendPID();
            return l;
        } catch (SQLException | RuntimeException e) {
            try {
                lease.close();
            } catch (SQLException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * A polled feed's loop: every {@code pollMillis} one poll on a connection borrowed for it and given back at
     * once, so a polled feed holds no connection between polls and a thousand store instances sharing one pool
     * hold no more than its connections. A poll that fails says {@code onGap} (a subscriber must not trust what
     * it cached meanwhile), the next ones back off (doubling to {@value #MAX_BACKOFF_MILLIS} ms), and the first
     * that works again says {@code onGap} once more, after it delivered what it read: the position is kept, so
     * nothing committed meanwhile is skipped.
     */
    private void pollLoop() {
        long wait = pollMillis;
        boolean failing = false;
        while (!stopped) {
            if (!pause(wait)) {
                return;
            }
            try {
                pollOnce();
                if (failing) {
                    LOG.info("polled feed of {} polls again", names.events);
                    failing = false;
                    wait = pollMillis;
                    gap();
                }
            } catch (SQLException | RuntimeException e) {
                if (stopped) {
                    return;
                }
                backendPid = -1;
                if (!failing) {
                    LOG.warn("polled feed of {} cannot poll ({}); retrying with backoff", names.events, e.getMessage());
                    failing = true;
                    gap();
                }
                wait = Math.min(Math.max(wait * 2, MIN_BACKOFF_MILLIS), MAX_BACKOFF_MILLIS);
            }
        }
    }

    /** One poll on a connection borrowed from the store's source for it. */
    private void pollOnce() throws SQLException {
        try (SqlRunner.Lease lease = source.open()) {
            Connection c = lease.connection;
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // each poll is a transaction of its own
            }
            int timeoutBefore = c.getNetworkTimeout();
            c.setNetworkTimeout(Runnable::run, POLL_NETWORK_TIMEOUT_MILLIS);
            try (PreparedStatement select = c.prepareStatement(pollEvents)) {
                if (c.isWrapperFor(PGConnection.class)) {
                    backendPid = c.unwrap(PGConnection.class).getBackendPID();
                }
                poll(c, select);
            } finally {
                c.setNetworkTimeout(Runnable::run, timeoutBefore); // the pool's connection, as it was lent
            }
        }
    }

    /** The position of a polled feed's first subscription, read on a connection borrowed for it. */
    private PollPosition startPosition() throws SQLException {
        try (SqlRunner.Lease lease = source.open()) {
            Connection c = lease.connection;
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            try (PreparedStatement select = c.prepareStatement(pollEvents)) {
                return start(c, select);
            }
        }
    }

    /**
     * The position of a polled feed's first subscription: after the highest id committed, with the ids below it
     * that are not visible yet (transactions in flight) waited for as quiet holes.
     */
    private PollPosition start(Connection c, PreparedStatement poll) throws SQLException {
        long last;
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(lastEventId)) {
            rs.next();
            last = rs.getLong(1);
        }
        PollPosition p = new PollPosition(last, HOLE_GRACE_MILLIS * 1_000_000L, MAX_HOLES);
        long from = Math.max(0, last - StateSql.POLL_BATCH);
        BitSet seen = new BitSet();
        poll.setLong(1, from);
        poll.setArray(2, c.createArrayOf("bigint", new Long[0]));
        try (ResultSet rs = poll.executeQuery()) {
            while (rs.next()) {
                long id = rs.getLong(1);
                if (id <= last) {
                    seen.set((int) (id - from));
                }
            }
        }
        long now = System.nanoTime();
        for (long id = from + 1; id <= last; id++) {
            if (!seen.get((int) (id - from))) {
                p.missing(id, now);
            }
        }
        return p;
    }

    /** One poll of a polled feed: every new event and every hole that appeared, delivered in id order. */
    private void poll(Connection c, PreparedStatement select) throws SQLException {
        int rows;
        do {
            rows = 0;
            select.setLong(1, position.last());
            select.setArray(2, c.createArrayOf("bigint", position.holeIds()));
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    long id = rs.getLong(1);
                    if (position.read(id, System.nanoTime()) == PollPosition.Verdict.DELIVER) {
                        deliver(rs.getString(2), "event " + id + " of " + names.events);
                    }
                }
            }
        } while (rows == StateSql.POLL_BATCH && !stopped);
        if (position.expire(System.nanoTime())) {
            LOG.warn("polled feed of {} gave up waiting for events (rolled back, or older than the clean-up); "
                    + "subscribers re-read", names.events);
            gap();
        }
    }

    private void deliver(String line, String where) {
        TransitionEvent event;
        try {
            event = StateCodec.eventFromLine(line, where);
        } catch (RuntimeException e) {
            LOG.warn("ignoring a malformed event on {}: {}", names.events, e.getMessage());
            return;
        }
        subscribers.publish(event);
        clearInterrupt();
    }

    private void dispatch(PGNotification n) throws SQLException {
        if (!names.channel.equals(n.getName())) {
            return;
        }
        String payload = n.getParameter();
        TransitionEvent event;
        try {
            if (payload.startsWith(PostgresStore.REF_PREFIX)) {
                long id = Long.parseLong(payload.substring(PostgresStore.REF_PREFIX.length()));
                String line = readEvent(id);
                if (line == null) {
                    LOG.warn("event {} on channel {} was pruned before it was read", id, names.channel);
                    gap();
                    return;
                }
                event = StateCodec.eventFromLine(line, "event " + id + " of " + names.events);
            } else {
                event = StateCodec.eventFromLine(payload, "a NOTIFY payload on channel " + names.channel);
            }
        } catch (RuntimeException e) { // StoreException or NumberFormatException: not ours
            LOG.warn("ignoring a malformed notification on channel {}: {}", names.channel, e.getMessage());
            return;
        }
        subscribers.publish(event);
        clearInterrupt();
    }

    private String readEvent(long id) throws SQLException {
        conn.select.setLong(1, id);
        try (ResultSet rs = conn.select.executeQuery()) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private void gap() {
        subscribers.signalGap();
        clearInterrupt();
    }

    /**
     * Clears an interrupt flag a subscriber set on this thread: the feed thread is not the subscriber's to
     * interrupt, and a pending interrupt would fail the next reconnect's pool borrow and backoff wait.
     */
    private void clearInterrupt() {
        if (Thread.interrupted()) {
            LOG.debug("a subscriber on channel {} interrupted the feed thread; the flag was cleared", names.channel);
        }
    }

    private void closeQuietly(Listening l) {
        if (l == null) {
            return;
        }
        try {
            l.select.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("closing the feed's statement failed", e);
        }
        try {
            if (!l.connection.isClosed()) {
                // A pooled connection must not keep listening (and buffering) once returned.
                try (Statement st = l.connection.createStatement()) {
                    st.execute("UNLISTEN *");
                }
            }
        } catch (SQLException | RuntimeException e) {
            LOG.debug("UNLISTEN on the feed connection failed", e);
        }
        try {
            l.lease.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("closing the feed connection failed", e);
        }
    }

    /** One open LISTEN connection. */
    private static final class Listening {
        final SqlRunner.Lease lease;
        final Connection connection;
        final PGConnection pg;
        final PreparedStatement select;

        Listening(SqlRunner.Lease lease, Connection connection, PGConnection pg, PreparedStatement select) {
            this.lease = lease;
            this.connection = connection;
            this.pg = pg;
            this.select = select;
        }
    }
}

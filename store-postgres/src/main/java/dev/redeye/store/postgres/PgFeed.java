package dev.redeye.store.postgres;

import dev.redeye.api.FeedSubscribers;
import dev.redeye.api.StateCodec;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 * <p>A connection silent for {@value #VALIDATE_IDLE_MILLIS} ms is validated with a round trip bounded by
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

    private final SqlRunner.Source source;
    private final TableNames names;
    private final String selectEvent;
    private final FeedSubscribers subscribers;
    private final Object lock = new Object();
    private final StopSignal stop = new StopSignal();
    private Thread thread;                // guarded by lock
    private volatile boolean stopped;
    private volatile int backendPid = -1;

    // Owned by the feed thread once it runs.
    private Listening conn;

    PgFeed(SqlRunner.Source source, TableNames names, String selectEvent) {
        this.source = source;
        this.names = names;
        this.selectEvent = selectEvent;
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
                    conn = listen();
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
                c.setAutoCommit(true); // LISTEN takes effect at commit; stay outside transactions
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

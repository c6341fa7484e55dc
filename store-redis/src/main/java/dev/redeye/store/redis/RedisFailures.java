package dev.redeye.store.redis;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.NoSuchElementException;

import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * What a failed Jedis call tells about the command it carried, which decides whether the store may send it
 * again. Writes are at most once: a command whose reply was lost may have run, so only a command proven not
 * to have run, or one that is harmless to run twice, is sent a second time.
 */
enum RedisFailures {
    /**
     * A reply did not arrive within the socket timeout (or a connection attempt timed out): the server may
     * be frozen or slow, and the command may still run. Never retried: a retry could double-apply a write
     * and would double the time the caller waits.
     */
    TIMEOUT,
    /**
     * The server refused the command without running it (Cluster MOVED / ASK redirection), or no connection
     * could be made at all (connection refused): safe to send any command once more.
     */
    NOT_RUN,
    /**
     * An established connection broke (end of stream, reset, broken pipe): typical of a pooled connection
     * that went stale when the server restarted, but the server may also have died after running the
     * command. Retried once only for commands that are harmless to run twice.
     */
    BROKEN,
    /** No pooled connection became free in time ({@code maxWait}): not retried, waiting again doubles the bound. */
    POOL_EXHAUSTED,
    /** Anything else, such as an error reply of the server: not retried. */
    OTHER;

    /**
     * Classifies {@code e} by walking its causes and suppressed exceptions (a {@code JedisCluster} reports
     * the last attempt's failure as a suppressed exception of its own).
     */
    static RedisFailures of(Throwable e) {
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        Found f = new Found();
        walk(e, f, seen);
        if (f.timeout) {
            return TIMEOUT; // first: a timeout anywhere makes the outcome unknown
        }
        if (f.exhausted) {
            return POOL_EXHAUSTED;
        }
        if (f.redirect || f.refused) {
            return NOT_RUN;
        }
        if (f.connection) {
            return BROKEN;
        }
        return OTHER;
    }

    private static final class Found {
        boolean timeout;
        boolean exhausted;
        boolean redirect;
        boolean refused;
        boolean connection;
    }

    private static void walk(Throwable t, Found f, Map<Throwable, Boolean> seen) {
        if (t == null || seen.put(t, Boolean.TRUE) != null) {
            return;
        }
        if (t instanceof SocketTimeoutException) {
            f.timeout = true;
        } else if (t instanceof NoSuchElementException) {
            f.exhausted = true; // commons-pool: no idle object within maxWait
        } else if (t instanceof JedisRedirectionException) {
            f.redirect = true;
        } else if (t instanceof ConnectException) {
            f.refused = true;
        } else if (t instanceof JedisConnectionException) {
            f.connection = true;
        }
        walk(t.getCause(), f, seen);
        for (Throwable s : t.getSuppressed()) {
            walk(s, f, seen);
        }
    }
}

package dev.redeye.store.redis;

import java.time.Duration;

import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.PooledObjectState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.util.Pool;

/**
 * The connection factory of the pools this module builds from a URI. A connection that sat idle in the pool
 * for at least {@code idleCheck} is checked with a PING before it is lent out (bounded by
 * {@code checkTimeoutMillis}), so a connection that went stale while its server restarted or failed over is
 * replaced instead of failing the call; a connection used more recently is lent without a round trip, so a
 * busy store pays nothing. When a check fails, every other idle connection is dropped too: they are of the
 * same age and most likely just as dead, and checking each in turn against a frozen server would cost one
 * check timeout each.
 */
final class IdleCheckingConnectionFactory extends ConnectionFactory {
    private static final Logger LOG = LoggerFactory.getLogger(IdleCheckingConnectionFactory.class);

    private final Duration idleCheck;
    private final int checkTimeoutMillis;
    private final int socketTimeoutMillis;
    private volatile Pool<Connection> pool;

    IdleCheckingConnectionFactory(HostAndPort address, JedisClientConfig config, Duration idleCheck,
            int checkTimeoutMillis) {
        super(address, config);
        this.idleCheck = idleCheck;
        this.checkTimeoutMillis = checkTimeoutMillis;
        this.socketTimeoutMillis = config.getSocketTimeoutMillis();
    }

    /** The pool this factory feeds, for dropping idle connections after a failed check. */
    void pool(Pool<Connection> pool) {
        this.pool = pool;
    }

    @Override
    public boolean validateObject(PooledObject<Connection> pooled) {
        Connection c = pooled.getObject();
        if (c.isBroken() || !c.isConnected()) {
            return false;
        }
        if (pooled.getIdleDuration().compareTo(idleCheck) < 0) {
            return true; // used recently: no round trip
        }
        boolean alive;
        try {
            c.setSoTimeout(checkTimeoutMillis);
            alive = c.ping();
            c.setSoTimeout(socketTimeoutMillis);
        } catch (RuntimeException e) {
            LOG.debug("redeye: an idle pooled Redis connection failed its check ({}); dropping the idle ones",
                    e.toString());
            alive = false;
        }
        // Only when lending (ALLOCATED: the connection is out of the idle deque). The pool's evictor also
        // validates, on a connection still in the deque: clear() there would destroy it twice.
        if (!alive && pooled.getState() == PooledObjectState.ALLOCATED) {
            Pool<Connection> p = pool;
            if (p != null) {
                p.clear(); // destroys the idle connections; the one checked here is destroyed by the pool
            }
        }
        return alive;
    }
}

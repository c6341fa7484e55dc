package dev.redeye.store.redis;

import java.time.Duration;
import java.util.Objects;

import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.JedisClusterCRC16;
import redis.clients.jedis.util.Pool;

/**
 * Opens the one dedicated connection the feed reader blocks on, named with CLIENT SETNAME so an operator
 * (or a test) can find it in CLIENT LIST. Three sources, in order of preference:
 * <ul>
 * <li>explicit connection details ({@link HostAndPort} + {@link JedisClientConfig}): a fresh connection;</li>
 * <li>a {@link JedisPooled}: a connection borrowed from its pool for the reader's lifetime and destroyed
 * (never returned) afterwards, since it carries the reader's client name;</li>
 * <li>a {@link JedisCluster}: a connection to the node that owns the feed stream's slot, destroyed
 * afterwards; re-resolved from the client's slot map on every reconnect, so a fail-over is followed once
 * the client's own traffic has refreshed that map (a MOVED reply or a failed node triggers it).</li>
 * </ul>
 */
abstract class FeedConnector {

    /** Opens and names a connection; Jedis exceptions propagate. */
    abstract Connection open(String clientName);

    /** Frees a connection this connector opened; never throws. */
    void discard(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.setBroken(); // a pooled connection is destroyed instead of going back to the pool
            c.close();
        } catch (RuntimeException ignored) {
            // already gone
        }
    }

    /** Where the reader connects, for log messages; never contains credentials. */
    abstract String describe();

    static FeedConnector direct(HostAndPort address, JedisClientConfig config, int blockMillis) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(config, "config");
        return new FeedConnector() {
            @Override
            Connection open(String clientName) {
                // The reader sets the socket timeout of its reads itself (block time plus a margin, see
                // FeedReader); the blocking timeout below only matters to a command Jedis marks blocking.
                JedisClientConfig readerConfig = DefaultJedisClientConfig.builder().from(config)
                        .clientName(clientName)
                        .blockingSocketTimeoutMillis(blockMillis + Math.max(5_000, config.getSocketTimeoutMillis()))
                        .build();
                return new Connection(address, readerConfig);
            }

            @Override
            String describe() {
                return address.toString();
            }
        };
    }

    /**
     * Borrows from the client's pool, waiting at most {@code maxWaitMillis} whatever the pool's own
     * {@code maxWait} (often infinite in a user's pool): an exhausted pool must not hang {@code subscribe()},
     * nor {@code close()}, which waits for the feed lock {@code subscribe()} holds.
     */
    static FeedConnector pooled(JedisPooled client, long maxWaitMillis) {
        return new FeedConnector() {
            @Override
            Connection open(String clientName) {
                Pool<Connection> pool = client.getPool();
                Connection c;
                try {
                    c = pool.borrowObject(Duration.ofMillis(maxWaitMillis));
                } catch (JedisException e) {
                    throw e;
                } catch (Exception e) {
                    throw new JedisException("no connection of the JedisPooled pool became free within "
                            + maxWaitMillis + " ms for the feed reader", e);
                }
                if (pool instanceof ConnectionPool) {
                    c.setHandlingPool((ConnectionPool) pool); // so close() returns it (as getResource() does)
                }
                return named(c, clientName, this);
            }

            @Override
            String describe() {
                return "a connection borrowed from the JedisPooled pool";
            }
        };
    }

    static FeedConnector cluster(JedisCluster client, String streamKey) {
        int slot = JedisClusterCRC16.getSlot(streamKey);
        return new FeedConnector() {
            @Override
            Connection open(String clientName) {
                Connection c = client.getConnectionFromSlot(slot);
                return named(c, clientName, this);
            }

            @Override
            String describe() {
                return "the cluster node owning slot " + slot;
            }
        };
    }

    private static Connection named(Connection c, String clientName, FeedConnector owner) {
        try {
            new Jedis(c).clientSetname(clientName);
            return c;
        } catch (RuntimeException e) {
            owner.discard(c);
            throw e;
        }
    }
}

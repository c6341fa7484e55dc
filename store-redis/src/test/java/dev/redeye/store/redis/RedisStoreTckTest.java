package dev.redeye.store.redis;

import java.util.Set;

import org.junit.jupiter.api.AfterAll;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.StoreTck;
import redis.clients.jedis.JedisPooled;

/**
 * The full redeye TCK against a real redis-server, every capability declared and every optional hook
 * provided. Clients are opened through the URI provider (the {@code Stores.open} path), each with its own
 * pool and feed connection, under one random key prefix for this class.
 */
class RedisStoreTckTest extends StoreTck {
    private static final String PREFIX = RedisTestSupport.newPrefix();
    private static JedisPooled raw;

    private static synchronized JedisPooled raw() {
        if (raw == null) {
            raw = RedisTestSupport.raw();
        }
        return raw;
    }

    @AfterAll
    static synchronized void closeRaw() {
        if (raw != null) {
            RedisTestSupport.deleteAll(raw, PREFIX);
            raw.close();
            raw = null;
        }
    }

    @Override
    protected Store newClient() {
        String url = RedisTestSupport.url();
        return RedisStore.open(url + (url.contains("?") ? "&" : "?") + "prefix=" + PREFIX);
    }

    /** The key prefix of this class's clients. */
    static String prefix() {
        return PREFIX;
    }

    @Override
    protected void cleanup() {
        RedisTestSupport.deleteAll(raw(), PREFIX);
    }

    /** R1.7: a value of garbage fields exactly where the store keeps the state of {@code key}. */
    @Override
    protected void corrupt(Store client, String key) {
        raw().set(redis(client).stateKey(key), "many,perhaps,\u0000,bogus");
    }

    /** R6.8: CLIENT KILL the client's named feed connection. */
    @Override
    protected void interruptFeed(Store client) {
        String name = redis(client).feedClientName();
        if (!RedisTestSupport.killClient(raw(), name)) {
            throw new IllegalStateException("no Redis connection named " + name + " to kill");
        }
    }

    /** The RedisStore a client is, or wraps once connected (a lazily opened one). */
    static RedisStore redis(Store client) {
        return client instanceof RedisStore r ? r : client.capability(RedisStore.class).orElseThrow();
    }

    /** R6.12: the state value of {@code key} written back as {@code state}, bypassing the store. */
    @Override
    protected void rewind(Store client, String key, BreakerState state) {
        RedisTestSupport.rewind(raw(), redis(client).stateKey(key), state);
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, QuorumState.class,
                OperationListing.class, OutcomeBatches.class);
    }
}

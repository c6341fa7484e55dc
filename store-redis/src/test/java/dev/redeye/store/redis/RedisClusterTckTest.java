package dev.redeye.store.redis;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;

/**
 * The full TCK against a Redis <b>Cluster</b>, every client opened from a {@code redis://} URI naming one node
 * (so the provider must detect the cluster and open a {@link JedisCluster}): proves every script stays in one
 * hash slot (a cross-slot script fails with CROSSSLOT) and that the feed reader follows the stream's slot.
 * Part of the normal build: the cluster is {@link RedisTestCluster} (three private masters started for the
 * test JVM, or {@code REDEYE_REDIS_CLUSTER_URL}).
 */
class RedisClusterTckTest extends StoreTck {
    private static final String PREFIX = RedisTestSupport.newPrefix();
    /** The prefixes the clients of this class and its subclasses used, deleted after each class. */
    private static final Set<String> PREFIXES = ConcurrentHashMap.newKeySet();
    private static JedisCluster raw;

    private static synchronized JedisCluster raw() {
        if (raw == null) {
            raw = cluster();
        }
        return raw;
    }

    private static JedisCluster cluster() {
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestCluster.url());
        return new JedisCluster(Set.of(p.address()), p.config());
    }

    @AfterAll
    static synchronized void closeRaw() {
        if (raw != null) {
            for (ConnectionPool pool : raw.getClusterNodes().values()) {
                try (Jedis j = new Jedis(pool.getResource())) {
                    for (String prefix : PREFIXES) {
                        for (String k : j.keys(prefix + "*")) {
                            raw.del(k);
                        }
                    }
                }
            }
            PREFIXES.clear();
            raw.close();
            raw = null;
        }
    }

    /** Through the URI of one node: the provider detects the cluster (the R0 rules check the store works). */
    @Override
    protected Store newClient() {
        String url = RedisTestCluster.url();
        PREFIXES.add(prefix());
        return RedisStore.open(url + (url.contains("?") ? "&" : "?") + "prefix="
                + URLEncoder.encode(prefix(), StandardCharsets.UTF_8));
    }

    /** The key prefix of every client of this class. */
    protected String prefix() {
        return PREFIX;
    }

    @Override
    protected void corrupt(Store client, String key) {
        String k = ((RedisStore) client).stateKey(key);
        raw().set(k, "many,bogus,1");
    }

    /** CLIENT KILL the feed connection, wherever in the cluster it is. */
    @Override
    protected void interruptFeed(Store client) {
        String name = ((RedisStore) client).feedClientName();
        List<String> killed = new ArrayList<>();
        for (ConnectionPool pool : raw().getClusterNodes().values()) {
            try (Jedis j = new Jedis(pool.getResource())) {
                for (String line : j.clientList().split("\n")) {
                    if ((line.trim() + " ").contains(" name=" + name + " ")) {
                        for (String part : line.trim().split(" ")) {
                            if (part.startsWith("id=")) {
                                j.sendCommand(Protocol.Command.CLIENT, "KILL", "ID", part.substring(3));
                                killed.add(part);
                            }
                        }
                    }
                }
            }
        }
        if (killed.isEmpty()) {
            throw new IllegalStateException("no cluster connection named " + name + " to kill");
        }
    }

    /** R6.12: the state value of {@code key} written back as {@code state}, bypassing the store. */
    @Override
    protected void rewind(Store client, String key, BreakerState state) {
        RedisTestSupport.rewind(raw(), ((RedisStore) client).stateKey(key), state);
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, QuorumState.class,
                OperationListing.class, OutcomeBatches.class);
    }
}

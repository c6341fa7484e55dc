package dev.redeye.store.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import dev.redeye.tck.StoreTck;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;

/**
 * The full TCK against a Redis <b>Cluster</b> through {@link JedisCluster}: proves every script stays in one
 * hash slot (a cross-slot script fails with CROSSSLOT) and that the feed reader follows the stream's slot.
 *
 * <p>Not part of the default build (surefire runs {@code *Test} classes only), since it needs a cluster.
 * Run it with {@code REDEYE_REDIS_CLUSTER_URL=redis://127.0.0.1:7101} (any node) and
 * {@code mvn -B test -pl store-redis -Dtest=RedisClusterTckIT}; the module README shows how to start a
 * three-node cluster locally. Without the variable it fails saying so.
 */
class RedisClusterTckIT extends StoreTck {
    private static final String PREFIX = RedisTestSupport.newPrefix();
    private static JedisCluster raw;

    private static synchronized JedisCluster raw() {
        if (raw == null) {
            raw = cluster();
        }
        return raw;
    }

    private static JedisCluster cluster() {
        String url = System.getenv("REDEYE_REDIS_CLUSTER_URL");
        if (url == null || url.isBlank()) {
            throw new IllegalStateException("RedisClusterTckIT needs REDEYE_REDIS_CLUSTER_URL=redis://host:port of one"
                    + " node of a Redis Cluster (see store-redis/README.md for a local three-node cluster)");
        }
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(url.trim());
        return new JedisCluster(Set.of(p.address), p.config);
    }

    @AfterAll
    static synchronized void closeRaw() {
        if (raw != null) {
            for (ConnectionPool pool : raw.getClusterNodes().values()) {
                try (Jedis j = new Jedis(pool.getResource())) {
                    for (String k : j.keys(PREFIX + "*")) {
                        raw.del(k);
                    }
                }
            }
            raw.close();
            raw = null;
        }
    }

    @Override
    protected Store newClient() {
        return RedisStore.builder(cluster()).prefix(PREFIX).closeClient(true).build();
    }

    @Override
    protected void corrupt(Store client, String key) {
        String k = ((RedisStore) client).stateKey(key);
        raw().del(k);
        raw().hset(k, Map.of("failures", "many", "bogus", "1"));
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

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicRecording.class, TrialClaims.class, AtomicTransitions.class, TransitionFeed.class);
    }
}

package dev.redeye.store.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.UnifiedJedis;

/**
 * What a store checks on the server when it opens: whether a node is part of a Redis Cluster (so a
 * {@code redis://} URI naming one node opens a cluster client), and whether the server may evict breaker
 * keys under memory pressure (a one-time warning).
 *
 * <p><b>Which eviction policies are dangerous.</b> With {@code maxmemory} set, every policy but
 * {@code noeviction} can delete breaker keys: {@code allkeys-*} any key, {@code volatile-*} any key with a
 * TTL, and every redeye key has one (the state's clean-up TTL, the claims' expiry, the stream's TTL) except
 * the state of a forced breaker. An evicted state silently closes an open breaker and resets its failure
 * count; an evicted claim lets a second trial run. {@code noeviction} makes writes fail with OOM instead,
 * which the breaker handles under its store error policy. Without {@code maxmemory} (0) nothing is evicted.
 */
final class ServerChecks {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);

    private ServerChecks() {
    }

    /** The {@code key:value} lines of an INFO reply. */
    static Map<String, String> parseInfo(String info) {
        Map<String, String> out = new LinkedHashMap<>();
        if (info == null) {
            return out;
        }
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                out.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
            }
        }
        return out;
    }

    /** Whether an {@code INFO cluster} reply says {@code cluster_enabled:1}. */
    static boolean clusterEnabled(String infoCluster) {
        return "1".equals(parseInfo(infoCluster).get("cluster_enabled"));
    }

    /**
     * Whether an {@code INFO memory} reply describes a server that can evict breaker keys: {@code maxmemory}
     * above 0 and a policy other than {@code noeviction}. Returns the policy when it can, else null.
     */
    static String evictingPolicy(String infoMemory) {
        Map<String, String> m = parseInfo(infoMemory);
        String policy = m.get("maxmemory_policy");
        long max;
        try {
            max = Long.parseLong(m.getOrDefault("maxmemory", "0"));
        } catch (NumberFormatException e) {
            max = 0;
        }
        if (policy == null || max <= 0 || policy.equals("noeviction")) {
            return null;
        }
        return policy;
    }

    /**
     * Logs one warning when the server (every node of a cluster) can evict breaker keys. Best effort: a
     * failure to ask (no permission for INFO, server down) is logged at debug level and never thrown.
     *
     * @return the warning text, or null when there was nothing to warn about (for tests)
     */
    static String warnIfEvicting(UnifiedJedis client, String where) {
        List<String> found = new ArrayList<>();
        try {
            if (client instanceof JedisCluster) {
                for (Map.Entry<String, ConnectionPool> node : ((JedisCluster) client).getClusterNodes().entrySet()) {
                    try (Jedis j = new Jedis(node.getValue().getResource())) {
                        String p = evictingPolicy(j.info("memory"));
                        if (p != null) {
                            found.add(node.getKey() + " maxmemory-policy " + p);
                        }
                    }
                }
            } else {
                String p = evictingPolicy(client.info("memory"));
                if (p != null) {
                    found.add("maxmemory-policy " + p);
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("redeye could not check the eviction policy of {}: {}", where, e.toString());
            return null;
        }
        if (found.isEmpty()) {
            return null;
        }
        String text = "redeye: Redis at " + where + " can evict breaker keys under memory pressure (" + found
                + " with maxmemory set): an evicted state silently closes an open breaker and forgets its failures,"
                + " an evicted claim lets a second trial run. Use maxmemory-policy noeviction for the breaker's"
                + " database, or a Redis of its own.";
        LOG.warn(text);
        return text;
    }
}

package dev.redeye.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import redis.clients.jedis.Jedis;

/**
 * The Redis Cluster of the cluster tests: {@code REDEYE_REDIS_CLUSTER_URL} (one node of a cluster you run)
 * if set, else three private masters (no replicas) of redis-server on free ports, started once per test JVM
 * (about a second) and stopped with it by pid ({@link RedisProcess}: no orphans, also if the JVM is killed).
 */
final class RedisTestCluster {
    private static String url;
    private static final List<RedisProcess> NODES = new ArrayList<>();

    private RedisTestCluster() {
    }

    /** {@code redis://127.0.0.1:<port>} of one node. */
    static synchronized String url() {
        if (url != null) {
            return url;
        }
        String env = System.getenv("REDEYE_REDIS_CLUSTER_URL");
        if (env != null && !env.isBlank()) {
            url = env.trim();
            return url;
        }
        try {
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (int i = 0; i < 3; i++) {
                RedisProcess n = RedisProcess.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "5000", "--appendonly", "no");
                NODES.add(n);
                create.add("127.0.0.1:" + n.port());
            }
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed: " + out);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (RedisProcess n : NODES) {
                while (!clusterOk(n.port())) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the private cluster did not reach cluster_state:ok");
                    }
                    RedisProcess.sleep(50);
                }
            }
        } catch (IOException e) {
            NODES.forEach(RedisProcess::close);
            throw new UncheckedIOException("cannot start a private Redis Cluster (redis-server and redis-cli needed)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            NODES.forEach(RedisProcess::close);
            NODES.clear();
            throw e;
        }
        url = NODES.get(0).url();
        return url;
    }

    private static boolean clusterOk(int port) {
        try (Jedis j = new Jedis("127.0.0.1", port)) {
            String info = j.clusterInfo();
            return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
                    && info.contains("cluster_known_nodes:3");
        } catch (RuntimeException e) {
            return false;
        }
    }
}

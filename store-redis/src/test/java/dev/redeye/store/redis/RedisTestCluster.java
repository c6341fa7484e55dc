package dev.redeye.store.redis;

import dev.redeye.testsupport.RedisProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import redis.clients.jedis.Jedis;

/**
 * The Redis Cluster of the cluster tests: {@code REDEYE_REDIS_CLUSTER_URL} (one node of a cluster you run)
 * if set, else three private masters (no replicas) of redis-server on free ports, started once per test JVM
 * (about a second) and stopped with it by pid ({@link RedisProcess}: no orphans, also if the JVM is killed).
 * {@link #create} makes other private clusters (over TLS, say) for the tests that need them.
 */
final class RedisTestCluster {
    private static String url;
    private static final List<RedisProcess> NODES = new ArrayList<>();
    static final List<String> NODE_ARGS = List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "5000", "--appendonly", "no");

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
            for (int i = 0; i < 3; i++) {
                NODES.add(RedisProcess.start(NODE_ARGS.toArray(new String[0])));
            }
            create(NODES, List.of(), port -> new Jedis("127.0.0.1", port));
        } catch (RuntimeException e) {
            NODES.forEach(RedisProcess::close);
            NODES.clear();
            throw e;
        }
        url = NODES.get(0).url();
        return url;
    }

    /**
     * Joins fresh cluster-enabled nodes into one cluster of masters with {@code redis-cli --cluster create}
     * ({@code cliOptions} first, {@code --tls --cacert ...} for a TLS cluster) and waits until every node, asked
     * through a connection from {@code connect}, reports the cluster ok with every slot and node.
     */
    static void create(List<RedisProcess> nodes, List<String> cliOptions, Function<Integer, Jedis> connect) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli"));
        cmd.addAll(cliOptions);
        cmd.addAll(List.of("--cluster", "create"));
        for (RedisProcess n : nodes) {
            cmd.add("127.0.0.1:" + n.port());
        }
        cmd.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a private Redis Cluster (redis-server and redis-cli needed)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (RedisProcess n : nodes) {
            while (!clusterOk(connect, n.port(), nodes.size())) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the private cluster did not reach cluster_state:ok");
                }
                RedisProcess.sleep(50);
            }
        }
    }

    private static boolean clusterOk(Function<Integer, Jedis> connect, int port, int nodes) {
        try (Jedis j = connect.apply(port)) {
            String info = j.clusterInfo();
            return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
                    && info.contains("cluster_known_nodes:" + nodes);
        } catch (RuntimeException e) {
            return false;
        }
    }
}

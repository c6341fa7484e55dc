package dev.redeye.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.redeye.CircuitBreaker;
import dev.redeye.store.redis.RedisStore;
import redis.clients.jedis.Jedis;

/**
 * What {@code waitReplicas} costs (issue 22, item 11): a private primary and one replica of redis-server,
 * started by this bench on free ports of 127.0.0.1 and stopped by it; the same breaker calls timed on a store
 * without and with {@code ?waitReplicas=1}: a failure below the threshold (never waits), the failure that opens
 * the breaker (one WAIT after it) and a forced open (one WAIT). Client-side latency of the breaker call, p50
 * and p99 in µs; the primary and the replica share this machine, so the WAIT measures one replication hop on
 * loopback, the least it can cost.
 *
 * <p>Run it (part of {@link DistributedBench}; {@code redis-server} must be on the PATH):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections wait --stores redis
 * </pre>
 */
final class RedisWaitBench {
    private RedisWaitBench() {
    }

    static String run(BenchEnv env) {
        if (!env.stores().contains("redis")) {
            return "Skipped: the run does not include redis (--stores).\n";
        }
        int samples = env.quick() ? 100 : 2_000;
        int warmup = env.quick() ? 20 : 300;
        List<Process> started = new ArrayList<>();
        Path dir;
        try {
            dir = Files.createTempDirectory("redeye-bench-wait-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            Server p = startOnFreePort(dir, "--repl-diskless-sync-delay", "0");
            started.add(p.process());
            int primary = p.port();
            Server r = startOnFreePort(dir, "--replicaof", "127.0.0.1", Integer.toString(primary));
            started.add(r.process());
            awaitReplica(primary, r.port());
            Table t = new Table("path", "without WAIT p50 (µs)", "p99 (µs)", "waitReplicas=1 p50 (µs)", "p99 (µs)",
                    "p50 added (µs)");
            String base = "redis://127.0.0.1:" + primary + "?prefix=bench-wait:";
            try (RedisStore plain = RedisStore.open(base);
                    RedisStore waiting = RedisStore.open(base + "&waitReplicas=1&waitTimeout=1000")) {
                Latencies[][] both = measure(plain, waiting, samples, warmup);
                Latencies[] without = both[0];
                Latencies[] with = both[1];
                String[] paths = {"recordFailure, sub-threshold", "recordFailure that opens", "force open"};
                for (int i = 0; i < paths.length; i++) {
                    long a = without[i].percentile(50);
                    long b = with[i].percentile(50);
                    t.row(paths[i], Table.micros(a), Table.micros(without[i].percentile(99)), Table.micros(b),
                            Table.micros(with[i].percentile(99)), Table.micros(b - a));
                }
            }
            return "A private primary and one replica on this machine (loopback); one thread; " + samples
                    + " samples per path after " + warmup + " untimed; client-side latency of the breaker call.\n\n"
                    + t + "\n";
        } finally {
            for (Process p : started) {
                p.destroy();
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Per store ([0] without, [1] with WAIT) and path (sub-threshold failure, the opening failure, force open),
     * the two stores' samples taken in turn in one loop, so both see the same machine.
     */
    private static Latencies[][] measure(RedisStore plain, RedisStore waiting, int samples, int warmup) {
        Latencies[][] l = new Latencies[2][3];
        RedisStore[] stores = {plain, waiting};
        CircuitBreaker[] never = new CircuitBreaker[2];
        CircuitBreaker[] two = new CircuitBreaker[2];
        for (int s = 0; s < 2; s++) {
            for (int p = 0; p < 3; p++) {
                l[s][p] = new Latencies(samples);
            }
            never[s] = CircuitBreaker.builder().store(stores[s]).failureThreshold(Integer.MAX_VALUE).build();
            two[s] = CircuitBreaker.builder().store(stores[s]).failureThreshold(2).build();
        }
        try {
            for (int i = 0; i < warmup + samples; i++) {
                for (int k = 0; k < 2; k++) {
                    int s = (i + k) % 2; // alternate which store goes first
                    String op = s == 0 ? "plain" : "waiting";
                    long t0 = System.nanoTime();
                    never[s].recordFailure(op + "-sub");
                    long d0 = System.nanoTime() - t0;
                    two[s].recordFailure(op + "-open");
                    t0 = System.nanoTime();
                    two[s].recordFailure(op + "-open");
                    long d1 = System.nanoTime() - t0;
                    two[s].reset(op + "-open");
                    t0 = System.nanoTime();
                    two[s].forceOpen(op + "-forced");
                    long d2 = System.nanoTime() - t0;
                    two[s].reset(op + "-forced");
                    if (i >= warmup) {
                        l[s][0].add(d0);
                        l[s][1].add(d1);
                        l[s][2].add(d2);
                    }
                }
            }
        } finally {
            for (int s = 0; s < 2; s++) {
                never[s].close();
                two[s].close();
            }
        }
        return l;
    }

    /** A redis-server this bench started, and its port. */
    private record Server(Process process, int port) {
    }

    /**
     * Starts a redis-server on a free port; a port another process took between the probe and the start (the
     * build runs other modules' servers alongside) is detected and another one tried, three times at most.
     */
    private static Server startOnFreePort(Path dir, String... extra) {
        for (int attempt = 1; ; attempt++) {
            int port = freePort();
            Process p = start(dir, port, extra);
            if (p != null) {
                return new Server(p, port);
            }
            if (attempt == 3) {
                throw new IllegalStateException("another process took the free port given to redis-server 3 times");
            }
        }
    }

    /** The started server, or null if what answers on {@code port} is another process (the port was taken). */
    private static Process start(Path dir, int port, String... extra) {
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--dbfilename",
                "dump-" + port + ".rdb"));
        cmd.addAll(List.of(extra));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(new File(dir.toFile(), "redis-" + port + ".log")).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                try (Jedis j = new Jedis("127.0.0.1", port)) {
                    j.ping();
                    if (!j.info("server").contains("process_id:" + p.pid() + "\r")) {
                        p.destroyForcibly();
                        return null;
                    }
                    return p;
                } catch (RuntimeException e) {
                    if (System.nanoTime() > deadline || !p.isAlive()) {
                        p.destroyForcibly();
                        throw new IllegalStateException("redis-server on port " + port + " did not start", e);
                    }
                    Thread.sleep(20);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server (is it on the PATH?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void awaitReplica(int primary, int replica) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        try (Jedis p = new Jedis("127.0.0.1", primary); Jedis r = new Jedis("127.0.0.1", replica)) {
            while (!(r.info("replication").contains("master_link_status:up")
                    && p.info("replication").contains("connected_slaves:1"))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the replica did not sync: " + r.info("replication"));
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

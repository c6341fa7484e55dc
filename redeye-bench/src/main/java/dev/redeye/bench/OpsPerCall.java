package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.api.CircuitOpenException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import redis.clients.jedis.Jedis;

/**
 * Store operations per call, counted by {@link CountingStore} for every backend and {@link CacheConfig}: a
 * healthy phase (2 threads calling a closed breaker as fast as they can for a fixed time) and a rejection
 * phase (the same, once the breaker is open). For Redis with the defaults, the same phases are cross-checked
 * against the server's own {@code INFO commandstats}.
 *
 * <p>Run it (part of {@link DistributedBench}; Redis and PostgreSQL must be running):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections ops
 * </pre>
 */
final class OpsPerCall {
    private static final int THREADS = 2;

    private OpsPerCall() {
    }

    static String run(BenchEnv env) {
        StringBuilder out = new StringBuilder();
        Table t = new Table("store", "configuration", "healthy calls", "reads / call", "writes / call",
                "ops / 100 ms window", "rejected calls", "ops / rejected call", "ops while open (total)");
        StringBuilder detail = new StringBuilder();
        String commandstats = null;
        for (String storeName : env.stores()) {
            try (StoreFixture fixture = env.fixture(storeName, true)) {
                for (CacheConfig config : CacheConfig.values()) {
                    boolean crossCheck = fixture.name().equals("redis") && config == CacheConfig.DEFAULTS;
                    Result r = measure(env, fixture, config, crossCheck);
                    double windows = r.healthyMillis / (double) CacheConfig.STALE_TOLERANCE.toMillis();
                    t.row(fixture.name(), config.label(), r.healthyCalls,
                            Table.fmt(r.healthy.reads() / (double) r.healthyCalls, 3),
                            Table.fmt(r.healthy.writes() / (double) r.healthyCalls, 3),
                            config == CacheConfig.LOCAL_CACHE ? Table.fmt(r.healthy.total() / windows, 2) : "-",
                            r.rejectedCalls,
                            Table.fmt(r.rejected.total() / (double) r.rejectedCalls, 4),
                            r.rejected.total());
                    detail.append("- ").append(fixture.name()).append(", ").append(config.label())
                            .append(": healthy ").append(r.healthy).append("; while open ").append(r.rejected)
                            .append('\n');
                    if (crossCheck) {
                        commandstats = crossCheckTable(r);
                    }
                }
            }
        }
        out.append("Each phase: ").append(THREADS).append(" threads, ").append(env.phaseMillis())
                .append(" ms of real time, one operation name, consecutive strategy, resetTimeout 1 h.\n\n");
        out.append(t).append('\n');
        out.append("Counts by store method:\n\n").append(detail).append('\n');
        out.append(localCacheUnderLoad(env));
        if (commandstats != null) {
            out.append("Cross-check against Redis `INFO commandstats` (defaults; `CONFIG RESETSTAT` before each"
                    + " phase; the counting decorator's figures for the same phases):\n\n").append(commandstats);
        }
        return out.toString();
    }

    /**
     * Store reads of a local-cache breaker under 1, 2 and 8 threads calling as fast as they can: the target is
     * at most one store operation per stale-tolerance window, however many threads call: at most 1.1 at 8
     * threads, with one MET / MISSED line per store computed from the row's own figure.
     */
    static String localCacheUnderLoad(BenchEnv env) {
        Table t = new Table("store", "threads", "healthy calls", "store ops", "100 ms windows", "store ops / window");
        StringBuilder targets = new StringBuilder();
        for (String storeName : env.stores()) {
            try (StoreFixture fixture = env.fixture(storeName, true)) {
                for (int threads : new int[] {1, 2, 8}) {
                    CountingStore store = new CountingStore(fixture.open());
                    String op = "local-cache-" + threads;
                    try (CircuitBreaker breaker = CacheConfig.LOCAL_CACHE.apply(CircuitBreaker.builder().store(store))
                            .build()) {
                        breaker.execute(op, Load.HEALTHY);
                        CountingStore.Counts before = store.snapshot();
                        long start = System.nanoTime();
                        long calls = Load.forMillis(threads, env.phaseMillis(), () -> breaker.execute(op, Load.HEALTHY));
                        double windows = (System.nanoTime() - start) / 1e6 / CacheConfig.STALE_TOLERANCE.toMillis();
                        long ops = store.snapshot().minus(before).total();
                        t.row(fixture.name(), threads, calls, ops, Table.fmt(windows, 1), Table.fmt(ops / windows, 2));
                        if (threads == TARGET_THREADS) {
                            targetLine(targets, fixture.name(), ops / windows);
                        }
                    }
                }
            }
        }
        return "Local cache under load (`localCache(100 ms)`, " + env.phaseMillis() + " ms per row):\n\n" + t + "\n"
                + "Targets (local cache under load):\n\n" + targets + "\n";
    }

    /** The thread count the local-cache target is stated for. */
    static final int TARGET_THREADS = 8;
    /** The most store operations per stale-tolerance window the local-cache target allows at 8 threads. */
    static final double TARGET_OPS_PER_WINDOW = 1.1;

    /** One MET / MISSED line of the local-cache target for a store, from this run's figure. */
    static void targetLine(StringBuilder out, String store, double opsPerWindow) {
        out.append("- ").append(opsPerWindow <= TARGET_OPS_PER_WINDOW ? "MET" : "MISSED").append(": ").append(store)
                .append(", localCache(100 ms), ").append(TARGET_THREADS).append(" threads, at most ")
                .append(Table.fmt(TARGET_OPS_PER_WINDOW, 1)).append(" store ops per 100 ms window — measured ")
                .append(Table.fmt(opsPerWindow, 2)).append('\n');
    }

    /** The figures of one backend and configuration. */
    static final class Result {
        long healthyCalls;
        long healthyMillis;
        CountingStore.Counts healthy;
        long rejectedCalls;
        CountingStore.Counts rejected;
        Map<String, Long> redisHealthy;
        Map<String, Long> redisRejected;
    }

    static Result measure(BenchEnv env, StoreFixture fixture, CacheConfig config, boolean crossCheck) {
        CountingStore store = new CountingStore(fixture.open());
        String op = "ops-" + config.name().toLowerCase(java.util.Locale.ROOT);
        Result r = new Result();
        try (CircuitBreaker breaker = config.apply(CircuitBreaker.builder().store(store)
                .resetTimeout(Duration.ofHours(1))).build();
                Jedis jedis = crossCheck ? new Jedis(URI.create(env.redisUrl())) : null) {
            for (int i = 0; i < 200; i++) {
                breaker.execute(op, Load.HEALTHY);
            }
            if (jedis != null) {
                jedis.configResetStat();
            }
            CountingStore.Counts before = store.snapshot();
            long start = System.nanoTime();
            r.healthyCalls = Load.forMillis(THREADS, env.phaseMillis(), () -> breaker.execute(op, Load.HEALTHY));
            r.healthyMillis = (System.nanoTime() - start) / 1_000_000L;
            r.healthy = store.snapshot().minus(before);
            if (jedis != null) {
                r.redisHealthy = commandStats(jedis);
            }
            for (int i = 0; i < breaker.config().failureThreshold(); i++) {
                try {
                    breaker.execute(op, Load.FAILING);
                } catch (Load.DependencyDown expected) {
                    // the dependency's own failure, rethrown unchanged
                }
            }
            if (breaker.check(op)) {
                throw new IllegalStateException("breaker did not open after " + breaker.config().failureThreshold()
                        + " failures");
            }
            if (jedis != null) {
                jedis.configResetStat();
            }
            before = store.snapshot();
            r.rejectedCalls = Load.forMillis(THREADS, env.phaseMillis(), () -> {
                try {
                    breaker.execute(op, Load.HEALTHY);
                    throw new IllegalStateException("an open breaker let a call through");
                } catch (CircuitOpenException expected) {
                    // the rejection being measured
                }
            });
            r.rejected = store.snapshot().minus(before);
            if (jedis != null) {
                r.redisRejected = commandStats(jedis);
            }
        }
        return r;
    }

    /** {@code INFO commandstats} as command name to call count. */
    static Map<String, Long> commandStats(Jedis jedis) {
        Map<String, Long> out = new TreeMap<>();
        for (String line : jedis.info("commandstats").split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                if (field.startsWith("calls=")) {
                    out.put(name, Long.parseLong(field.substring("calls=".length())));
                }
            }
        }
        return out;
    }

    private static String crossCheckTable(Result r) {
        Table t = new Table("phase", "breaker calls", "decorator: store ops", "Redis: commands (by name)",
                "Redis commands / call");
        t.row("healthy", r.healthyCalls, r.healthy.total() + " " + r.healthy, r.redisHealthy,
                Table.fmt(storeCommands(r.redisHealthy) / (double) r.healthyCalls, 3));
        t.row("open", r.rejectedCalls, r.rejected.total() + " " + r.rejected, r.redisRejected,
                Table.fmt(storeCommands(r.redisRejected) / (double) r.rejectedCalls, 4));
        return t + "\n(`config` and `info` are the measurement's own commands and are left out of the per-call"
                + " figure.)\n";
    }

    private static long storeCommands(Map<String, Long> stats) {
        long n = 0;
        for (Map.Entry<String, Long> e : stats.entrySet()) {
            String k = e.getKey();
            if (!k.startsWith("config") && !k.startsWith("info")) {
                n += e.getValue();
            }
        }
        return n;
    }
}

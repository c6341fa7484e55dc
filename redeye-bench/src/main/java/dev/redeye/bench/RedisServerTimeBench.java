package dev.redeye.bench;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.Strategy;
import dev.redeye.spi.Store;
import dev.redeye.store.redis.RedisStore;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.resps.Slowlog;

/**
 * The Redis server's own time per call of the record path (issue 22, item 10): how long Redis spends in the
 * store's state function, as {@code SLOWLOG} reports it with a threshold of 0 (every command logged with its
 * execution time in µs, the network and the client excluded). What one Redis core spends per recorded outcome
 * caps one hot key's rate (Redis runs one command at a time), so this is the figure to keep small. Paths, each
 * through a {@link CircuitBreaker} on a store opened from the URI, one breaker call per sample:
 *
 * <ul>
 * <li>the reference: one {@code EVALSHA} of {@code return 1} (no keys), the cheapest script there is;</li>
 * <li>where the server has Functions, the floor of the stored layout: a function running only the two
 * commands of a sub-threshold record (GET of the state value, SET of a new value with PX);</li>
 * <li>a sub-threshold failure, consecutive strategy ({@code failureThreshold} {@link Integer#MAX_VALUE});</li>
 * <li>a failure under the error-rate strategy that does not open (a threshold no rate reaches);</li>
 * <li>the failure that opens the breaker ({@code failureThreshold} 2: one untimed failure before, an untimed
 * reset after), its event appended in the same call on a standalone server.</li>
 * </ul>
 * Each sample resets the slow log, makes the call and reads the log back, keeping the entry of that call
 * (found by the key it names, so other clients of the server do not count). Targets: the sub-threshold record
 * at most 8 µs p50, the opening at most 20 µs.
 *
 * <p><b>It changes the server's slow-log settings</b> ({@code slowlog-log-slower-than 0} and a longer
 * {@code slowlog-max-len}) for the run and restores them after, and resets the slow log; run it against a Redis
 * whose slow log nobody else is reading. The figures move with the machine's load (every Redis command slows
 * when the cores are shared): the load average before and after is printed with them.
 *
 * <p>Run it (part of {@link DistributedBench}; Redis must be running, {@code REDEYE_REDIS_URL}):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections servertime --stores redis
 * </pre>
 */
final class RedisServerTimeBench {
    /** The targets, p50 in µs, by path. */
    static final Map<String, Integer> TARGETS = Map.of("recordFailure, sub-threshold", 8,
            "recordFailure, sub-threshold, in a run of consecutive calls", 8, "recordFailure that opens", 20);

    /**
     * How many consecutive calls a run-of-calls sample reads back at once: with the other commands a breaker
     * call sends (up to three slow-log entries per call), within the slow log's length for the run.
     */
    private static final int RUN = 250;
    private static final int SLOWLOG_LENGTH = 4 * RUN + 24;

    private RedisServerTimeBench() {
    }

    static String run(BenchEnv env) {
        if (!env.stores().contains("redis")) {
            return "Skipped: the run does not include redis (--stores).\n";
        }
        int samples = env.quick() ? 200 : 3_000;
        int warmup = env.quick() ? 50 : 500;
        String loadBefore = loadAverage();
        Table t = new Table("path", "p50 (µs)", "p90 (µs)", "p99 (µs)", "samples", "target (p50)");
        List<String> verdicts = new ArrayList<>();
        String function;
        try (Jedis admin = new Jedis(URI.create(env.redisUrl()));
                StoreFixture fixture = StoreFixture.redis(env.redisUrl())) {
            String oldThreshold = admin.configGet("slowlog-log-slower-than").get("slowlog-log-slower-than");
            String oldLength = admin.configGet("slowlog-max-len").get("slowlog-max-len");
            admin.configSet("slowlog-log-slower-than", "0");
            admin.configSet("slowlog-max-len", String.valueOf(SLOWLOG_LENGTH));
            try {
                RedisStore store = (RedisStore) fixture.open();
                String sha = admin.scriptLoad("return 1");
                row(t, verdicts, "EVALSHA `return 1` (the reference)", measure(admin, samples, warmup,
                        i -> admin.evalsha(sha), log -> log.getArgs().size() >= 2 && log.getArgs().get(1).equals(sha)));
                floor(admin, store, t, verdicts, samples, warmup);
                try (CircuitBreaker never = CircuitBreaker.builder().store(store).failureThreshold(Integer.MAX_VALUE)
                        .build();
                        CircuitBreaker rate = CircuitBreaker.builder().store(store).strategy(Strategy.ERROR_RATE)
                                .errorRateThreshold(1.0).minimumCalls(Integer.MAX_VALUE).build();
                        CircuitBreaker two = CircuitBreaker.builder().store(store).failureThreshold(2).build()) {
                    String sub = "servertime-sub";
                    String rated = "servertime-rate";
                    String open = "servertime-open";
                    for (String op : List.of(sub, rated, open)) {
                        never.reset(op);
                    }
                    row(t, verdicts, "recordFailure, sub-threshold", measure(admin, samples, warmup,
                            i -> never.recordFailure(sub), names(store, sub)));
                    row(t, verdicts, "recordFailure, sub-threshold, in a run of consecutive calls",
                            measureRun(admin, samples, warmup, i -> never.recordFailure(sub), names(store, sub)));
                    row(t, verdicts, "recordFailure, error rate, not opening", measure(admin, samples, warmup,
                            i -> rate.recordFailure(rated), names(store, rated)));
                    row(t, verdicts, "recordFailure, error rate, in a run of consecutive calls", measureRun(admin,
                            samples, warmup, i -> rate.recordFailure(rated), names(store, rated)));
                    row(t, verdicts, "recordFailure that opens", measureOpening(admin, samples, warmup, two, open,
                            names(store, open)));
                    function = calledAs(admin, () -> never.recordFailure(sub), names(store, sub));
                }
            } finally {
                admin.configSet("slowlog-log-slower-than", oldThreshold);
                admin.configSet("slowlog-max-len", oldLength);
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("Redis's own execution time per call (SLOWLOG, threshold 0), one breaker call per sample after ")
                .append(warmup).append(" untimed (\"in a run of consecutive calls\": ").append(RUN)
                .append(" calls back to back, then the slow log read); the store's calls are ").append(function)
                .append(". Load average (1, 5, 15 min) before: ").append(loadBefore).append("; after: ")
                .append(loadAverage()).append(".\n\n");
        out.append(t).append('\n');
        for (String v : verdicts) {
            out.append(v).append('\n');
        }
        return out.toString();
    }

    /** The floor's library: the two commands of a sub-threshold record and nothing else. */
    private static final String FLOOR = "#!lua name=redeye_bench_floor\n"
            + "redis.register_function('redeye_bench_floor', function(keys, args)\n"
            + "  local v = redis.call('GET', keys[1])\n"
            + "  redis.call('SET', keys[1], args[1], 'PX', args[2])\n"
            + "  return 1\n"
            + "end)\n";

    /**
     * Where the server has Functions: the same two commands a sub-threshold record runs (GET of the state
     * value, SET of the next one with PX) in a function that does nothing else, on a state value of the
     * store's layout: what the layout costs before any rule runs. Loaded for the run and deleted after.
     */
    private static void floor(Jedis admin, RedisStore store, Table t, List<String> verdicts, int samples, int warmup) {
        try {
            admin.functionLoadReplace(FLOOR);
        } catch (RuntimeException e) {
            return; // no Functions here
        }
        try {
            String key = store.stateKey("servertime-floor");
            // failures, lastFailureAt, open, openedAt, openCount, errorRate, samples, trialSuccesses, forced, version
            admin.set(key, "0,0,0,0,0,0,0,0,0,1764500000000000");
            row(t, verdicts, "FCALL of GET + SET PX alone (what the layout costs)",
                    measure(admin, samples, warmup, i -> admin.fcall("redeye_bench_floor", List.of(key),
                            List.of(i + "," + System.currentTimeMillis() + ",0,0,0,0,0,0,0,1764500000000000",
                                    "86400000")),
                            log -> log.getArgs().size() > 3 && log.getArgs().get(3).equals(key)));
            admin.del(key);
        } finally {
            admin.functionDelete("redeye_bench_floor");
        }
    }

    /** Matches the slow-log entry of a call of the store's library on {@code op}'s state key. */
    private static java.util.function.Predicate<Slowlog> names(RedisStore store, String op) {
        String key = store.stateKey(op);
        return log -> log.getArgs().size() > 3 && log.getArgs().get(3).equals(key);
    }

    /** {@code samples} server times in µs of {@code call}, each found in the slow log by {@code mine}. */
    private static Latencies measure(Jedis admin, int samples, int warmup, Consumer<Integer> call,
            java.util.function.Predicate<Slowlog> mine) {
        Latencies l = new Latencies(samples);
        for (int i = 0; i < warmup + samples; i++) {
            admin.slowlogReset();
            call.accept(i);
            long micros = serverMicros(admin, mine);
            if (i >= warmup) {
                l.add(micros * 1_000); // Latencies holds nanoseconds
            }
        }
        return l;
    }

    /**
     * {@code samples} server times in µs of {@code call} made back to back, as during a bench run: the slow log
     * is reset, {@link #RUN} calls are made, and every entry {@code mine} matches is read back at once. Warmer
     * than {@link #measure}, whose every sample follows the bench's own slow-log commands.
     */
    private static Latencies measureRun(Jedis admin, int samples, int warmup, Consumer<Integer> call,
            java.util.function.Predicate<Slowlog> mine) {
        int i = 0;
        for (; i < warmup; i++) {
            call.accept(i);
        }
        Latencies l = new Latencies(samples);
        while (l.size() < samples) {
            admin.slowlogReset();
            int batch = Math.min(RUN, samples - l.size());
            for (int j = 0; j < batch; j++) {
                call.accept(i++);
            }
            int found = 0;
            for (Slowlog log : admin.slowlogGet(SLOWLOG_LENGTH)) {
                if (mine.test(log) && found < batch) {
                    l.add(log.getExecutionTime() * 1_000);
                    found++;
                }
            }
            if (found < batch) {
                throw new IllegalStateException("found " + found + " of " + batch + " calls in the slow log (is "
                        + "slowlog-max-len at least " + SLOWLOG_LENGTH + "?)");
            }
        }
        return l;
    }

    private static Latencies measureOpening(Jedis admin, int samples, int warmup, CircuitBreaker two, String op,
            java.util.function.Predicate<Slowlog> mine) {
        Latencies l = new Latencies(samples);
        for (int i = 0; i < warmup + samples; i++) {
            two.recordFailure(op); // below the threshold, untimed
            admin.slowlogReset();
            two.recordFailure(op);
            long micros = serverMicros(admin, mine);
            if (!two.state(op).open()) {
                throw new IllegalStateException("the opening sample did not open '" + op + "'");
            }
            two.reset(op);
            if (i >= warmup) {
                l.add(micros * 1_000);
            }
        }
        return l;
    }

    /** How the store's call appears in the slow log: its command and, for FCALL, the function it calls. */
    private static String calledAs(Jedis admin, Runnable call, java.util.function.Predicate<Slowlog> mine) {
        admin.slowlogReset();
        call.run();
        for (Slowlog log : admin.slowlogGet(64)) {
            if (mine.test(log)) {
                List<String> args = log.getArgs();
                return args.get(0).equalsIgnoreCase("FCALL") ? "FCALL of " + args.get(1) : args.get(0);
            }
        }
        return "(not found in the slow log)";
    }

    private static long serverMicros(Jedis admin, java.util.function.Predicate<Slowlog> mine) {
        for (Slowlog log : admin.slowlogGet(64)) {
            if (mine.test(log)) {
                return log.getExecutionTime();
            }
        }
        throw new IllegalStateException("the call is not in the slow log (is slowlog-log-slower-than 0 allowed?)");
    }

    private static void row(Table t, List<String> verdicts, String path, Latencies l) {
        long p50 = l.percentile(50);
        Integer target = TARGETS.get(path);
        t.row(path, Table.micros(p50), Table.micros(l.percentile(90)), Table.micros(l.percentile(99)), l.size(),
                target == null ? "-" : "<= " + target);
        if (target != null) {
            verdicts.add("- " + path + ": p50 " + Table.micros(p50) + " µs, target <= " + target + " µs: **"
                    + (p50 <= target * 1_000L ? "MET" : "MISSED") + "**");
        }
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + ", " + f[1] + ", " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}

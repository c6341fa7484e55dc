package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The record path (issue 13, target 1): what counting a failure costs next to the smallest write of the
 * store's own kind ({@link StoreFixture#recordBaseline}), paired in one loop so both sides see the same
 * machine and server state. Per backend, each iteration times, in an order that rotates between iterations:
 *
 * <ul>
 * <li>the baseline (Redis: one {@code EVALSHA} of {@code return 1}; PostgreSQL: plain JDBC
 * {@code SELECT ... FOR UPDATE; UPDATE; COMMIT}; DynamoDB: one conditional {@code UpdateItem}; Hazelcast: one
 * {@code executeOnKey} of a trivial processor; the in-process store has none);</li>
 * <li>{@code recordFailure} below the threshold ({@code failureThreshold} {@link Integer#MAX_VALUE});</li>
 * <li>a failing {@code execute} below the threshold with {@code localCache()} (the gate reads nothing, as
 * the record path alone is timed) and with the defaults (the gate's one read, then the record);</li>
 * <li>the failure that opens the breaker, as {@code recordFailure} and as a failing {@code execute} with
 * {@code localCache()}: {@code failureThreshold} 2, one untimed failure before and an untimed
 * {@code reset} after each sample, on one operation name.</li>
 * </ul>
 * The p50 of each path is divided by the baseline's p50; the targets are Redis at most 1.2x and
 * PostgreSQL at most 1.3x, checked for every path but the defaults' execute (whose gate read is one more
 * round trip by design). DynamoDB and Hazelcast have ratios but no target yet. One thread; every breaker
 * shares one store client, as the breakers of one process do.
 *
 * <p>Run it (part of {@link DistributedBench}; the services must be running):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections record
 * </pre>
 */
final class RecordPathBench {
    /** The p50 ratio targets, by backend. */
    static final Map<String, Double> TARGETS = Map.of("redis", 1.2, "postgres", 1.3);

    private static final int BASELINE = 0;
    private static final int RECORD = 1;
    private static final int EXECUTE_CACHED = 2;
    private static final int EXECUTE_DEFAULTS = 3;
    private static final int OPEN_RECORD = 4;
    private static final int OPEN_EXECUTE = 5;
    private static final String[] PATHS = {
        "baseline", "recordFailure, sub-threshold", "failing execute, sub-threshold, localCache",
        "failing execute, sub-threshold, defaults (+ the gate's read)", "recordFailure that opens",
        "failing execute that opens, localCache",
    };

    private RecordPathBench() {
    }

    static String run(BenchEnv env) {
        Table t = new Table("store", "path", "p50 (µs)", "p99 (µs)", "baseline", "baseline p50 (µs)",
                "baseline p99 (µs)", "p50 / baseline p50", "target");
        List<String> verdicts = new ArrayList<>();
        StringBuilder counts = new StringBuilder();
        for (String name : env.stores()) {
            int samples = env.recordSamples(name);
            int warmup = env.recordWarmup(name);
            counts.append(counts.length() == 0 ? "" : ", ").append(name).append(' ').append(samples);
            try (StoreFixture fixture = env.fixture(name, true)) {
                measure(fixture, samples, warmup, t, verdicts);
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("One thread; paired samples per path after warm-up (").append(counts)
                .append("); µs. Targets (issue 13): p50 at most ")
                .append("1.2x the baseline for Redis, 1.3x for PostgreSQL; none yet for DynamoDB and Hazelcast")
                .append(" (ratio shown). The defaults' execute reads the state at the gate first (one more round")
                .append(" trip by design), so no target applies to it.\n\n");
        out.append(t).append('\n');
        for (String v : verdicts) {
            out.append(v).append('\n');
        }
        return out.toString();
    }

    private static void measure(StoreFixture fixture, int n, int warmup, Table t, List<String> verdicts) {
        Store store = fixture.open();
        String name = fixture.name();
        String sub = "record-sub";
        String subExec = "record-sub-exec";
        String subExecDefaults = "record-sub-exec-defaults";
        String open = "record-open";
        String openExec = "record-open-exec";
        try (CircuitBreaker never = CircuitBreaker.builder().store(store).failureThreshold(Integer.MAX_VALUE).build();
                CircuitBreaker neverCached = CircuitBreaker.builder().store(store).failureThreshold(Integer.MAX_VALUE)
                        .localCache(CacheConfig.STALE_TOLERANCE).build();
                CircuitBreaker two = CircuitBreaker.builder().store(store).failureThreshold(2).build();
                CircuitBreaker twoCached = CircuitBreaker.builder().store(store).failureThreshold(2)
                        .localCache(CacheConfig.STALE_TOLERANCE).build()) {
            for (String op : List.of(sub, subExec, subExecDefaults, open, openExec)) {
                never.reset(op); // also creates the store's table, schema or map before the baseline uses it
            }
            StoreFixture.RoundTrip baseline = fixture.recordBaseline(store);
            String none = "none (in-process)";
            if (baseline != null) {
                try {
                    baseline.once(); // an external Hazelcast member may lack the bench's processor class
                } catch (RuntimeException e) {
                    String why = String.valueOf(e.getMessage()).replace('|', '/');
                    none = "none (baseline failed: " + (why.length() > 80 ? why.substring(0, 80) + "..." : why) + ")";
                    baseline.close();
                    baseline = null;
                }
            }
            try {
                Latencies[] lat = new Latencies[PATHS.length];
                for (int p = 0; p < lat.length; p++) {
                    lat[p] = new Latencies(n);
                }
                long[] d = new long[PATHS.length];
                for (int i = 0; i < warmup + n; i++) {
                    for (int k = 0; k < PATHS.length; k++) {
                        int which = (k + i) % PATHS.length; // rotate the order
                        switch (which) {
                            case BASELINE:
                                if (baseline != null) {
                                    long t0 = System.nanoTime();
                                    baseline.once();
                                    d[which] = System.nanoTime() - t0;
                                }
                                break;
                            case RECORD: {
                                long t0 = System.nanoTime();
                                never.recordFailure(sub);
                                d[which] = System.nanoTime() - t0;
                                break;
                            }
                            case EXECUTE_CACHED:
                                d[which] = failingExecute(neverCached, subExec);
                                break;
                            case EXECUTE_DEFAULTS:
                                d[which] = failingExecute(never, subExecDefaults);
                                break;
                            case OPEN_RECORD: {
                                two.recordFailure(open); // one below the threshold, untimed
                                long t0 = System.nanoTime();
                                two.recordFailure(open);
                                d[which] = System.nanoTime() - t0;
                                two.reset(open);
                                break;
                            }
                            default: { // OPEN_EXECUTE
                                twoCached.recordFailure(openExec);
                                d[which] = failingExecute(twoCached, openExec);
                                twoCached.reset(openExec);
                                break;
                            }
                        }
                    }
                    if (i >= warmup) {
                        for (int p = 0; p < lat.length; p++) {
                            if (p != BASELINE || baseline != null) {
                                lat[p].add(d[p]);
                            }
                        }
                    }
                }
                check(never, two, List.of(sub, subExec, subExecDefaults), open, warmup + n);
                for (int p = 1; p < PATHS.length; p++) {
                    row(t, verdicts, name, p, lat[p], baseline == null ? null : baseline.describe(), lat[BASELINE],
                            none);
                }
            } finally {
                if (baseline != null) {
                    baseline.close();
                }
            }
        }
    }

    /** Times one {@code execute} whose call fails at once. */
    private static long failingExecute(CircuitBreaker breaker, String op) {
        long t0 = System.nanoTime();
        try {
            breaker.execute(op, Load.FAILING);
        } catch (Load.DependencyDown expected) {
            // the dependency's failure, counted by the breaker
        }
        return System.nanoTime() - t0;
    }

    /**
     * The loop measured what it claims: every sub-threshold failure was counted, and the openings ended closed
     * (reset after each).
     *
     * @throws IllegalStateException if not
     */
    private static void check(CircuitBreaker never, CircuitBreaker two, List<String> counted, String open,
                              int expected) {
        for (String op : counted) {
            BreakerState s = never.state(op);
            if (s.open() || s.failures() != expected) {
                throw new IllegalStateException("the record bench expected " + expected + " failures of '" + op
                        + "', closed; the store holds " + s);
            }
        }
        if (two.state(open).open()) {
            throw new IllegalStateException("the record bench left '" + open + "' open");
        }
    }

    private static void row(Table t, List<String> verdicts, String store, int path, Latencies l, String baseline,
                            Latencies base, String none) {
        long p50 = l.percentile(50);
        String p99 = Table.micros(l.percentile(99));
        if (baseline == null) {
            t.row(store, PATHS[path], Table.micros(p50), p99, none, "-", "-", "-", "-");
            return;
        }
        long b50 = base.percentile(50);
        double ratio = p50 / (double) b50;
        Double target = TARGETS.get(store);
        String targetCell;
        if (path == EXECUTE_DEFAULTS) {
            targetCell = "- (gate read)";
        } else if (target == null) {
            targetCell = "none yet";
        } else {
            targetCell = "<= " + Table.fmt(target, 2);
            boolean met = ratio <= target;
            verdicts.add("- " + store + ", " + PATHS[path] + ": p50 " + Table.fmt(ratio, 2) + "x the baseline, target <= "
                    + Table.fmt(target, 2) + "x: **" + (met ? "MET" : "MISSED") + "**");
        }
        t.row(store, PATHS[path], Table.micros(p50), p99, baseline, Table.micros(b50), Table.micros(base.percentile(99)),
                Table.fmt(ratio, 2), targetCell);
    }
}

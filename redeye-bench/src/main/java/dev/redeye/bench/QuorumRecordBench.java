package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerState;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The distributed record path with a quorum (issue 26) next to the same strategy without one, paired in one loop
 * so both sides see the same machine and server state. Per backend with quorum support, each iteration times, in
 * an order that rotates: a consecutive {@code recordFailure} below the threshold without a quorum (reference) and
 * with a quorum of 3, and a failure into a count window of 100 outcomes without a quorum (reference) and with one.
 * The quorum paths record through k breakers with distinct instance ids in turn, so the state carries k
 * contributions and every write updates them; nothing opens (an unreachable threshold; a 100 % rate threshold
 * against outcomes that alternate). k is each of {@code redeye.quorum.instances} (default {@value #INSTANCES}: the
 * quorum itself, half the bound of 16, the bound), each k measured in a loop of its own with its own references,
 * since what a record writes grows with the contributions it carries. The p50 of each quorum path is divided by its
 * reference's p50; the target is at most 1.2x on Redis and PostgreSQL. One thread; every breaker shares one
 * store client.
 *
 * <p>Run it (the services must be running):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections quorum --stores redis,postgres
 * </pre>
 */
final class QuorumRecordBench {
    /** The p50 ratio target, by backend. */
    static final Map<String, Double> TARGETS = Map.of("redis", 1.2, "postgres", 1.2);
    /** Instances contributing to each quorum state, by default; {@code -Dredeye.quorum.instances} overrides. */
    static final String INSTANCES = "3,8,16";

    private static final String[] PATHS = {
        "consecutive recordFailure (reference)", "consecutive recordFailure, quorum 3, %d instances",
        "count window (100) record (reference)", "count window (100) record, quorum 3, %d instances",
    };

    /** The contributing-instance counts to measure, from {@code redeye.quorum.instances}. */
    static List<Integer> instanceCounts() {
        List<Integer> out = new ArrayList<>();
        for (String v : System.getProperty("redeye.quorum.instances", INSTANCES).split(",")) {
            int k = Integer.parseInt(v.trim());
            if (k < 3 || k > BreakerState.MAX_CONTRIBUTORS) {
                throw new IllegalArgumentException("redeye.quorum.instances: each count from 3 (the quorum) to "
                        + BreakerState.MAX_CONTRIBUTORS + ", was " + k);
            }
            out.add(k);
        }
        return out;
    }

    private QuorumRecordBench() {
    }

    static String run(BenchEnv env) {
        Table t = new Table("store", "path", "p50 (µs)", "p99 (µs)", "p50 / reference p50", "target");
        List<String> verdicts = new ArrayList<>();
        StringBuilder counts = new StringBuilder();
        for (String name : env.stores()) {
            int samples = env.recordSamples(name);
            int warmup = env.recordWarmup(name);
            // a fixture per count: the breakers, closed after each loop, close the store they were given
            for (int k : instanceCounts()) {
                try (StoreFixture fixture = env.fixture(name, true)) {
                    Store store = fixture.open();
                    if (store.capability(QuorumState.class).isEmpty()) {
                        verdicts.add("- " + name + ": no quorum support (the store does not keep contributions)");
                        break;
                    }
                    measure(store, name, k, samples, warmup, t, verdicts);
                }
            }
            counts.append(counts.length() == 0 ? "" : ", ").append(name).append(' ').append(samples);
        }
        StringBuilder out = new StringBuilder();
        out.append("One thread; paired samples per path after warm-up (").append(counts)
                .append("); µs. Target (issue 26): the record p50 with a quorum at most 1.2x the same strategy's")
                .append(" without one on Redis and PostgreSQL; none for the other stores (ratio shown).\n\n");
        out.append(t).append('\n');
        for (String v : verdicts) {
            out.append(v).append('\n');
        }
        return out.toString();
    }

    private static CircuitBreaker breaker(Store store, UnaryOperator<CircuitBreakerBuilder> options) {
        return options.apply(CircuitBreaker.builder().store(store)).build();
    }

    private static void measure(Store store, String name, int instances, int n, int warmup, Table t,
            List<String> verdicts) {
        String[] ops = {"quorum-ref-consecutive-" + instances, "quorum-consecutive-" + instances,
            "quorum-ref-window-" + instances, "quorum-window-" + instances};
        UnaryOperator<CircuitBreakerBuilder> consecutive = b -> b.failureThreshold(Integer.MAX_VALUE);
        UnaryOperator<CircuitBreakerBuilder> window = b -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 100)
                .failureRateThreshold(100);
        List<CircuitBreaker> all = new ArrayList<>();
        try {
            CircuitBreaker[] plain = {breaker(store, consecutive), null, breaker(store, window), null};
            all.add(plain[0]);
            all.add(plain[2]);
            CircuitBreaker[][] fleet = new CircuitBreaker[PATHS.length][];
            for (int p : new int[] {1, 3}) {
                UnaryOperator<CircuitBreakerBuilder> options = p == 1 ? consecutive : window;
                fleet[p] = new CircuitBreaker[instances];
                for (int k = 0; k < instances; k++) {
                    String id = "bench-" + k;
                    fleet[p][k] = breaker(store, b -> options.apply(b).quorum(3).instanceId(id));
                    all.add(fleet[p][k]);
                }
            }
            for (int p = 0; p < ops.length; p++) {
                (plain[p] != null ? plain[p] : fleet[p][0]).reset(ops[p]);
            }
            Latencies[] lat = new Latencies[PATHS.length];
            for (int p = 0; p < lat.length; p++) {
                lat[p] = new Latencies(n);
            }
            long[] d = new long[PATHS.length];
            for (int i = 0; i < warmup + n; i++) {
                boolean success = i % 2 == 1;
                for (int k = 0; k < PATHS.length; k++) {
                    int p = (k + i) % PATHS.length; // rotate the order
                    CircuitBreaker b = plain[p] != null ? plain[p] : fleet[p][i % instances];
                    boolean windowed = p >= 2;
                    long t0 = System.nanoTime();
                    if (windowed && success) {
                        b.recordSuccess(ops[p]);
                    } else {
                        b.recordFailure(ops[p]);
                    }
                    d[p] = System.nanoTime() - t0;
                }
                if (i >= warmup) {
                    for (int p = 0; p < lat.length; p++) {
                        lat[p].add(d[p]);
                    }
                }
            }
            check(plain[0].state(ops[0]), fleet[1][0].state(ops[1]), plain[2].state(ops[2]),
                    fleet[3][0].state(ops[3]), warmup + n, instances);
            Double target = TARGETS.get(name);
            for (int p = 0; p < PATHS.length; p++) {
                boolean reference = p % 2 == 0;
                double ratio = lat[p].percentile(50) / (double) lat[reference ? p : p - 1].percentile(50);
                String targetCell = reference ? "-" : target == null ? "none" : "<= " + Table.fmt(target, 2);
                String path = String.format(PATHS[p], instances);
                t.row(name, path, Table.micros(lat[p].percentile(50)), Table.micros(lat[p].percentile(99)),
                        Table.fmt(ratio, 2), targetCell);
                if (!reference && target != null) {
                    verdicts.add("- " + name + ", " + path + ": p50 " + Table.fmt(ratio, 2)
                            + "x without a quorum, target <= " + Table.fmt(target, 2) + "x: **"
                            + (ratio <= target ? "MET" : "MISSED") + "**");
                }
            }
        } finally {
            all.forEach(CircuitBreaker::close);
        }
    }

    /**
     * The loop measured what it claims: nothing opened, the consecutive counts hold every failure, the quorum
     * states hold a contribution per instance.
     *
     * @throws IllegalStateException if not
     */
    private static void check(BreakerState ref, BreakerState quorum, BreakerState refWindow, BreakerState window,
            int rounds, int instances) {
        if (ref.open() || ref.failures() != rounds || quorum.open() || quorum.failures() != rounds
                || quorum.contributors().size() != instances || refWindow.open() || window.open()
                || window.contributors().size() != instances) {
            throw new IllegalStateException("the quorum bench did not measure what it claims: " + ref + ", " + quorum
                    + ", " + refWindow + ", " + window);
        }
    }
}

package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerState;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The distributed record path of a sliding window (issue 24) next to the consecutive strategy's, paired in one
 * loop so both sides see the same machine and server state. Per backend, each iteration times, in an order that
 * rotates: a consecutive {@code recordFailure} below the threshold (the reference), then a failure and a success
 * recorded into a count window of 100 outcomes and into a time window of 60 s, configured never to open (a 100 %
 * failure threshold against outcomes that alternate, and a minimum above the run's calls for the time window).
 * The p50 of each window path is divided by the reference's p50; the target is at most 1.3x on Redis
 * and PostgreSQL (the other stores have ratios but no target). One thread; the breakers share one store client.
 *
 * <p>Run it (the services must be running):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections window --stores redis,postgres
 * </pre>
 */
final class WindowRecordBench {
    /** The p50 ratio target, by backend. */
    static final Map<String, Double> TARGETS = Map.of("redis", 1.3, "postgres", 1.3);

    private static final String[] PATHS = {
        "consecutive recordFailure, sub-threshold (reference)", "count window (100), recordFailure",
        "count window (100), recordSuccess", "time window (60 s), recordFailure", "time window (60 s), recordSuccess",
    };

    private WindowRecordBench() {
    }

    static String run(BenchEnv env) {
        Table t = new Table("store", "path", "p50 (µs)", "p99 (µs)", "p50 / reference p50", "target");
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
                .append("); µs. Target (issue 24): a window's record p50 at most 1.3x the consecutive record's on")
                .append(" Redis and PostgreSQL; none for the other stores (ratio shown).\n\n");
        out.append(t).append('\n');
        for (String v : verdicts) {
            out.append(v).append('\n');
        }
        return out.toString();
    }

    private static CircuitBreaker breaker(Store store, UnaryOperator<CircuitBreakerBuilder> options) {
        return options.apply(CircuitBreaker.builder().store(store)).build();
    }

    private static void measure(StoreFixture fixture, int n, int warmup, Table t, List<String> verdicts) {
        Store store = fixture.open();
        String name = fixture.name();
        String[] ops = {"window-reference", "window-count", "window-count", "window-time", "window-time"};
        try (CircuitBreaker consecutive = breaker(store, b -> b.failureThreshold(Integer.MAX_VALUE));
                CircuitBreaker count = breaker(store, b -> b.slidingWindow(SlidingWindowType.COUNT_BASED, 100)
                        .failureRateThreshold(100));
                CircuitBreaker time = breaker(store, b -> b.slidingWindow(SlidingWindowType.TIME_BASED, 60)
                        .minimumNumberOfCalls(Integer.MAX_VALUE))) {
            CircuitBreaker[] by = {consecutive, count, count, time, time};
            for (int p = 0; p < ops.length; p++) {
                by[p].reset(ops[p]);
            }
            Latencies[] lat = new Latencies[PATHS.length];
            for (int p = 0; p < lat.length; p++) {
                lat[p] = new Latencies(n);
            }
            long[] d = new long[PATHS.length];
            for (int i = 0; i < warmup + n; i++) {
                for (int k = 0; k < PATHS.length; k++) {
                    int p = (k + i) % PATHS.length; // rotate the order
                    boolean success = p == 2 || p == 4;
                    long t0 = System.nanoTime();
                    if (success) {
                        by[p].recordSuccess(ops[p]);
                    } else {
                        by[p].recordFailure(ops[p]);
                    }
                    d[p] = System.nanoTime() - t0;
                }
                if (i >= warmup) {
                    for (int p = 0; p < lat.length; p++) {
                        lat[p].add(d[p]);
                    }
                }
            }
            check(by, ops, warmup + n);
            long ref = lat[0].percentile(50);
            Double target = TARGETS.get(name);
            for (int p = 0; p < PATHS.length; p++) {
                double ratio = lat[p].percentile(50) / (double) ref;
                String targetCell = p == 0 ? "-" : target == null ? "none" : "<= " + Table.fmt(target, 2);
                t.row(name, PATHS[p], Table.micros(lat[p].percentile(50)), Table.micros(lat[p].percentile(99)),
                        Table.fmt(ratio, 2), targetCell);
                if (p > 0 && target != null) {
                    verdicts.add("- " + name + ", " + PATHS[p] + ": p50 " + Table.fmt(ratio, 2)
                            + "x the consecutive record, target <= " + Table.fmt(target, 2) + "x: **"
                            + (ratio <= target ? "MET" : "MISSED") + "**");
                }
            }
        }
    }

    /**
     * The loop measured what it claims: the breakers stayed closed, the count window is full, the consecutive
     * count holds every failure.
     *
     * @throws IllegalStateException if not
     */
    private static void check(CircuitBreaker[] by, String[] ops, int rounds) {
        BreakerState ref = by[0].state(ops[0]);
        BreakerState count = by[1].state(ops[1]);
        BreakerState time = by[3].state(ops[3]);
        if (ref.open() || ref.failures() != rounds || count.open() || count.window() == null
                || count.window().calls() != Math.min(100, 2 * rounds) || time.open() || time.window() == null) {
            throw new IllegalStateException("the window bench did not measure what it claims: " + ref + ", "
                    + count + ", " + time);
        }
    }
}

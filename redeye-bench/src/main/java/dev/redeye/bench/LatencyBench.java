package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.spi.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * p50 and p99 of one healthy {@code execute} per backend and {@link CacheConfig}, next to the backend's own
 * round trip measured in the same loop (each iteration times one {@code execute}, one round trip, then one
 * {@code store.get} of the same key straight through the SPI), so all three see the same machine and server
 * state: execute minus store.get is what the engine adds, store.get minus the round trip what the store adds. One thread; the timer ({@code System.nanoTime()}) is read by
 * this harness around each call, never inside the breaker.
 *
 * <p>Run it (part of {@link DistributedBench}; Redis and PostgreSQL must be running):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections latency
 * </pre>
 */
final class LatencyBench {
    private LatencyBench() {
    }

    static String run(BenchEnv env) {
        int samples = env.quick() ? 300 : 5_000;
        int warmup = env.quick() ? 200 : 2_000;
        Table t = new Table("store", "configuration", "execute p50 (µs)", "execute p99 (µs)", "store.get p50 (µs)",
                "round trip", "round trip p50 (µs)", "round trip p99 (µs)", "execute p50 / round trip p50");
        List<String[]> targets = new ArrayList<>();
        for (String s : env.stores()) {
            targets.add(new String[] {s, "pooled"});
        }
        if (env.has("postgres")) {
            targets.add(new String[] {"postgres", "uri"});
        }
        for (String[] target : targets) {
            boolean pooled = target[1].equals("pooled");
            try (StoreFixture fixture = env.fixture(target[0], pooled)) {
                for (CacheConfig config : CacheConfig.values()) {
                    if (!pooled && config != CacheConfig.DEFAULTS) {
                        continue; // one row is enough to compare the URI form with the builder over HikariCP
                    }
                    measure(fixture, config, samples, warmup, t);
                }
            }
        }
        return "One thread; " + samples + " paired samples per row after " + warmup + " warm-up iterations; µs."
                + " `postgres` is `PostgresStore.builder(HikariDataSource)`; `postgres (Stores.open URI)` is the"
                + " URI form with the store's own pool.\n\n" + t;
    }

    private static void measure(StoreFixture fixture, CacheConfig config, int n, int warmup, Table t) {
        String op = "latency-" + config.name().toLowerCase(java.util.Locale.ROOT);
        Latencies exec = new Latencies(n);
        Latencies trip = new Latencies(n);
        Latencies get = new Latencies(n);
        StoreFixture.RoundTrip rt = fixture.roundTrip();
        Store store = fixture.open();
        try (CircuitBreaker breaker = config.apply(CircuitBreaker.builder().store(store)).build()) {
            for (int i = 0; i < warmup + n; i++) {
                long t0 = System.nanoTime();
                breaker.execute(op, Load.HEALTHY);
                long t1 = System.nanoTime();
                if (rt != null) {
                    rt.once();
                }
                long t2 = System.nanoTime();
                store.get(op); // the store's own read through the SPI: what the engine adds is the difference
                long t3 = System.nanoTime();
                if (i >= warmup) {
                    exec.add(t1 - t0);
                    trip.add(t2 - t1);
                    get.add(t3 - t2);
                }
            }
        } finally {
            if (rt != null) {
                rt.close();
            }
        }
        long e50 = exec.percentile(50);
        if (rt == null) {
            t.row(fixture.name(), config.label(), Table.micros(e50), Table.micros(exec.percentile(99)),
                    Table.micros(get.percentile(50)), "none", "-", "-", "-");
        } else {
            long r50 = trip.percentile(50);
            t.row(fixture.name(), config.label(), Table.micros(e50), Table.micros(exec.percentile(99)),
                    Table.micros(get.percentile(50)), rt.describe(), Table.micros(r50), Table.micros(trip.percentile(99)),
                    Table.fmt(e50 / (double) r50, 2));
        }
    }
}

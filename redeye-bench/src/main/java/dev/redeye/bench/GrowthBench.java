package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;

/**
 * Cost growth with the number of distinct operations (1, 100, 10,000) on one breaker: the per-call cost of
 * healthy calls spread round-robin over every operation (for a store, each call paired with one round trip
 * of that store, as in {@link LatencyBench}), and the heap the breaker retains per operation
 * (heap used after a full GC with the breaker and every operation live, minus the same right after the
 * breaker was closed and dropped, so the JIT's, the class loader's and the store client's own growth during
 * the measurement cancel out; the operation names and the store client stay live in both readings).
 * Backends: local mode (no store) and every store of the run with the defaults; DynamoDB (dynalite answers in
 * about a millisecond) measures a tenth of the calls.
 *
 * <p>Run it (part of {@link DistributedBench}; the services must be running, see {@code scripts/services.sh}):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections growth
 * </pre>
 */
final class GrowthBench {
    static final int[] OPERATIONS = {1, 100, 10_000};

    private GrowthBench() {
    }

    static String run(BenchEnv env) {
        Table t = new Table("store", "operations", "calls measured", "mean per call (ns)", "execute p50 (µs)",
                "round trip p50 (µs)", "execute p50 / round trip p50", "retained heap (bytes)", "bytes / operation");
        for (String storeName : env.stores()) {
            for (int n : OPERATIONS) {
                measure(env, storeName, n, t);
            }
        }
        return "One thread, calls spread round-robin over the operations; every operation called once before the"
                + " measurement. Local mode: mean of a timed loop. Stores: each call paired with one round trip"
                + " (p50 of each). Retained heap = used heap after System.gc() (MemoryMXBean) with the breaker live minus the same after it was closed and dropped; a few KB of noise, so the 1-operation rows say little per operation.\n\n" + t;
    }

    private static void measure(BenchEnv env, String storeName, int operations, Table t) {
        boolean local = storeName.equals("memory");
        long calls = local ? (env.quick() ? 200_000 : 5_000_000) : (env.quick() ? 1_000 : 20_000);
        if (storeName.equals("dynamodb")) {
            calls /= 10;
        }
        String[] names = new String[operations];
        for (int i = 0; i < operations; i++) {
            names[i] = "operation-" + i;
        }
        try (StoreFixture fixture = local ? null : env.fixture(storeName, true);
                StoreFixture.RoundTrip rt = local ? null : fixture.roundTrip()) {
            CircuitBreakerBuilder b = CircuitBreaker.builder();
            if (!local) {
                b.store(fixture.open()); // opened first: its client's own heap is not the breaker's
            }
            Latencies exec = local ? null : new Latencies((int) calls);
            Latencies trip = local ? null : new Latencies((int) calls);
            long retained;
            long elapsed;
            CircuitBreaker breaker = b.build();
            try {
                for (String name : names) {
                    breaker.execute(name, Load.HEALTHY);
                }
                // a warm-up pass, so the JIT has settled
                long warm = local ? calls : Math.min(calls, 2_000);
                for (long i = 0; i < warm; i++) {
                    breaker.execute(names[(int) (i % operations)], Load.HEALTHY);
                }
                long start = System.nanoTime();
                if (local) {
                    for (long i = 0; i < calls; i++) {
                        breaker.execute(names[(int) (i % operations)], Load.HEALTHY);
                    }
                } else {
                    // paired with a round trip, like the latency table: round trips on a small VM are
                    // bimodal (the scheduler), and pairing keeps both figures in the same mode
                    for (int i = 0; i < calls; i++) {
                        long t0 = System.nanoTime();
                        breaker.execute(names[i % operations], Load.HEALTHY);
                        long t1 = System.nanoTime();
                        rt.once();
                        long t2 = System.nanoTime();
                        exec.add(t1 - t0);
                        trip.add(t2 - t1);
                    }
                }
                elapsed = System.nanoTime() - start;
                long withBreaker = usedHeapAfterGc();
                Reference.reachabilityFence(breaker);
                breaker.close();
                breaker = null;
                retained = withBreaker - usedHeapAfterGc();
            } finally {
                if (breaker != null) {
                    breaker.close();
                }
            }
            if (local) {
                t.row("local mode", operations, calls, Table.fmt(elapsed / (double) calls, 1), "-", "-", "-",
                        retained, Table.fmt(retained / (double) operations, 0));
            } else {
                long e50 = exec.percentile(50);
                long r50 = trip.percentile(50);
                boolean heapKnown = !fixture.serverInThisJvm();
                t.row(storeName, operations, calls, "-", Table.micros(e50), Table.micros(r50),
                        Table.fmt(e50 / (double) r50, 2), heapKnown ? retained : "- (member in this JVM)",
                        heapKnown ? Table.fmt(retained / (double) operations, 0) : "-");
            }
            Reference.reachabilityFence(names);
        }
    }

    static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}

package dev.redeye.bench;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The per-call cost of a closed, healthy sliding-window breaker (local mode): redeye's count and time windows
 * against Resilience4j's, each at Resilience4j's defaults (100 outcomes or 100 s, 50 %, minimum 100 calls), on one
 * thread and on two threads sharing one breaker and one operation. Every call is recorded in the window.
 *
 * <p>Run it (about 2 minutes; {@code -prof gc} adds the allocation per call, {@code gc.alloc.rate.norm}):
 * <pre>
 * mvn -B -q install -pl redeye-bench -am -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar WindowBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
public class WindowBenchmark extends OneAndTwoThreads {

    /** The competitor. */
    @Param({"REDEYE_COUNT_WINDOW", "RESILIENCE4J", "REDEYE_TIME_WINDOW", "RESILIENCE4J_TIME_WINDOW"})
    public BreakerType type;

    @Override
    BreakerType type() {
        return type;
    }
}

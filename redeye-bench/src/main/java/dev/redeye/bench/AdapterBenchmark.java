package dev.redeye.bench;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The per-call cost of a closed, healthy breaker (local mode) behind Resilience4j's interface: Resilience4j's own
 * breaker and redeye's adapter ({@code redeye-resilience4j}), both at Resilience4j's default configuration and
 * called through a supplier decorated once with {@code CircuitBreaker.decorateSupplier}, beside redeye's own
 * breaker with the options the adapter maps those defaults to ({@link BreakerType#REDEYE_R4J_DEFAULTS}) and
 * without slow calls ({@link BreakerType#REDEYE_COUNT_WINDOW}); on one thread and on two threads sharing one
 * breaker.
 *
 * <p>Run it (about 3 minutes; {@code -prof gc} adds the allocation per call, {@code gc.alloc.rate.norm}):
 * <pre>
 * mvn -B -q install -pl redeye-bench -am -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar AdapterBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
public class AdapterBenchmark extends OneAndTwoThreads {

    /** The competitor. */
    @Param({"RESILIENCE4J", "RESILIENCE4J_OVER_REDEYE", "REDEYE_R4J_DEFAULTS", "REDEYE_COUNT_WINDOW"})
    public BreakerType type;

    @Override
    BreakerType type() {
        return type;
    }
}

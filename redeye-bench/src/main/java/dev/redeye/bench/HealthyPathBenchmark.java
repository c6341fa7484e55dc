package dev.redeye.bench;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The per-call cost of a closed, healthy breaker (local mode): one trivial call through each competitor, on
 * one thread and on two threads sharing one breaker and one operation. {@link BreakerType#DIRECT} is the
 * limit (the call with no breaker).
 *
 * <p>Run it (about 3 minutes; {@code -prof gc} adds the allocation per call, {@code gc.alloc.rate.norm}):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar HealthyPathBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 * Scores are the average time per call of each thread (ns/op): on a machine with at least two cores, a
 * breaker that scales keeps its 2-thread figure close to its 1-thread figure. {@code REDEYE_MICROMETER} is
 * redeye with a Micrometer binder registered; to compare just the two:
 * {@code ... HealthyPathBenchmark -p type=REDEYE,REDEYE_MICROMETER -prof gc}.
 */
@State(Scope.Benchmark)
public class HealthyPathBenchmark extends OneAndTwoThreads {

    /** The competitor. */
    @Param({"DIRECT", "REDEYE", "REDEYE_MICROMETER", "RESILIENCE4J", "FAILSAFE"})
    public BreakerType type;

    @Override
    BreakerType type() {
        return type;
    }
}

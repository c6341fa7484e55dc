package dev.redeye.bench;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The per-call cost of a rejection by an open breaker (local mode), on one thread and on two threads sharing
 * one breaker: the hot path while a dependency is down. Each rejection creates the library's own exception
 * (redeye {@code CircuitOpenException} and Resilience4j {@code CallNotPermittedException} both without a stack
 * trace; Failsafe's {@code CircuitBreakerOpenException} always fills one in, it has no option to skip it),
 * except {@code REDEYE_OR_ELSE}, where {@code executeOrElse} returns a fallback value and builds nothing.
 *
 * <p>Run it (about 3 minutes):
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -jar redeye-bench/target/benchmarks.jar RejectionBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
public class RejectionBenchmark extends OneAndTwoThreads {

    /**
     * The competitor ({@link BreakerType#DIRECT} has nothing to reject); {@link BreakerType#REDEYE_OR_ELSE} is
     * redeye answering the rejection with a fallback value, building no exception.
     */
    @Param({"REDEYE", "REDEYE_OR_ELSE", "RESILIENCE4J", "FAILSAFE"})
    public BreakerType type;

    @Override
    BreakerType type() {
        return type;
    }

    /**
     * Opens the breaker for an hour, so that every call is rejected.
     *
     * @throws IllegalStateException if the breaker does not reject after being opened
     */
    @Override
    void prepare() {
        breaker.trip();
    }
}

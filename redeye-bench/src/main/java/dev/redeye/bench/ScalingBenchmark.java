package dev.redeye.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * A diagnostic for the "2 threads on one breaker" target of {@link HealthyPathBenchmark}: the same healthy
 * call on two threads, once sharing one breaker and one operation (as {@code HealthyPathBenchmark.twoThreads})
 * and once with a breaker per thread, which shares no mutable data at all. On a machine whose two cores scale,
 * the second is the 1-thread figure; the gap between the two is what sharing the breaker costs, and the gap
 * between the second and {@code oneThread} is the machine's own (vCPUs, frequency, the harness).
 *
 * <pre>
 * java -jar redeye-bench/target/benchmarks.jar ScalingBenchmark -f 1 -wi 3 -w 2s -i 5 -r 2s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ScalingBenchmark {

    /** The breaker a state holds; each subclass sets its own scope. */
    @State(Scope.Benchmark)
    public abstract static class Holder extends BreakerHolder {
        /** The competitor. */
        @Param({"REDEYE"})
        public BreakerType type;

        @Override
        BreakerType type() {
            return type;
        }
    }

    /** One breaker for every thread of the benchmark. */
    @State(Scope.Benchmark)
    public static class Shared extends Holder {
    }

    /** A breaker per thread. */
    @State(Scope.Thread)
    public static class Own extends Holder {
    }

    /** One thread, one breaker: the reference. */
    @Benchmark
    @Threads(1)
    public Object oneThread(Shared s) {
        return s.breaker.call();
    }

    /** Two threads on one breaker and one operation. */
    @Benchmark
    @Threads(2)
    public Object twoThreadsSharedBreaker(Shared s) {
        return s.breaker.call();
    }

    /** Two threads, each on its own breaker: nothing mutable is shared. */
    @Benchmark
    @Threads(2)
    public Object twoThreadsOwnBreakers(Own s) {
        return s.breaker.call();
    }
}

package dev.redeye.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;

/**
 * The per-call cost of one breaker shared by every benchmark thread, as the subclass prepared it: one thread
 * calling it, and two threads calling it with the same operation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public abstract class OneAndTwoThreads extends BreakerHolder {

    /** One thread calling through the breaker. */
    @Benchmark
    @Threads(1)
    public Object oneThread() {
        return breaker.call();
    }

    /** Two threads calling through the same breaker and operation. */
    @Benchmark
    @Threads(2)
    public Object twoThreads() {
        return breaker.call();
    }
}

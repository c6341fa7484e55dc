package dev.redeye.bench;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The breaker a local-mode benchmark's state holds: built before the measurement, closed after it. JMH wants
 * a {@code @State} on the class that declares the {@code @Param}: each subclass declares its competitors and
 * may set its own scope.
 */
@State(Scope.Benchmark)
public abstract class BreakerHolder {
    BreakerAdapter breaker;

    /** The competitor: the subclass's {@code @Param}. */
    abstract BreakerType type();

    /** What the measurement needs done to the new breaker; nothing here. */
    void prepare() {
    }

    /** Builds the breaker and prepares it. */
    @Setup
    public void setUp() {
        breaker = type().create();
        prepare();
    }

    /** Closes the breaker. */
    @TearDown
    public void tearDown() {
        breaker.close();
    }
}

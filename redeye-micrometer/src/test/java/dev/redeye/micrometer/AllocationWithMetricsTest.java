package dev.redeye.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.redeye.CheckedSupplier;
import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * With a binder registered over a {@link SimpleMeterRegistry}, the local-mode healthy path still allocates
 * nothing, at the default sampling of call durations and when every call is timed; and in distributed mode
 * the binder's store-operation timers ({@code Timer.record}) add nothing to what a call allocates without it.
 * Measured with the JVM's per-thread allocation counter over 200,000 calls after warm-up; the slack is a
 * constant for the measurement itself, not a per-call allowance.
 */
class AllocationWithMetricsTest {
    private static final int CALLS = 200_000;
    private static final long SLACK_BYTES = 4_096;

    private static com.sun.management.ThreadMXBean threads() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) mx;
        assumeTrue(t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled(),
                "thread allocation accounting is off");
        return t;
    }

    /** Bytes allocated by this thread over {@link #CALLS} calls of {@code op} through {@code b}, after warm-up. */
    private static long allocatedByCalls(CircuitBreaker b, String op) {
        com.sun.management.ThreadMXBean threads = threads();
        CheckedSupplier<String, RuntimeException> call = () -> "ok";
        ToLongFunction<Integer> run = n -> {
            long sink = 0;
            for (int i = 0; i < n; i++) {
                sink += b.execute(op, call).length();
            }
            return sink;
        };
        run.applyAsLong(CALLS); // warm-up: creates the entry and its meters, lets the JIT compile the path
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        long sink = run.applyAsLong(CALLS);
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        assertEquals(2L * CALLS, sink);
        return allocated;
    }

    @ParameterizedTest(name = "every call timed: {0}")
    @ValueSource(booleans = {false, true})
    void healthyLocalCallsWithMetricsAllocateNothing(boolean everyCall) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.ofDefaults()) {
            RedeyeMetrics.Builder builder = RedeyeMetrics.builder(b);
            if (everyCall) {
                builder.timeEveryCall(); // else the default: sampled
            }
            try (RedeyeMetrics m = builder.build()) {
                m.bindTo(registry);
                long allocated = allocatedByCalls(b, "healthy");
                assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + CALLS + " healthy calls");
                var timer = registry.get(RedeyeMetrics.CALLS).tags("name", "healthy", "kind", "successful")
                        .functionTimer();
                assertEquals(2.0 * CALLS, timer.count(), "every call counted");
                assertTrue(timer.totalTime(TimeUnit.NANOSECONDS) > 0, "calls were timed");
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory://allocation-with-metrics"})
    void storeOperationTimersAddNoAllocation(String uri) {
        long without;
        try (CircuitBreaker b = CircuitBreaker.builder().store(Stores.open(uri)).build()) {
            without = allocatedByCalls(b, "distributed");
        }
        long with;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (CircuitBreaker b = CircuitBreaker.builder().store(Stores.open(uri)).build();
                RedeyeMetrics m = RedeyeMetrics.of(b)) {
            m.bindTo(registry);
            with = allocatedByCalls(b, "distributed");
            assertTrue(registry.get(RedeyeMetrics.STORE_OPERATIONS).tags("operation", "get").timer().count()
                    >= 2L * CALLS, "every store read was timed");
        }
        assertTrue(with - without < SLACK_BYTES, "with the binder " + with + " bytes, without " + without
                + " bytes over " + CALLS + " calls: " + (with - without) / (double) CALLS + " bytes per call more");
    }
}

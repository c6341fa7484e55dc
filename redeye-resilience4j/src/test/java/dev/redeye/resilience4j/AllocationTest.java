package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.lang.management.ManagementFactory;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The adapter's healthy path in local mode allocates nothing: a supplier decorated once with Resilience4j's
 * {@code CircuitBreaker.decorateSupplier} (acquirePermission, two timestamps, onResult), at Resilience4j's default
 * configuration (a count window of 100 and a slow-call threshold of 60 s, so every call is watched for
 * slowness). Measured with the JVM's per-thread allocation counter over 200,000 calls after as many to warm up; the
 * slack is a constant for the measurement itself (200,000 calls at even 8 bytes each would be 1.6 MB).
 */
class AllocationTest {
    private static final int CALLS = 200_000;
    private static final long SLACK_BYTES = 4_096;

    @Test
    void healthyCallsThroughDecoratedSuppliersAllocateNothing() {
        try (Resilience4jBreakers breakers = Resilience4jBreakers.local()) {
            CircuitBreaker cb = breakers.circuitBreaker("healthy", CircuitBreakerConfig.ofDefaults());
            Object value = new Object();
            Supplier<Object> call = CircuitBreaker.decorateSupplier(cb, () -> value);
            long allocated = allocatedOver(call);
            assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + CALLS + " healthy calls");
            assertEquals(100, cb.getMetrics().getNumberOfSuccessfulCalls(), "a full window of successes");
            assertEquals(2L * CALLS, ((RedeyeBackedCircuitBreaker) cb).redeye().metrics("healthy").successes());
        }
    }

    @Test
    void theMeasurementSeesAnAllocation() {
        Supplier<Object> allocating = () -> new long[4];
        assertTrue(allocatedOver(allocating) >= 32L * CALLS, "the counter sees an array per call");
    }

    private static volatile Object sink;

    private static long allocatedOver(Supplier<Object> call) {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
                "thread allocation accounting is off");
        for (int i = 0; i < CALLS; i++) {
            sink = call.get();
        }
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < CALLS; i++) {
            sink = call.get();
        }
        return threads.getThreadAllocatedBytes(tid) - before;
    }
}

package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The local-mode healthy path of the consecutive strategy allocates nothing, and neither does a rejection
 * answered by {@code executeOrElse} / {@code executeOrElseGet}, nor a distributed call served by the local
 * cache: measured with the JVM's own per-thread allocation counter over 200,000 calls after warm-up. The slack
 * is a constant for the measurement itself, not a per-call allowance (200,000 calls at even 8 bytes each would
 * be 1.6 MB).
 */
class AllocationTest {
    private static final int CALLS = 200_000;
    private static final long SLACK_BYTES = 4_096;

    @Test
    void healthyLocalCallsAllocateNothing() {
        measure(false);
    }

    @Test
    void healthyLocalCallsOnAStoredClosedStateAllocateNothing() {
        measure(true);
    }

    /**
     * A sliding window in local mode counts every outcome in place: a healthy call through a count window or a time
     * window allocates nothing either (the window rolls its buckets in place too).
     */
    @Test
    void healthyLocalCallsThroughASlidingWindowAllocateNothing() {
        for (dev.redeye.api.SlidingWindowType type : dev.redeye.api.SlidingWindowType.values()) {
            measure(false, null, () -> CircuitBreaker.builder().slidingWindow(type, 100).build());
            try (CircuitBreaker b = CircuitBreaker.builder().slidingWindow(type, 100).build()) {
                b.execute("counted", () -> "ok");
                b.execute("counted", () -> "ok");
                assertEquals(2, b.state("counted").window().calls(), type + ": every outcome is in the window");
            }
        }
    }

    /**
     * Slow calls watched while they run ({@code slowCallDurationThreshold}): a thread's calls reuse the thread's own
     * watch, so a healthy call under a watch allocates nothing either.
     */
    @Test
    void healthyLocalCallsWatchedForSlownessAllocateNothing() {
        for (dev.redeye.api.SlidingWindowType type : dev.redeye.api.SlidingWindowType.values()) {
            measure(false, null, () -> CircuitBreaker.builder().slidingWindow(type, 100)
                    .slowCallDurationThreshold(Duration.ofHours(1)).build());
        }
    }

    /**
     * A {@link PermitSlot} acquired and completed call after call, under a sliding window with slow calls watched
     * (what the Resilience4j adapter does per call): nothing allocated.
     */
    @Test
    void permitSlotCallsAllocateNothing() {
        try (CircuitBreaker b = CircuitBreaker.builder().slidingWindow(dev.redeye.api.SlidingWindowType.COUNT_BASED,
                100).slowCallDurationThreshold(Duration.ofHours(1)).build()) {
            PermitSlot slot = b.newPermitSlot("slotted");
            Measured m = measured(() -> {
                if (!slot.tryAcquire()) {
                    throw slot.rejection();
                }
                return slot.onSuccess() ? 1 : 0;
            });
            assertEquals(2L * CALLS, m.sink());
            assertTrue(m.allocatedBytes() < SLACK_BYTES,
                    m.allocatedBytes() + " bytes allocated over " + CALLS + " permit-slot calls");
            assertEquals(2L * CALLS, b.metrics("slotted").successes());
        }
    }

    /**
     * With an observer that times every call registered, the engine's hooks (the sampling decision, two clock
     * reads, the observer call with the operation and an enum) allocate nothing either.
     */
    @Test
    void healthyLocalCallsWithATimingObserverAllocateNothing() {
        measure(false, new CircuitBreakerObserver() {
            @Override
            public CallTiming callTiming() {
                return CallTiming.EVERY_CALL;
            }

            @Override
            public void callTimed(ObservedOperation operation, CallOutcome outcome, long nanos, long weight) {
                timedCalls++;
            }
        });
        assertEquals(2L * CALLS, timedCalls);
    }

    /**
     * Distributed mode with the local cache: a call served from a trusted fresh cache entry allocates nothing
     * either (the ticker is fixed, so the entry never goes stale and no refresh read runs in the measurement;
     * a refresh read may allocate).
     */
    @Test
    void healthyCallsServedByTheLocalCacheAllocateNothing() {
        try (InMemoryStore shared = new InMemoryStore()) {
            SpyStore spy = SpyStore.over(shared);
            measure(false, null, () -> {
                CircuitBreaker b = CircuitBreaker.builder().store(spy).localCache(Duration.ofSeconds(5))
                        .clock(Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC))
                        .ticker(() -> 0L).build();
                assertTrue(b.isLocalCacheActive());
                return b;
            });
            assertEquals(1, spy.reads.get(), "one read filled the cache; every other call was served from it");
        }
    }

    /**
     * Write batching ({@code recordBatching}) under the error-rate strategy, whose every outcome is a write: a call
     * served by the local cache adds its outcome to the operation's batch and allocates nothing. Measured over
     * fewer calls than a batch holds, from an empty batch, so no batch is written within the measurement (a
     * batch's write allocates, once per batch); the ticker is fixed, so none falls due either.
     */
    @Test
    void batchedOutcomesAllocateNothingPerCall() {
        try (InMemoryStore shared = new InMemoryStore()) {
            CountingStore counting = new CountingStore(shared.newClient());
            try (CircuitBreaker b = CircuitBreaker.builder().store(counting).localCache(Duration.ofSeconds(5))
                    .strategy(dev.redeye.api.Strategy.ERROR_RATE).recordBatching(Duration.ofSeconds(1))
                    .clock(Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC))
                    .ticker(() -> 0L).build()) {
                assertTrue(b.isLocalCacheActive());
                CheckedSupplier<String, RuntimeException> call = () -> "ok";
                String op = "batched";
                long sink = 0;
                for (int i = 0; i < CALLS; i++) {
                    sink += b.execute(op, call).length(); // warm-up: full batches are written
                }
                long batches = counting.countOf(dev.redeye.spi.AtomicOperation.Kind.OUTCOMES);
                assertEquals(CALLS / dev.redeye.spi.AtomicOperation.MAX_BATCH, batches, "full batches only");
                b.state(op); // writes what is held: the batch is empty
                int n = dev.redeye.spi.AtomicOperation.MAX_BATCH - 1;
                com.sun.management.ThreadMXBean threads = allocationCounter();
                long tid = Thread.currentThread().getId();
                long before = threads.getThreadAllocatedBytes(tid);
                for (int i = 0; i < n; i++) {
                    sink += b.execute(op, call).length();
                }
                long allocated = threads.getThreadAllocatedBytes(tid) - before;
                assertEquals(2L * (CALLS + n), sink);
                assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + n + " batched calls");
                assertEquals(batches + 1, counting.countOf(dev.redeye.spi.AtomicOperation.Kind.OUTCOMES),
                        "no batch written while measured");
                assertEquals(CALLS + n, b.state(op).samples(), "every outcome counted");
            }
        }
    }

    private static long timedCalls;
    private static volatile RuntimeException lastRejection;

    /** An open breaker answering with {@code executeOrElse}'s value builds no exception: nothing is allocated. */
    @Test
    void rejectionsAnsweredByExecuteOrElseAllocateNothing() {
        measureRejections((b, op) -> b.executeOrElse(op, () -> "live", "fallback"));
    }

    /** The same with a non-capturing {@code executeOrElseGet} supplier. */
    @Test
    void rejectionsAnsweredByExecuteOrElseGetAllocateNothing() {
        measureRejections((b, op) -> b.executeOrElseGet(op, () -> "live", () -> "fallback"));
    }

    /**
     * The check of the check: a rejection answered by a fallback that takes the exception (and keeps it, so
     * that no JIT can elide it) allocates one {@code CircuitOpenException} per call, and the measurement sees it.
     */
    @Test
    void rejectionsAnsweredByAnExceptionTakingFallbackDoAllocate() {
        long allocated = allocatedByRejections((b, op) -> b.execute(op, () -> "live", rejection -> {
            lastRejection = rejection;
            return "fallback";
        }));
        assertTrue(allocated >= 16L * CALLS, allocated + " bytes over " + CALLS + " rejections built as exceptions");
    }

    private static void measureRejections(java.util.function.BiFunction<CircuitBreaker, String, String> call) {
        long allocated = allocatedByRejections(call);
        assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + CALLS + " rejections");
    }

    private static long allocatedByRejections(java.util.function.BiFunction<CircuitBreaker, String, String> call) {
        try (CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1).resetTimeout(Duration.ofHours(1))
                .build()) {
            String op = "rejected";
            b.recordFailure(op);
            assertTrue(b.state(op).open());
            Measured m = measured(() -> call.apply(b, op).length());
            assertEquals(2L * CALLS * "fallback".length(), m.sink());
            assertEquals(2L * CALLS, b.metrics(op).rejections());
            return m.allocatedBytes();
        }
    }

    /** What {@link #measured} saw: the bytes the measured calls allocated, and the sum of every call's answer. */
    private record Measured(long allocatedBytes, long sink) {
    }

    /**
     * Runs {@code call} {@link #CALLS} times as a warm-up (it creates the entry and lets the JIT compile the path),
     * then {@link #CALLS} times more under this thread's allocation counter.
     */
    private static Measured measured(IntSupplier call) {
        com.sun.management.ThreadMXBean threads = allocationCounter();
        long sink = 0;
        for (int i = 0; i < CALLS; i++) {
            sink += call.getAsInt();
        }
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < CALLS; i++) {
            sink += call.getAsInt();
        }
        return new Measured(threads.getThreadAllocatedBytes(tid) - before, sink);
    }

    private static com.sun.management.ThreadMXBean allocationCounter() {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assumeTrue(mx instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
                "thread allocation accounting is off");
        return threads;
    }

    private static void measure(boolean storedState) {
        measure(storedState, null);
    }

    private static void measure(boolean storedState, CircuitBreakerObserver observer) {
        measure(storedState, observer, CircuitBreaker::ofDefaults);
    }

    private static void measure(boolean storedState, CircuitBreakerObserver observer,
            Supplier<CircuitBreaker> breakers) {
        try (CircuitBreaker b = breakers.get()) {
            if (observer != null) {
                b.addObserver(observer);
            }
            CheckedSupplier<String, RuntimeException> call = () -> "ok";
            String op = "healthy";
            if (storedState) {
                b.recordFailure(op);
                b.recordSuccess(op); // cleared: a stored closed state with failures = 0
                assertEquals(0, b.state(op).failures());
                assertTrue(b.state(op).lastFailureAt() != 0 || b.state(op).version() == 0);
            }
            Measured m = measured(() -> b.execute(op, call).length());
            assertEquals(2L * CALLS * 2, m.sink());
            assertTrue(m.allocatedBytes() < SLACK_BYTES,
                    m.allocatedBytes() + " bytes allocated over " + CALLS + " healthy calls");
            assertEquals(2L * CALLS, b.metrics(op).successes());
        }
    }
}

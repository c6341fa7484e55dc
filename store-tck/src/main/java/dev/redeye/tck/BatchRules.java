package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.need;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.Store;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R14 (AtomicUpdates with OutcomeBatches, batches of outcomes): R14.1 (in {@link ModelRules}, with the
 * model's scenarios) holds a batch to its outcomes one by one; R14.2 holds concurrent batches to exact counts. Run
 * by {@link StoreTck}.
 */
interface BatchRules extends TckContext {

    /**
     * R14.2 8 threads over 2 clients apply 300 batches each of 1 to 16 outcomes (successes, failures, slow calls)
     * to one time window, at one instant: the window holds every outcome, exactly once. If this fails, a batch is
     * not one atomic step (a get-then-put loses the batches applied between its read and its write) or an outcome
     * of a batch is dropped or counted twice.
     */
    @Test
    @DisplayName("R14.2 8 threads over 2 clients apply batches concurrently: every outcome is counted once")
    default void r14_2_concurrentBatchesAreCountedExactly() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        need(clients[0], OutcomeBatches.class);
        String k = key("batches");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 60).failureRateThreshold(100)
                .slowCallRateThreshold(100).minimumNumberOfCalls(1_000_000).jitter(0).build();
        int threads = 8;
        int each = 300;
        AtomicLong calls = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong slow = new AtomicLong();
        long seed = seed();
        race(threads, clients, (t, c) -> {
            AtomicUpdates up = updates(c);
            SplittableRandom r = new SplittableRandom(seed + t);
            long[] packed = new long[16];
            for (int i = 0; i < each; i++) {
                int n = 1 + r.nextInt(16);
                for (int j = 0; j < n; j++) {
                    boolean success = r.nextInt(3) != 0;
                    boolean isSlow = r.nextInt(4) == 0;
                    packed[j] = AtomicOperation.packOutcome(success, isSlow, T0);
                    failures.addAndGet(success ? 0 : 1);
                    slow.addAndGet(isSlow ? 1 : 0);
                }
                calls.addAndGet(n);
                up.apply(k, AtomicOperation.outcomes(packed, n, null), p, T0);
            }
        });
        BreakerState s = clients[1].get(k).orElseThrow();
        assertFalse(s.open(), "the rates never reach the threshold's minimum calls");
        SlidingWindow w = s.window();
        assertEquals(calls.get(), w.calls(), "calls in the window after " + threads * each
                + " concurrent batches (lost batches?)");
        assertEquals(failures.get(), w.failures(), "failures in the window");
        assertEquals(slow.get(), w.slowCalls(), "slow calls in the window");
    }
}

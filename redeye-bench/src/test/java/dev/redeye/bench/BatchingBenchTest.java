package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The batching section's own arithmetic, which its verdicts rest on: the README's detection and write bounds, the
 * choice of maxDelay, and how a caller that fell behind its schedule skips ahead. No service, no timing.
 */
class BatchingBenchTest {

    @Test
    void theErrorRateNeedsSevenFailuresFromZeroAtTheDefaults() {
        // 1 - 0.9^6 = 0.469 < 0.5 <= 1 - 0.9^7 = 0.522
        assertEquals(7, BatchingBench.failuresToOpen(0.5, 0.9));
        assertEquals(1, BatchingBench.failuresToOpen(0.05, 0.9));
        assertEquals(22, BatchingBench.failuresToOpen(0.9, 0.9)); // 1 - 0.9^21 = 0.891, 1 - 0.9^22 = 0.902
    }

    @Test
    void theStatedBoundIsTheFailuresAtTheFleetsRatePlusMaxDelay() {
        assertEquals(100.875, BatchingBench.statedBoundMillis(7, 8_000, 100L), 1e-9);
        assertEquals(0.875, BatchingBench.statedBoundMillis(7, 8_000, null), 1e-9);
        // README's write bound: N / maxDelay, plus a full batch of 1,024 per 1,024 calls
        assertEquals(200 + 10, BatchingBench.writeBoundPerSecond(20, 100, 10_240), 1e-9);
    }

    @Test
    void maxDelayIsTheSmallestRungThatKeepsTheFleetAtHalfTheCeiling() {
        assertEquals(100, BatchingBench.chooseDelayMillis(10, 4_777)); // 100 writes/s <= 2,388
        assertEquals(100, BatchingBench.chooseDelayMillis(10, 200)); // 100 <= 100
        assertEquals(200, BatchingBench.chooseDelayMillis(10, 199)); // 100 > 99.5, 50 <= 99.5
        assertEquals(500, BatchingBench.chooseDelayMillis(10, 94)); // 50 > 47, 20 <= 47
        assertEquals(10_000, BatchingBench.chooseDelayMillis(1_000, 1)); // none fits: the longest the builder takes
        for (long d : BatchingBench.DELAY_LADDER_MILLIS) {
            assertTrue(d >= 1 && d <= 10_000, "recordBatching takes 1 ms to 10 s: " + d);
        }
    }

    @Test
    void aCallerBehindSkipsToItsFirstSlotAtOrAfterNowAndKeepsItsOwnSlots() {
        assertEquals(3, BatchingBench.catchUp(3, 16, 3), "on time");
        assertEquals(3, BatchingBench.catchUp(3, 16, 0), "early");
        for (long now = 4; now < 200; now++) {
            long next = BatchingBench.catchUp(3, 16, now);
            assertEquals(3, next % 16, "a caller keeps its slots (every 16th from 3): " + next);
            assertTrue(next >= now && next - 16 < now, "the first of its slots at or after " + now + ": " + next);
        }
    }

    @Test
    void theSectionRunsOnlyWhenNamed() {
        assertFalse(BenchEnv.parse(new String[0]).runs("batching"));
        assertTrue(BenchEnv.parse(new String[] {"--sections", "batching"}).runs("batching"));
    }
}

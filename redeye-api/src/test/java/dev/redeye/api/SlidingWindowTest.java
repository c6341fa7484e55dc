package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class SlidingWindowTest {
    private static final long T0 = 1_764_800_000_000L;

    @Test
    void aCountWindowKeepsTheLastNOutcomesInARing() {
        SlidingWindow w = SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 5);
        assertEquals("c5.0.", w.encode());
        w = w.record(true, false, T0).record(false, false, T0).record(false, true, T0);
        assertEquals("c5.3.102", w.encode());
        assertEquals(3, w.calls());
        assertEquals(1, w.failures());
        assertEquals(1, w.slowCalls());
        w = w.record(true, true, T0).record(false, false, T0).record(false, false, T0).record(false, false, T0);
        // seven outcomes in five slots: the two oldest (failure, success) were replaced
        assertEquals("c5.7.00230", w.encode());
        assertEquals(5, w.calls());
        assertEquals(1, w.failures());
        assertEquals(2, w.slowCalls());
        assertEquals(7, w.position());
    }

    @Test
    void aTimeWindowRollsItsBucketsByWallClockAndCountsALateClockInTheNewestBucket() {
        SlidingWindow w = SlidingWindow.empty(SlidingWindowType.TIME_BASED, 3);
        assertEquals(1, w.bucketSeconds());
        assertEquals(3, w.bucketCount());
        long b0 = T0 / 1000;
        w = w.record(true, false, T0).record(false, false, T0 + 999);
        assertEquals("t3." + b0 + "...2-1", w.encode());
        w = w.record(false, true, T0 + 1000);
        assertEquals("t3." + (b0 + 1) + "..2-1.1-0-1", w.encode());
        // a caller whose clock is two seconds behind: counted in the newest bucket, nothing lost
        w = w.record(true, false, T0 - 1000);
        assertEquals("t3." + (b0 + 1) + "..2-1.2-1-1", w.encode());
        assertEquals(4, w.calls());
        assertEquals(2, w.failures());
        // two seconds later the oldest bucket (b0) has left
        SlidingWindow later = w.rolledTo(T0 + 3000);
        assertEquals("t3." + (b0 + 3) + ".2-1-1..", later.encode());
        assertEquals(2, later.calls());
        assertSame(w, w.rolledTo(T0 + 1500));
        assertEquals(0, w.rolledTo(T0 + 60_000).calls());
    }

    @Test
    void longTimeWindowsUseWiderBucketsAndAtMost120() {
        assertEquals(1, SlidingWindow.bucketSeconds(120));
        assertEquals(2, SlidingWindow.bucketSeconds(121));
        SlidingWindow day = SlidingWindow.empty(SlidingWindowType.TIME_BASED, SlidingWindow.MAX_TIME_SECONDS);
        assertEquals(720, day.bucketSeconds());
        assertEquals(120, day.bucketCount());
        SlidingWindow odd = SlidingWindow.empty(SlidingWindowType.TIME_BASED, 241);
        assertEquals(3, odd.bucketSeconds());
        assertEquals(81, odd.bucketCount());
    }

    @Test
    void aSlowCallThatFailsIsMarkedInPlaceOnceAndOnlyWhileInTheWindow() {
        SlidingWindow w = SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 3).record(false, true, T0);
        long slot = w.position();
        SlidingWindow failed = w.slowCallFailed(slot, T0);
        assertEquals("c3.1.3", failed.encode());
        assertSame(failed, failed.slowCallFailed(slot, T0), "a slow call is counted as failed once");
        SlidingWindow moved = w.record(false, false, T0).record(false, false, T0).record(false, false, T0);
        assertSame(moved, moved.slowCallFailed(slot, T0), "the slot has left the window");

        SlidingWindow t = SlidingWindow.empty(SlidingWindowType.TIME_BASED, 2).record(false, true, T0);
        long bucket = t.position();
        SlidingWindow tf = t.record(false, false, T0 + 1000).slowCallFailed(bucket, T0 + 1000);
        assertEquals(1, tf.failures());
        assertEquals(2, tf.calls());
        assertEquals(0, t.slowCallFailed(bucket, T0 + 2000).failures(), "the bucket has left the window");
    }

    @Test
    void theStoredFormIsCanonicalAndRoundTrips() {
        Random r = new Random(42);
        for (int i = 0; i < 500; i++) {
            SlidingWindowType type = r.nextBoolean() ? SlidingWindowType.COUNT_BASED : SlidingWindowType.TIME_BASED;
            SlidingWindow w = SlidingWindow.empty(type, 1 + r.nextInt(type == SlidingWindowType.COUNT_BASED ? 40 : 300));
            long now = T0;
            for (int n = r.nextInt(200); n > 0; n--) {
                now += r.nextInt(3000);
                w = w.record(r.nextBoolean(), r.nextInt(4) == 0, now);
            }
            String text = w.encode();
            assertTrue(text.matches("[0-9a-z.-]+"), text);
            assertEquals(w, SlidingWindow.decode(text));
            assertEquals(text, SlidingWindow.decode(text).encode());
        }
    }

    @Test
    void malformedTextIsRefusedWithTheReason() {
        for (String bad : new String[] {"", "x5.0.", "c5.0", "c5.2.1", "c5.1.4", "c0.0.", "c1001.0.", "c5.-1.",
                "t3.10..", "t3.10...1-2", "t3.10...01", "t3.10...1-0", "t3.10...1-0-0", "t86401.0.", "c5.07.00000",
                "t3.10...1-1-1-1"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SlidingWindow.decode(bad),
                    bad);
            assertTrue(e.getMessage().startsWith("malformed sliding window"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> SlidingWindow.empty(SlidingWindowType.COUNT_BASED, 0));
        assertThrows(NullPointerException.class, () -> SlidingWindow.empty(null, 5));
    }

    /** The counter against a plain list of outcomes, on random sequences: counts, positions and tripsWith. */
    @Test
    void theCounterAgreesWithAListOfOutcomes() {
        Random r = new Random(7);
        for (int round = 0; round < 300; round++) {
            SlidingWindowType type = r.nextBoolean() ? SlidingWindowType.COUNT_BASED : SlidingWindowType.TIME_BASED;
            int size = 1 + r.nextInt(type == SlidingWindowType.COUNT_BASED ? 12 : 400);
            Policy p = Policy.builder().slidingWindow(type, size).minimumNumberOfCalls(1 + r.nextInt(6))
                    .failureRateThreshold(1 + r.nextInt(100)).slowCallRateThreshold(1 + r.nextInt(100)).build();
            SlidingWindow.Counter c = new SlidingWindow.Counter(SlidingWindow.empty(type, size));
            java.util.List<long[]> seen = new java.util.ArrayList<>(); // {bucket, failed, slow}
            long width = SlidingWindow.bucketSeconds(size) * 1000L;
            int buckets = type == SlidingWindowType.TIME_BASED ? SlidingWindow.empty(type, size).bucketCount() : 0;
            long head = 0;
            long now = T0;
            for (int n = 0; n < 120; n++) {
                now += r.nextInt(4) == 0 ? -r.nextInt(3000) : r.nextInt((int) Math.min(width * 3, 90_000));
                boolean failed = r.nextBoolean();
                boolean slow = r.nextInt(3) == 0;
                long bucket = Math.max(Math.floorDiv(now, width), head);
                java.util.List<long[]> after = new java.util.ArrayList<>(seen);
                after.add(new long[] {bucket, failed ? 1 : 0, slow ? 1 : 0});
                long newHead = bucket;
                java.util.List<long[]> in = type == SlidingWindowType.COUNT_BASED
                        ? after.subList(Math.max(0, after.size() - size), after.size())
                        : after.stream().filter(o -> o[0] > newHead - buckets).toList();
                int calls = in.size();
                int fails = (int) in.stream().filter(o -> o[1] == 1).count();
                int slows = (int) in.stream().filter(o -> o[2] == 1).count();
                boolean trips = calls >= p.windowMinimumCalls() && (fails * 100.0 >= p.failureRateThreshold() * calls
                        || slows * 100.0 >= p.slowCallRateThreshold() * calls);
                assertEquals(trips, c.tripsWith(failed, slow, now, p), "round " + round + " step " + n);
                c.record(failed, slow, now);
                seen = after;
                head = newHead;
                assertEquals(calls, c.calls(), "calls, round " + round + " step " + n);
                assertEquals(fails, c.failures(), "failures, round " + round + " step " + n);
                assertEquals(slows, c.slowCalls(), "slow, round " + round + " step " + n);
                SlidingWindow w = c.snapshot();
                assertEquals(w, SlidingWindow.decode(w.encode()));
                assertEquals(calls, w.calls());
            }
        }
    }
}

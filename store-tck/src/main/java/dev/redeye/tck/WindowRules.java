package dev.redeye.tck;

import static dev.redeye.tck.Scripted.assertCounts;
import static dev.redeye.tck.Scripted.assertOpensAt;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R10 (AtomicUpdates, sliding windows): the count and time window arithmetic of {@code Transitions} on
 * listed sequences over two clients, bucket roll-over in virtual time, the window's life (kept while open, emptied
 * on close, restarted for another shape) and atomicity. Run by {@link StoreTck}.
 */
interface WindowRules extends TckContext {
    /** A sliding-window policy without jitter: failure rate {@code threshold} %, {@code minimum} calls. */
    static Policy window(SlidingWindowType type, int size, double threshold, int minimum) {
        return Policy.builder().slidingWindow(type, size).failureRateThreshold(threshold)
                .minimumNumberOfCalls(minimum).jitter(0.0).build();
    }

    /** A count window (see {@link #window}). */
    static Policy count(int size, double threshold, int minimum) {
        return window(SlidingWindowType.COUNT_BASED, size, threshold, minimum);
    }

    /** A time window of {@code seconds} (see {@link #window}). */
    static Policy time(int seconds, double threshold, int minimum) {
        return window(SlidingWindowType.TIME_BASED, seconds, threshold, minimum);
    }

    /** Plays {@code outcomes} on a new key and fails unless the breaker opens exactly at {@code openAt}. */
    private void opensAt(Policy p, String title, String outcomes, int openAt, String why, long... at) {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("window-" + Integer.toHexString((title + outcomes).hashCode()));
        Scripted s = new Scripted(clients, k, title);
        assertOpensAt(openAt, s.play(p, outcomes, at), title + ", outcomes " + outcomes, why);
    }

    /**
     * R10.1 A count window: on listed sequences every call equals Transitions and the breaker opens exactly at
     * the outcome that reaches the failure rate once the window holds minimumNumberOfCalls outcomes (capped at the
     * window's size), the rate compared with {@code >=}, the oldest outcome leaving a full ring. If this fails,
     * check the store's count window: the ring of slots, the minimum and the comparison.
     */
    @Test
    @DisplayName("R10.1 count window: opens exactly at the outcome reaching the rate once the minimum is met")
    default void r10_1_countWindowArithmetic() {
        opensAt(count(5, 50, 4), "count window of 5, threshold 50 %, minimum 4", "FFFS", 4,
                "3 of 4 failed; the first three reach the rate before the minimum of 4 is met");
        opensAt(count(3, 50, 10), "count window of 3, threshold 50 %, minimumNumberOfCalls 10", "SFF", 3,
                "the minimum is capped at the window's size, 3: 2 of 3 failed");
        opensAt(count(5, 40, 5), "count window of 5, threshold 40 %, minimum 5", "SSSFF", 5,
                "2 of 5 is exactly 40 %: the rate is compared with >=, not >");
        opensAt(count(4, 75, 4), "count window of 4, threshold 75 %, minimum 4", "FSSSFFF", 7,
                "the ring holds the last 4 outcomes: after the sixth S S F F (50 %), after the seventh S F F F (75 %)");
    }

    /**
     * R10.2 A time window: on listed sequences every call equals Transitions and the breaker opens exactly at the
     * outcome that reaches the rate once the minimum is met, for a window of 1-second buckets (10 s) and one of
     * 3-second buckets (300 s). If this fails, check the store's time window: bucket width ceil(size / 120) s,
     * bucket number floorDiv(now, width), the sums over the buckets.
     */
    @Test
    @DisplayName("R10.2 time window: opens exactly at the outcome reaching the rate once the minimum is met")
    default void r10_2_timeWindowArithmetic() {
        opensAt(time(10, 50, 4), "time window of 10 s, threshold 50 %, minimum 4", "SFSF", 4,
                "2 of 4 within 10 s is exactly 50 %", 0, 300, 2_000, 5_000);
        opensAt(time(300, 60, 5), "time window of 300 s (3 s buckets), threshold 60 %, minimum 5", "FSFSF", 5,
                "3 of 5 within 300 s is exactly 60 %", 0, 2_999, 50_000, 150_000, 250_000);
    }

    /**
     * R10.3 Time buckets roll over in virtual time: outcomes older than the window stop counting, and an outcome
     * whose now falls in an older bucket than the window's newest (a caller whose clock is behind) is counted in
     * the newest bucket. If this fails, check how the store rolls the window to now's bucket (emptying the buckets
     * it passes) and that it never moves the window back.
     */
    @Test
    @DisplayName("R10.3 time window: old buckets roll out; a caller whose clock is behind counts in the newest bucket")
    default void r10_3_bucketsRollInVirtualTime() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = time(3, 60, 3);
        Scripted s = new Scripted(clients, key("roll"), "time window of 3 s, threshold 60 %, minimum 3");
        assertOpensAt(6, s.play(p, "FSSFFF", 0, 1_000, 2_000, 3_500, 3_600, 3_700),
                "outcomes F S S F F F at T0 + 0, 1000, 2000, 3500, 3600, 3700 ms",
                "the first failure left the window at T0 + 3000: S S F F is 50 %, S S F F F is 60 %");
        Policy never = time(3, 100, 1_000);
        Scripted behind = new Scripted(clients, key("behind"), "time window of 3 s, minimum never met");
        behind.play(never, "S", 5_000);
        long newest = behind.model().window().position();
        behind.play(never, "F", 2_000);
        assertEquals(newest, behind.model().window().position(), "an outcome at T0 + 2000 after one at T0 + 5000 "
                + "must not move the window back (its newest bucket)");
        assertCounts(behind.model(), 2, 1, 0, "after S at T0 + 5000 and F at T0 + 2000 (clock behind)");
        behind.play(never, "S", 7_900);
        assertCounts(behind.model(), 3, 1, 0, "at T0 + 7900 the failure counted in the bucket of T0 + 5000 still "
                + "counts");
        behind.play(never, "S", 8_000);
        assertCounts(behind.model(), 2, 0, 0, "at T0 + 8000 the bucket of T0 + 5000 left the window");
    }

    /**
     * R10.4 The window is kept, unchanged, while the breaker is open (failures and successes while open do not
     * touch it), emptied when it closes (by a trial or by force), and a window of another type or size than the
     * policy's restarts empty. If this fails, check the open branch (no write to the window), the closing rules
     * (window removed) and the shape check before recording.
     */
    @Test
    @DisplayName("R10.4 the window is kept while open, emptied on close, and restarted for another shape")
    default void r10_4_windowLife() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = count(4, 50, 2);
        Scripted s = new Scripted(clients, key("life"), "count window of 4, threshold 50 %, minimum 2");
        assertOpensAt(2, s.play(p, "FF"), "F F", "2 of 2 failed");
        SlidingWindow w = s.model().window();
        s.play(p, "FSsf", 100, 110, 120, 130);
        assertEquals(w, s.model().window(), "outcomes while open must leave the window as it was");
        StateChange half = s.force(BreakerStatus.HALF_OPEN, p, T0 + 200);
        assertEquals(w, half.state().window(), "force HALF_OPEN keeps the window of the open breaker");
        StateChange closed = s.trialSucceeded(half.state().version(), p, T0 + 300);
        assertEquals(TransitionKind.CLOSED, closed.transition(), "the trial success closes");
        assertNull(closed.state().window(), "the window must be emptied when the breaker closes");
        s.play(p, "F", 400);
        assertCounts(s.model(), 1, 1, 0, "the first outcome after closing starts a new window");
        s.force(BreakerStatus.FORCED_OPEN, p, T0 + 500);
        StateChange reset = s.force(BreakerStatus.CLOSED, p, T0 + 600);
        assertNull(reset.state().window(), "a forced close must empty the window");

        Scripted shape = new Scripted(clients, key("shape"), "windows of several shapes");
        shape.play(count(5, 100, 5), "SSF");
        assertCounts(shape.model(), 3, 1, 0, "count window of 5 after S S F");
        shape.play(count(6, 100, 6), "F", 100);
        assertEquals("c6.1.1", shape.model().window().encode(), "a count window of 6 after one of 5 restarts empty");
        shape.play(time(10, 100, 10), "S", 200);
        assertTrue(shape.model().window().hasShape(SlidingWindowType.TIME_BASED, 10), "a time window replaces it: "
                + shape.model().window());
        assertCounts(shape.model(), 1, 0, 0, "a time window of 10 s after a count window restarts empty");
        shape.play(count(6, 100, 6), "F", 300);
        assertEquals("c6.1.1", shape.model().window().encode(), "back to a count window of 6: restarts empty");
    }

    /**
     * R10.5 8 threads over 2 clients record 100 outcomes each into a count window of 1,000 and into a time window
     * of 60 s (minimum never met): afterwards each window holds exactly 800 outcomes and exactly the failures
     * recorded. If this fails, recording into a window is not one atomic read-modify-write in the store.
     */
    @Test
    @DisplayName("R10.5 8 threads record 800 outcomes into a window: the counts are exact")
    default void r10_5_concurrentOutcomesAreCountedExactly() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String ck = key("window-count");
        String tk = key("window-time");
        Policy cp = count(1_000, 50, 1_000);
        Policy tp = time(60, 50, 100_000);
        int threads = 8;
        int each = 100;
        race(threads, clients, (t, c) -> {
            AtomicUpdates up = updates(c);
            for (int i = 0; i < each; i++) {
                boolean success = (i + t) % 3 != 0;
                boolean slow = (i + t) % 5 == 0;
                up.apply(ck, AtomicOperation.outcome(success, slow), cp, T0 + i);
                up.apply(tk, AtomicOperation.outcome(success, slow), tp, T0 + i);
            }
        });
        int failures = 0;
        int slow = 0;
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < each; i++) {
                failures += (i + t) % 3 != 0 ? 0 : 1;
                slow += (i + t) % 5 == 0 ? 1 : 0;
            }
        }
        BreakerState c = clients[1].get(ck).orElseThrow();
        BreakerState t = clients[0].get(tk).orElseThrow();
        assertEquals(800L, c.window().position(), "outcomes recorded into the count window (lost updates?)");
        assertCounts(c, 800, failures, slow, "the count window after 800 concurrent outcomes (lost updates?)");
        assertCounts(t, 800, failures, slow, "the time window after 800 concurrent outcomes (lost updates?)");
        assertEquals(false, c.open() || t.open(), "no window may open: its minimum is never met");
    }
}

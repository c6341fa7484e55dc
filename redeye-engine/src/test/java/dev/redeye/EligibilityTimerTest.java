package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Local mode on the system clock: an open state is rejected from its {@link Gate.LocalOpen} view without a
 * clock read until the {@link EngineTimer} marks the view due, then the clock decides. Real time, short
 * windows; the assertions are about order (never admitted before eligibility, admitted after it), not speed.
 */
class EligibilityTimerTest {
    private static final String OP = "inventory";

    @Test
    void theViewBecomesDueAtEligibilityAndTheNextCallIsTheTrial() throws InterruptedException {
        try (CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1).jitter(0)
                .resetTimeout(Duration.ofMillis(300)).build()) {
            b.recordFailure(OP);
            BreakerState opened = b.state(OP);
            assertTrue(opened.open());
            long eligibleAt = opened.openedAt() + 300;
            assertEquals("fallback", b.executeOrElse(OP, () -> "live", "fallback"));
            Gate.LocalOpen view = entry(b).localOpen;
            assertNotNull(view);
            assertSame(opened, view.state);
            assertEquals(eligibleAt, view.eligibleAt);
            if (System.currentTimeMillis() < eligibleAt - 50) {
                assertFalse(view.due, "due before eligibility");
            }
            long[] ranAt = new long[1];
            long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            String r;
            do {
                r = b.executeOrElse(OP, () -> {
                    ranAt[0] = System.currentTimeMillis();
                    return "live";
                }, "fallback");
                if ("fallback".equals(r)) {
                    Thread.sleep(5);
                }
            } while ("fallback".equals(r) && System.nanoTime() < giveUp);
            assertEquals("live", r, "the view never became due: the breaker kept rejecting past eligibility");
            assertTrue(view.due);
            assertTrue(ranAt[0] >= eligibleAt, "admitted " + (eligibleAt - ranAt[0]) + " ms before eligibility");
            assertEquals(BreakerStatus.CLOSED, b.status(OP), "the trial succeeded");
            assertEquals(1, b.metrics(OP).trials());
        }
    }

    @Test
    void aForcedOpenViewIsNeverDueAndItsRejectionSaysSo() {
        try (CircuitBreaker b = CircuitBreaker.builder().openCacheRefresh(Duration.ofSeconds(3)).build()) {
            b.forceOpen(OP);
            CircuitOpenException e = assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "live"));
            assertEquals(BreakerStatus.FORCED_OPEN, e.status());
            assertEquals(java.util.Optional.empty(), e.retryAfter(), "no trial until a reset: no retry time");
            assertEquals("forced", b.executeOrElse(OP, () -> "live", "forced"));
            Gate.LocalOpen view = entry(b).localOpen;
            assertEquals(Long.MAX_VALUE, view.eligibleAt);
            assertFalse(view.due);
            b.reset(OP);
            assertEquals("live", b.executeOrElse(OP, () -> "live", "forced"), "a new state is not the view's");
        }
    }

    @Test
    void aNewOpenPeriodGetsANewView() {
        try (CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1).jitter(0)
                .resetTimeout(Duration.ofHours(1)).build()) {
            b.recordFailure(OP);
            assertEquals("fallback", b.executeOrElse(OP, () -> "live", "fallback"));
            Gate.LocalOpen first = entry(b).localOpen;
            b.forceOpen(OP);
            CircuitOpenException e = assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "live"));
            assertEquals(BreakerStatus.FORCED_OPEN, e.status(), "not the stale OPEN view");
            assertTrue(entry(b).localOpen != first);
        }
    }

    /** The breaker's entry for {@link #OP} (white box: the view is not visible through the API). */
    private static OperationState entry(CircuitBreaker b) {
        try {
            java.lang.reflect.Field f = CircuitBreaker.class.getDeclaredField("operations");
            f.setAccessible(true);
            return ((Operations) f.get(b)).peek(OP);
        } catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }
}

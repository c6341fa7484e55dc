package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A forced-open breaker admits no trial until an operator resets it, so its rejections carry no retry time
 * (never the open window nor the open-cache refresh interval), in local and distributed mode, on the system
 * clock and on a virtual one; a breaker that opened by itself still says when a trial may be tried.
 */
class ForcedOpenRejectionTest extends BreakersOverInMemoryStore {
    private static final String OP = "payments";

    private CircuitBreaker build(CircuitBreakerBuilder b) {
        return keep(b.resetTimeout(Duration.ofSeconds(10)).jitter(0));
    }

    private static void assertNoRetryTime(CircuitOpenException e) {
        assertEquals(BreakerStatus.FORCED_OPEN, e.status());
        assertEquals(Optional.empty(), e.retryAfter());
        assertEquals(-1, e.retryAfterMillis());
        assertFalse(e.getMessage().contains("retry after"), e.getMessage());
        assertTrue(e.getMessage().contains("until it is reset"), e.getMessage());
    }

    @Test
    void localModeOnTheSystemClockAndOnAVirtualOne() {
        for (CircuitBreaker b : new CircuitBreaker[] {build(CircuitBreaker.builder()),
            build(CircuitBreaker.builder().clock(new MutableClock()))}) {
            b.forceOpen(OP);
            assertNoRetryTime(rejected(b, OP));
            assertNoRetryTime(rejected(b, OP)); // from the operation's cached view too
        }
    }

    @Test
    void distributedModeFromTheReadAndFromTheOpenView() {
        MutableClock clock = new MutableClock();
        CircuitBreaker b = build(CircuitBreaker.builder().clock(clock).store(backend.newClient()));
        CircuitBreaker operator = build(CircuitBreaker.builder().clock(clock).store(backend.newClient()));
        operator.forceOpen(OP);
        assertNoRetryTime(rejected(b, OP)); // read from the store
        assertNoRetryTime(rejected(b, OP)); // from the open view, no read
        clock.advance(Duration.ofSeconds(3)); // past the open-cache refresh: re-read
        assertNoRetryTime(rejected(b, OP));
        assertNoRetryTime(b.tryAcquire(OP).rejection() instanceof CircuitOpenException e ? e : null);
    }

    @Test
    void aBreakerThatOpenedByItselfStillSaysWhenATrialMayBeTried() {
        MutableClock clock = new MutableClock();
        CircuitBreaker b = build(CircuitBreaker.builder().clock(clock).failureThreshold(1));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(4));
        CircuitOpenException e = rejected(b, OP);
        assertEquals(BreakerStatus.OPEN, e.status());
        assertEquals(Optional.of(Duration.ofSeconds(6)), e.retryAfter());
        assertEquals(6_000, e.retryAfterMillis());
        assertEquals("circuit 'payments' is OPEN; retry after 6000 ms", e.getMessage());
    }
}

package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link CircuitOpenException}'s two constructors answer alike; the millisecond one makes its Duration on demand. */
class CircuitOpenExceptionTest {

    @Test
    void theMillisecondConstructorAnswersLikeTheDurationOne() {
        CircuitOpenException ms = new CircuitOpenException("op", BreakerStatus.OPEN, 1_500, false);
        CircuitOpenException d = new CircuitOpenException("op", BreakerStatus.OPEN, Duration.ofMillis(1_500), false);
        assertEquals(Optional.of(Duration.ofMillis(1_500)), ms.retryAfter());
        assertSame(ms.retryAfter(), ms.retryAfter(), "made once");
        assertEquals(1_500, ms.retryAfterMillis());
        assertEquals(1_500, d.retryAfterMillis());
        assertEquals(d.getMessage(), ms.getMessage());
        assertEquals("circuit 'op' is OPEN; retry after 1500 ms", ms.getMessage());
        assertEquals(0, ms.getStackTrace().length);
        assertEquals(BreakerStatus.OPEN, ms.status());
        assertEquals("op", ms.operation());
    }

    @Test
    void negativeAndMissingWaitsReadAsZeroAndHugeOnesSaturate() {
        assertEquals(Optional.of(Duration.ZERO),
                new CircuitOpenException("op", BreakerStatus.HALF_OPEN, -5, false).retryAfter());
        assertEquals(Optional.of(Duration.ZERO),
                new CircuitOpenException("op", BreakerStatus.HALF_OPEN, (Duration) null, false).retryAfter());
        assertEquals(0, new CircuitOpenException("op", BreakerStatus.OPEN, Duration.ofMillis(-1), false)
                .retryAfterMillis());
        CircuitOpenException huge = new CircuitOpenException("op", BreakerStatus.OPEN,
                Duration.ofSeconds(Long.MAX_VALUE), false);
        assertEquals(Long.MAX_VALUE, huge.retryAfterMillis());
        assertEquals(Optional.of(Duration.ofSeconds(Long.MAX_VALUE)), huge.retryAfter(),
                "the given Duration is kept as is");
    }

    @Test
    void aForcedOpenRejectionHasNoRetryTimeWhateverWaitItWasGiven() {
        for (CircuitOpenException e : new CircuitOpenException[] {
            new CircuitOpenException("op", BreakerStatus.FORCED_OPEN, 2_000, false),
            new CircuitOpenException("op", BreakerStatus.FORCED_OPEN, Duration.ofSeconds(2), false),
            new CircuitOpenException("op", BreakerStatus.FORCED_OPEN, (Duration) null, false)}) {
            assertEquals(Optional.empty(), e.retryAfter());
            assertEquals(CircuitOpenException.NO_RETRY, e.retryAfterMillis());
            assertEquals("circuit 'op' is FORCED_OPEN; no trial until it is reset", e.getMessage());
        }
    }

    @Test
    void badArgumentsFailClearly() {
        assertEquals("operation", assertThrows(NullPointerException.class,
                () -> new CircuitOpenException(null, BreakerStatus.OPEN, 1, false)).getMessage());
        assertEquals("status", assertThrows(NullPointerException.class,
                () -> new CircuitOpenException("op", null, 1, false)).getMessage());
    }

    @Test
    void aStackTraceIsFilledInOnlyWhenAskedFor() {
        assertTrue(new CircuitOpenException("op", BreakerStatus.OPEN, 1, true).getStackTrace().length > 0);
    }
}

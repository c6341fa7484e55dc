package dev.redeye.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.StoreException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void boundsDoubleFromTheBaseUpToTheCap() {
        Backoff b = new Backoff(Duration.ofMillis(2), Duration.ofMillis(32));
        assertEquals(2_000_000L, b.boundNanos(1));
        assertEquals(4_000_000L, b.boundNanos(2));
        assertEquals(16_000_000L, b.boundNanos(4));
        assertEquals(32_000_000L, b.boundNanos(5));
        assertEquals(32_000_000L, b.boundNanos(6));
        assertEquals(32_000_000L, b.boundNanos(Integer.MAX_VALUE), "no overflow however many attempts");
    }

    @Test
    void aPauseNeverPassesItsDeadline() {
        Backoff b = new Backoff(Duration.ofSeconds(10), Duration.ofSeconds(10));
        long start = System.nanoTime();
        b.pause(1, start + Duration.ofMillis(20).toNanos(), "a test");
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "cut at the deadline, not 10 s");
    }

    @Test
    void anInterruptedPauseIsAStoreErrorAndKeepsTheFlag() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1));
        Thread.currentThread().interrupt();
        try {
            StoreException e = null;
            for (int i = 0; i < 100 && e == null; i++) { // a pause of 0 does not sleep: draw until one does
                Thread.currentThread().interrupt();
                try {
                    b.pause(1, Backoff.NO_DEADLINE, "a test");
                } catch (StoreException thrown) {
                    e = thrown;
                }
            }
            assertTrue(e != null && e.getMessage().contains("a test"), String.valueOf(e));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ZERO, Duration.ofMillis(1)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofMillis(2), Duration.ofMillis(1)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofMillis(1), Duration.ofMillis(1))
                .boundNanos(0));
    }
}

package dev.redeye;

import java.util.concurrent.atomic.AtomicLong;

/**
 * At most one log line per interval of the breaker's local time (a wall clock stepping back never silences a
 * log, and one stepping forward never floods it): lock-free, one compare-and-set when a line is due.
 */
final class LogLimiter {
    private final Monotonic time;
    private final long intervalNanos;
    private final AtomicLong last = new AtomicLong(Long.MIN_VALUE);

    LogLimiter(Monotonic time, long intervalMillis) {
        this.time = time;
        this.intervalNanos = Monotonic.ofMillis(intervalMillis);
    }

    /** Whether the caller may log now (and from now on the interval counts from here). */
    boolean due() {
        long now = time.nanos();
        long l = last.get();
        return (l == Long.MIN_VALUE || now - l >= intervalNanos) && last.compareAndSet(l, now);
    }
}

package dev.redeye;

/**
 * One breaker's local time: its {@link Ticker}, read relative to the breaker's creation, so that every local
 * instant is a small non-negative count of nanoseconds and an instant plus a duration never overflows, whatever
 * the ticker's origin. Every local deadline of the breaker (see "Time" in the {@linkplain dev.redeye package
 * documentation}) is an instant
 * of this time; stored times come from the configured clock and are never mixed with it.
 */
final class Monotonic {
    static final long NANOS_PER_MILLI = 1_000_000L;

    private final Ticker ticker;
    private final long origin;
    private final boolean system;

    Monotonic(Ticker ticker) {
        this.ticker = ticker;
        this.origin = ticker.read();
        this.system = ticker == Ticker.systemTicker();
    }

    /** Nanoseconds since this breaker was built. */
    long nanos() {
        return ticker.read() - origin;
    }

    /** Whether this is {@link System#nanoTime()}, the time real waits and JVM timers run on. */
    boolean isSystem() {
        return system;
    }

    /** {@code millis} as nanoseconds, saturated. */
    static long ofMillis(long millis) {
        return millis >= Long.MAX_VALUE / NANOS_PER_MILLI ? Long.MAX_VALUE : millis * NANOS_PER_MILLI;
    }

    /** {@code instant + nanos}, saturated (an instant of this time is never negative). */
    static long after(long instant, long nanos) {
        long r = instant + nanos;
        return r < instant ? Long.MAX_VALUE : r;
    }

    /** What remains of {@code nanos}, in whole milliseconds rounded up (a retryAfter is never early); 0 if none. */
    static long ceilMillis(long nanos) {
        return nanos <= 0 ? 0 : nanos / NANOS_PER_MILLI + (nanos % NANOS_PER_MILLI == 0 ? 0 : 1);
    }
}

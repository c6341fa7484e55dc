package dev.redeye.spi.support;

import dev.redeye.api.StoreException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The pause between the tries of a conditional write that lost a race (a compare-and-set, a conditional
 * update, a serialization failure): exponential with full jitter, capped, and never past a deadline. The
 * {@code n}-th pause is uniform in {@code [0, min(cap, base * 2^(n-1))]}, so writers that collided spread out
 * instead of colliding again in step.
 *
 * <p>Immutable and thread-safe.
 */
public final class Backoff {
    /** A deadline that never comes. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    private final long baseNanos;
    private final long capNanos;

    /**
     * @param base the bound of the first pause (&gt; 0)
     * @param cap  the largest bound of any pause (&ge; base)
     * @throws IllegalArgumentException if {@code base} is not positive or {@code cap} is below it
     * @throws NullPointerException     if an argument is null
     */
    public Backoff(Duration base, Duration cap) {
        this.baseNanos = Objects.requireNonNull(base, "base").toNanos();
        this.capNanos = Objects.requireNonNull(cap, "cap").toNanos();
        if (baseNanos <= 0 || capNanos < baseNanos) {
            throw new IllegalArgumentException("a backoff needs 0 < base <= cap, was base " + base + ", cap " + cap);
        }
    }

    /**
     * The bound of the pause after the {@code attempt}-th lost try: {@code min(cap, base * 2^(attempt-1))}.
     *
     * @throws IllegalArgumentException if {@code attempt} is below 1
     */
    public long boundNanos(int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempts count from 1, was " + attempt);
        }
        int doublings = Math.min(attempt - 1, 62);
        return baseNanos > (capNanos >> doublings) ? capNanos : Math.min(capNanos, baseNanos << doublings);
    }

    /**
     * Sleeps a random pause in {@code [0, boundNanos(attempt)]}, cut at {@code deadlineNanos} (a
     * {@link System#nanoTime()} value, or {@link #NO_DEADLINE}).
     *
     * @param what what is retried, for the exception of an interrupt
     * @throws StoreException if the thread is interrupted while pausing; its interrupt flag is set again
     */
    public void pause(int attempt, long deadlineNanos, String what) {
        long pause = ThreadLocalRandom.current().nextLong(boundNanos(attempt) + 1);
        if (deadlineNanos != NO_DEADLINE) {
            pause = Math.max(0, Math.min(pause, deadlineNanos - System.nanoTime()));
        }
        if (pause == 0) {
            Thread.onSpinWait();
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while retrying " + what, e);
        }
    }

    @Override
    public String toString() {
        return "Backoff[base " + Duration.ofNanos(baseNanos) + ", cap " + Duration.ofNanos(capNanos) + "]";
    }
}

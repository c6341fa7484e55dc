package dev.redeye.cli;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts of events per time bucket ("tick") of fixed width since a start time, for the simulation's chart:
 * {@link #add(long)} puts an event into the bucket of its {@link System#nanoTime()}; events before the start
 * or after the last bucket are left out. Thread-safe; counting allocates nothing.
 */
final class TickCounts {
    private final long startNanos;
    private final long tickNanos;
    private final AtomicLongArray counts;

    /**
     * @param startNanos the {@link System#nanoTime()} at which the first bucket starts
     * @param tickNanos  the width of a bucket, &gt; 0
     * @param ticks      how many buckets, &gt;= 1
     */
    TickCounts(long startNanos, long tickNanos, int ticks) {
        if (tickNanos <= 0 || ticks < 1) {
            throw new IllegalArgumentException("tickNanos must be > 0 and ticks >= 1, were " + tickNanos + ", "
                    + ticks);
        }
        this.startNanos = startNanos;
        this.tickNanos = tickNanos;
        this.counts = new AtomicLongArray(ticks);
    }

    /** The bucket width and count a run of {@code durationMillis} is charted with: 100 ms, wider past a minute. */
    static long tickMillisFor(long durationMillis) {
        // At most about 600 buckets: a 30-minute run counts per 3 s.
        long perBucket = (durationMillis + 599) / 600;
        return Math.max(100, (perBucket + 99) / 100 * 100);
    }

    /** Counts one event at {@code nanoTime}. */
    void add(long nanoTime) {
        long elapsed = nanoTime - startNanos;
        if (elapsed < 0) {
            return;
        }
        long i = elapsed / tickNanos;
        if (i < counts.length()) {
            counts.incrementAndGet((int) i);
        }
    }

    /** The counts so far, bucket by bucket. */
    long[] snapshot() {
        long[] out = new long[counts.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = counts.get(i);
        }
        return out;
    }
}

package dev.redeye.bench;

import java.util.Arrays;

/**
 * A fixed-capacity recorder of latency samples in nanoseconds, with exact percentiles (the samples are
 * sorted, not bucketed). Not thread-safe: one recorder per measuring thread.
 */
public final class Latencies {
    private final long[] samples;
    private int size;
    private boolean sorted;

    /**
     * @param capacity the most samples this recorder keeps
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public Latencies(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
        }
        samples = new long[capacity];
    }

    /**
     * Adds one sample.
     *
     * @throws IllegalStateException if the recorder is full
     */
    public void add(long nanos) {
        if (size == samples.length) {
            throw new IllegalStateException("recorder full at " + size + " samples");
        }
        samples[size++] = nanos;
        sorted = false;
    }

    /**
     * Adds every sample of {@code other}.
     *
     * @throws IllegalStateException if this recorder cannot hold them all
     */
    public void addAll(Latencies other) {
        if (size + other.size > samples.length) {
            throw new IllegalStateException("recorder of " + samples.length + " samples cannot take "
                    + other.size + " more after " + size);
        }
        System.arraycopy(other.samples, 0, samples, size, other.size);
        size += other.size;
        sorted = false;
    }

    /** The most samples this recorder keeps. */
    public int capacity() {
        return samples.length;
    }

    /** The number of samples. */
    public int size() {
        return size;
    }

    /**
     * The nearest-rank percentile.
     *
     * @param p in (0, 100]
     * @throws IllegalArgumentException if {@code p} is out of range
     * @throws IllegalStateException    if there are no samples
     */
    public long percentile(double p) {
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        }
        if (size == 0) {
            throw new IllegalStateException("no samples");
        }
        if (!sorted) {
            Arrays.sort(samples, 0, size);
            sorted = true;
        }
        int rank = (int) Math.ceil(p / 100.0 * size);
        return samples[Math.max(0, rank - 1)];
    }
}

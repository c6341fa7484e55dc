package dev.redeye.tck;

import dev.redeye.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A virtual {@link Clock} for tests: it stands still until moved with {@link #advance(Duration)} or
 * {@link #setMillis(long)}. Thread-safe; one instance can be shared by several breakers so that they see the
 * same virtual time. Reading it costs one volatile read.
 *
 * <p>It is also a {@link Ticker} reading the same virtual time in nanoseconds, so that a breaker on it runs its
 * local durations (refresh, holds, leases, cache age) on virtual time too:
 * {@code builder.clock(clock).ticker(clock)}. A ticker must never go backwards: do not move a clock back with
 * {@link #setMillis(long)} while a breaker uses it as its ticker.
 */
public final class MutableClock extends Clock implements Ticker {
    private final AtomicLong millis;
    private final ZoneId zone;

    /** A clock standing at {@code epochMillis}, in UTC. */
    public MutableClock(long epochMillis) {
        this(new AtomicLong(epochMillis), ZoneOffset.UTC);
    }

    private MutableClock(AtomicLong millis, ZoneId zone) {
        this.millis = millis;
        this.zone = zone;
    }

    /**
     * Moves the clock forward.
     *
     * @return the new time in epoch ms
     * @throws IllegalArgumentException if {@code by} is negative
     * @throws NullPointerException     if {@code by} is null
     */
    public long advance(Duration by) {
        Objects.requireNonNull(by, "by");
        if (by.isNegative()) {
            throw new IllegalArgumentException("a clock only moves forward; advance(" + by + ")");
        }
        return millis.addAndGet(by.toMillis());
    }

    /** Moves the clock forward by {@code ms} milliseconds; see {@link #advance(Duration)}. */
    public long advanceMillis(long ms) {
        return advance(Duration.ofMillis(ms));
    }

    /** Sets the clock to {@code epochMillis} (backwards too, for tests of clock skew). */
    public void setMillis(long epochMillis) {
        millis.set(epochMillis);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    /** The virtual time in nanoseconds ({@link #millis()} x 10^6), as a {@link Ticker}. */
    @Override
    public long read() {
        return millis.get() * 1_000_000L;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** A view of the same time source in another zone (moving one moves both). */
    @Override
    public Clock withZone(ZoneId newZone) {
        return new MutableClock(millis, Objects.requireNonNull(newZone, "zone"));
    }

    @Override
    public String toString() {
        return "MutableClock[" + instant() + "]";
    }
}

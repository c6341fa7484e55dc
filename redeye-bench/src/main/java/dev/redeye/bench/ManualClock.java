package dev.redeye.bench;

import dev.redeye.Ticker;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to: the virtual time of the fleet and recovery simulations, shared by
 * every breaker of a run (redeye and Resilience4j alike) so that minutes of open periods take milliseconds.
 * It is also a redeye {@link Ticker} on the same virtual time (ns), so that a redeye breaker's local durations
 * (open-view refresh, the hold after a lost claim) run on it too: {@code .clock(clock).ticker(clock)}.
 * Thread-safe; {@link #millis()} is one volatile read.
 */
public final class ManualClock extends Clock implements Ticker {
    private final AtomicLong millis;

    /** A clock reading {@code startMillis} (epoch ms). */
    public ManualClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    /**
     * Moves the clock forward.
     *
     * @throws IllegalArgumentException if {@code deltaMillis} is negative
     */
    public void advance(long deltaMillis) {
        if (deltaMillis < 0) {
            throw new IllegalArgumentException("a clock only moves forward: " + deltaMillis);
        }
        millis.addAndGet(deltaMillis);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    /** The virtual time in ns ({@link #millis()} x 10^6): never goes back, as {@link #advance} only moves forward. */
    @Override
    public long read() {
        return millis.get() * 1_000_000L;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** This clock itself: the zone does not matter to a breaker. */
    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}

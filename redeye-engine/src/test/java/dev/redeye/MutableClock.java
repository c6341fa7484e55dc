package dev.redeye;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Virtual time for tests: a wall clock and a monotonic {@link Ticker} that stand still until told.
 * {@link #advance} moves both (time passes); {@link #step} moves the wall clock alone, either way (an NTP step,
 * a resumed virtual machine), and the ticker does not notice. Pass it as both: {@code .clock(c).ticker(c)}.
 * Thread-safe.
 */
final class MutableClock extends Clock implements Ticker {
    private final AtomicLong millis;
    private final AtomicLong nanos = new AtomicLong();

    MutableClock() {
        this(1_700_000_000_000L);
    }

    MutableClock(long startMillis) {
        millis = new AtomicLong(startMillis);
    }

    /** Time passes: the clock and the ticker move by {@code d}. */
    void advance(Duration d) {
        advanceMillis(d.toMillis());
    }

    void advanceMillis(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("time only moves forward; step the wall clock instead: " + ms);
        }
        nanos.addAndGet(ms * 1_000_000L);
        millis.addAndGet(ms);
    }

    /** The wall clock alone steps by {@code d} (negative: back); the ticker stays. */
    void step(Duration d) {
        millis.addAndGet(d.toMillis());
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public long read() {
        return nanos.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}

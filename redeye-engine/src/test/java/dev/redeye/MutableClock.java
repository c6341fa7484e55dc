package dev.redeye;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A virtual clock for tests: starts at a fixed instant and moves only when told. Thread-safe. */
final class MutableClock extends Clock {
    private final AtomicLong millis;

    MutableClock() {
        this(1_700_000_000_000L);
    }

    MutableClock(long startMillis) {
        millis = new AtomicLong(startMillis);
    }

    void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }

    void advanceMillis(long ms) {
        millis.addAndGet(ms);
    }

    @Override
    public long millis() {
        return millis.get();
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

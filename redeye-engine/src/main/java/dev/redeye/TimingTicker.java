package dev.redeye;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The clock of sampled call timing: one daemon thread per JVM ("redeye-timing-ticker") that moves
 * {@link #epoch} every {@link #PERIOD_MILLIS} ms while at least one observer asks for
 * {@link CircuitBreakerObserver.CallTiming#SAMPLED} timing, and stops when the last one is removed.
 *
 * <p>Why a ticker and not a random draw or a clock read per call: deciding whether to time a call must cost
 * next to nothing on the healthy path (a call costs about 15 ns; one {@link System#nanoTime()} here about 28 ns,
 * a {@code ThreadLocalRandom} draw a few). Comparing an operation's last sampled epoch with this volatile
 * field, which changes 100 times a second, is one read of a cache line that is almost never written.
 */
final class TimingTicker {
    /** How often a sampled operation may time one more call. */
    static final long PERIOD_MILLIS = 10;

    /** Moves once per period while anyone samples; compared, never interpreted. */
    static volatile int epoch;

    private static int users;
    private static ScheduledThreadPoolExecutor ticker;

    private TimingTicker() {
    }

    /** One more sampling observer: starts the ticker for the first. */
    static synchronized void acquire() {
        if (users++ == 0) {
            ticker = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "redeye-timing-ticker");
                t.setDaemon(true);
                return t;
            });
            ticker.scheduleAtFixedRate(TimingTicker::tick, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** One sampling observer less: stops the ticker after the last. */
    static synchronized void release() {
        if (users > 0 && --users == 0) {
            ticker.shutdownNow();
            ticker = null;
        }
    }

    /** Whether the ticker thread runs (tests). */
    static synchronized boolean running() {
        return ticker != null;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField") // one writer: the ticker thread
    private static void tick() {
        epoch = epoch + 1;
    }
}

package dev.redeye.store.postgres;

import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's clean-up thread: runs {@link PostgresStore#purgeExpired()} every {@code interval} (each wait
 * drawn between half and one and a half intervals, so a fleet of instances does not purge in step), on one
 * daemon thread the store starts with itself and stops in {@code close()}. A failed purge is logged (at most
 * one warning per ten minutes) and tried again at the next tick; nothing it does can fail a breaker call.
 * Interrupts do not stop it: only {@link #close()} does.
 */
final class Janitor {
    private static final Logger LOG = LoggerFactory.getLogger(Janitor.class);
    private static final long WARN_EVERY_NANOS = 600_000_000_000L;
    private static final long JOIN_MILLIS = 5_000;

    private final long intervalMillis;
    private final Runnable purge;
    private final String table;
    private final StopSignal stop = new StopSignal();
    private final Thread thread;
    private long lastWarning = System.nanoTime() - WARN_EVERY_NANOS;

    Janitor(String table, long intervalMillis, Runnable purge) {
        this.table = table;
        this.intervalMillis = intervalMillis;
        this.purge = purge;
        this.thread = new Thread(this::run, "redeye-pg-janitor " + table);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean alive() {
        return thread.isAlive();
    }

    /** Stops the thread and waits for it (at most a few seconds; a purge in flight finishes first). */
    void close() {
        stop.stop();
        if (thread != Thread.currentThread() && thread.isAlive()) {
            try {
                thread.join(JOIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                LOG.warn("clean-up thread of {} did not stop within {} ms", table, JOIN_MILLIS);
            }
        }
    }

    private void run() {
        while (waitForTick()) {
            try {
                purge.run();
            } catch (RuntimeException | Error e) {
                long now = System.nanoTime();
                if (now - lastWarning >= WARN_EVERY_NANOS) {
                    lastWarning = now;
                    LOG.warn("clean-up of {} failed (retried every {} ms; logged at most every ten minutes): {}",
                            table, intervalMillis, e.toString());
                } else {
                    LOG.debug("clean-up of {} failed", table, e);
                }
            }
        }
    }

    /** Waits for the next tick, drawn between half and one and a half intervals; false once stopping. */
    private boolean waitForTick() {
        return stop.pause(intervalMillis / 2 + ThreadLocalRandom.current().nextLong(intervalMillis + 1));
    }
}

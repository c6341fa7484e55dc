package dev.redeye.store.postgres;

/**
 * The stop signal of a thread the store owns (the feed's, the clean-up's): {@link #pause} waits unless stopped,
 * and {@link #stop()} ends every pause at once. Interrupts are not stop signals: a store's threads run
 * subscribers' code, which may set the interrupt flag, so a pause cut short by one just goes on waiting.
 * Thread-safe.
 */
final class StopSignal {
    private static final long MAX_PAUSE_MILLIS = 365L * 24 * 3600 * 1000;
    private boolean stopped; // guarded by this

    /** Stops: every current and later {@link #pause} returns false at once. Idempotent. */
    synchronized void stop() {
        stopped = true;
        notifyAll();
    }

    synchronized boolean stopped() {
        return stopped;
    }

    /**
     * Waits {@code millis} unless stopped meanwhile.
     *
     * @return true when the time has passed, false once stopped
     */
    synchronized boolean pause(long millis) {
        // at most a year at once, so that the deadline cannot overflow
        long deadline = System.nanoTime() + Math.min(millis, MAX_PAUSE_MILLIS) * 1_000_000L;
        while (!stopped) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return true;
            }
            try {
                wait(left);
            } catch (InterruptedException e) {
                // not a stop signal (see the class description); the flag is cleared by the exception
            }
        }
        return false;
    }
}

package dev.redeye;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The real-time deadlines of {@code callTimeout}: one daemon thread per breaker that has a call timeout,
 * started on first use and stopped by {@link #close()}. Cancelled deadlines leave the queue at once, so
 * finished calls hold no memory until their deadline.
 *
 * <p>A sync call is bounded by {@link #interruptAfter}: at the deadline the calling thread is interrupted,
 * which ends any call that responds to interrupts (blocking I/O on interruptible channels,
 * {@code Thread.sleep}, {@code Object.wait}, locks taken interruptibly). A call that ignores interrupts runs
 * to its end; it still counts as a timeout failure. After close, no deadline is set and calls run unbounded.
 */
final class CallTimer implements AutoCloseable {
    private final ScheduledThreadPoolExecutor executor;

    CallTimer() {
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "redeye-call-timeout");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Runs {@code task} after {@code millis}; null if the timer is closed. */
    ScheduledFuture<?> schedule(Runnable task, long millis) {
        try {
            return executor.schedule(task, millis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            return null;
        }
    }

    /** Interrupts the calling thread after {@code millis} unless {@link Guard#finish()} came first; null if closed. */
    Guard interruptAfter(long millis) {
        Guard g = new Guard(Thread.currentThread());
        g.task = schedule(g, millis);
        return g.task == null ? null : g;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** The deadline of one sync call. */
    static final class Guard implements Runnable {
        private static final int RUNNING = 0;
        private static final int DONE = 1;
        private static final int TIMED_OUT = 2;

        private final Thread thread;
        private ScheduledFuture<?> task;
        private int state = RUNNING;

        Guard(Thread thread) {
            this.thread = thread;
        }

        @Override
        public synchronized void run() {
            if (state == RUNNING) {
                state = TIMED_OUT;
                thread.interrupt();
            }
        }

        /**
         * Ends the deadline, on the calling thread, once the call returned or threw. Returns whether the
         * deadline fired; if it did, the engine's interrupt is cleared (it was the engine's, not the caller's:
         * an interrupt from elsewhere that arrived in the same instant is cleared with it).
         */
        boolean finish() {
            boolean timedOut;
            synchronized (this) {
                timedOut = state == TIMED_OUT;
                state = DONE;
            }
            if (timedOut) {
                Thread.interrupted();
            } else {
                task.cancel(false);
            }
            return timedOut;
        }
    }
}

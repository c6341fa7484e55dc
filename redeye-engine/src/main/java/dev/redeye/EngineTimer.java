package dev.redeye;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's JVM-wide timer: one daemon thread ("redeye-timer") shared by every breaker, started by the first
 * task scheduled and gone about 10 s after the last one ran, so an application whose breakers are all closed
 * and subscribed runs no thread for it. It does two jobs, neither on a hot path:
 * <ul>
 * <li>It marks a local-mode open view {@linkplain Gate.LocalOpen#due due} at its eligibility instant
 * ({@link #markDueAfter}), so that the rejections before it read no clock (a {@code System.currentTimeMillis()}
 * costs more than a whole healthy call on some virtual machines). A view holds no reference to its breaker,
 * so a pending one keeps nothing else alive.</li>
 * <li>It retries a feed subscription that failed ({@link #scheduleBlocking}; see {@link FeedHandler}); the
 * breaker's close cancels a pending retry, which then leaves the queue at once. A retry is a store call that may
 * wait out a network timeout, so the timer only starts it: it runs on a thread of a pool of daemon threads
 * ("redeye-feed-retry-N", made when needed and gone 30 s after their last task), and a retry that hangs never
 * delays a view or another retry.</li>
 * </ul>
 *
 * <p>The timer runs on {@link System#nanoTime()} (so a view is marked by it only when the breaker's ticker is
 * the system ticker) and fires at or after the delay, so a view is marked due late, never early; and "due" only
 * sends the next caller to read the clock and the ticker, which decide. A wall clock that jumps back keeps
 * rejecting (with a clock read per call) until the skew cap, one window after the breaker saw the opening by its
 * ticker, passes.
 */
final class EngineTimer {
    private static final ScheduledThreadPoolExecutor TIMER = create();
    private static final AtomicInteger BLOCKING_THREADS = new AtomicInteger();
    /** Runs what the timer starts but may block; a thread per task running at once, none while idle. */
    private static final ThreadPoolExecutor BLOCKING = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30,
            TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread th = new Thread(r, "redeye-feed-retry-" + BLOCKING_THREADS.incrementAndGet());
                th.setDaemon(true);
                return th;
            });

    private EngineTimer() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "redeye-timer");
            th.setDaemon(true);
            return th;
        });
        t.setKeepAliveTime(10, TimeUnit.SECONDS);
        t.allowCoreThreadTimeOut(true); // the last worker stays while a task is pending, then goes
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /** Marks {@code view} due after {@code delayMillis} (real time). */
    static void markDueAfter(Gate.LocalOpen view, long delayMillis) {
        TIMER.schedule(view, delayMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Runs {@code task} once after {@code delayMillis} (real time) on a pool thread, off the timer's own thread,
     * so it may block; it must not throw (an exception is swallowed by the executor). Cancelling the returned
     * future before the delay ends keeps the task from starting.
     */
    static ScheduledFuture<?> scheduleBlocking(Runnable task, long delayMillis) {
        return TIMER.schedule(() -> BLOCKING.execute(task), delayMillis, TimeUnit.MILLISECONDS);
    }
}

package dev.redeye;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The engine's JVM-wide timer: one daemon thread ("redeye-timer") shared by every breaker, started by the first
 * task scheduled and gone about 10 s after the last one ran, so an application whose breakers are all closed
 * and subscribed runs no thread for it. It does two jobs, neither on a hot path:
 * <ul>
 * <li>It marks a local-mode open view {@linkplain Gate.LocalOpen#due due} at its eligibility instant
 * ({@link #markDueAfter}), so that the rejections before it read no clock (a {@code System.currentTimeMillis()}
 * costs more than a whole healthy call on some virtual machines). A view holds no reference to its breaker,
 * so a pending one keeps nothing else alive.</li>
 * <li>It retries a feed subscription that failed ({@link #schedule}; see {@link FeedHandler}); the breaker's
 * close cancels a pending retry, which then leaves the queue at once.</li>
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
     * Runs {@code task} once after {@code delayMillis} (real time) on the timer's thread; it must be quick and
     * must not throw (an exception is swallowed by the executor).
     */
    static ScheduledFuture<?> schedule(Runnable task, long delayMillis) {
        return TIMER.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
    }
}

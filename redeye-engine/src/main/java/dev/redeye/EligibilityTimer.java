package dev.redeye;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JVM-wide timer that marks a local-mode open view {@linkplain Gate.LocalOpen#due due} at its eligibility
 * instant, so that the rejections before it read no clock (a {@code System.currentTimeMillis()} costs more
 * than a whole healthy call on some virtual machines). One daemon thread ("redeye-eligibility-timer"), started
 * by the first view scheduled and gone about 10 s after the last one fired: an application whose breakers are
 * all closed runs no thread for it. A view holds no reference to its breaker, so a pending one keeps nothing
 * else alive.
 *
 * <p>The timer runs on {@link System#nanoTime()} (so it is used only when the breaker's ticker is the system
 * ticker) and fires at or after the delay, so a view is marked due late, never early; and "due" only sends the
 * next caller to read the clock and the ticker, which decide. A wall clock that jumps back keeps rejecting
 * (with a clock read per call) until the skew cap, one window after the breaker saw the opening by its
 * ticker, passes.
 */
final class EligibilityTimer {
    private static final ScheduledThreadPoolExecutor TIMER = create();

    private EligibilityTimer() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "redeye-eligibility-timer");
            th.setDaemon(true);
            return th;
        });
        t.setKeepAliveTime(10, TimeUnit.SECONDS);
        t.allowCoreThreadTimeOut(true); // the last worker stays while a view is pending, then goes
        return t;
    }

    /** Marks {@code view} due after {@code delayMillis} (real time). */
    static void markDueAfter(Gate.LocalOpen view, long delayMillis) {
        TIMER.schedule(view, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** Views still waiting for their instant (tests). */
    static int pending() {
        return TIMER.getQueue().size();
    }

    /** Whether the timer thread is alive now (tests). */
    static int threads() {
        return TIMER.getPoolSize();
    }
}

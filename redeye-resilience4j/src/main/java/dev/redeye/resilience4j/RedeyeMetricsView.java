package dev.redeye.resilience4j;

import dev.redeye.api.BreakerState;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/**
 * Resilience4j's {@link CircuitBreaker.Metrics} for one adapter, a live view: each getter reads this instance's
 * view of the sliding window (redeye's {@code localState}, no store call; in distributed mode the window as of
 * this instance's last read or write, or the last transition the feed brought) and its own counters.
 *
 * <ul>
 * <li>Buffered, failed, successful and slow calls, and the two rates, come from the window, as in Resilience4j;
 * a rate is {@code -1} until the window holds {@code minimumNumberOfCalls} (a count window's size at most).</li>
 * <li>The split of slow calls into slow successes and slow failures is exact for a count window (each slot
 * keeps both flags); a time window counts calls, failures and slow calls per bucket, not their overlap, so
 * slow failed calls are reported as the least the counts allow ({@code slow + failed - buffered}, at least 0)
 * and slow successful calls as the rest.</li>
 * <li>Not-permitted calls are this instance's rejections since the operation was created (redeye's
 * {@code Metrics.rejections}); Resilience4j's counter restarts on some transitions, this one does not.</li>
 * </ul>
 * Outcomes recorded without a permit (redeye's manual {@code recordSuccess}/{@code recordFailure}) are in the
 * window, not in the counters.
 */
final class RedeyeMetricsView implements CircuitBreaker.Metrics {
    private final String name;
    private final dev.redeye.CircuitBreaker breaker;
    private final int minimumCalls;

    RedeyeMetricsView(String name, dev.redeye.CircuitBreaker breaker) {
        this.name = name;
        this.breaker = breaker;
        this.minimumCalls = breaker.config().policy().windowMinimumCalls();
    }

    /** The window as this instance knows it, rolled to now (a time window's old buckets dropped); null if none. */
    private SlidingWindow window() {
        SlidingWindow w = breaker.localState(name).map(BreakerState::window).orElse(null);
        return w == null ? null : w.rolledTo(breaker.config().clock().millis());
    }

    private static float rate(int part, int calls, int minimum) {
        return calls == 0 || calls < minimum ? -1f : part * 100.0f / calls;
    }

    @Override
    public float getFailureRate() {
        SlidingWindow w = window();
        return w == null ? -1f : rate(w.failures(), w.calls(), minimumCalls);
    }

    @Override
    public float getSlowCallRate() {
        SlidingWindow w = window();
        return w == null ? -1f : rate(w.slowCalls(), w.calls(), minimumCalls);
    }

    @Override
    public int getNumberOfSlowCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : w.slowCalls();
    }

    @Override
    public int getNumberOfSlowSuccessfulCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : w.slowCalls() - slowFailed(w);
    }

    @Override
    public int getNumberOfSlowFailedCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : slowFailed(w);
    }

    @Override
    public int getNumberOfBufferedCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : w.calls();
    }

    @Override
    public int getNumberOfFailedCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : w.failures();
    }

    @Override
    public long getNumberOfNotPermittedCalls() {
        return breaker.metrics(name).rejections();
    }

    @Override
    public int getNumberOfSuccessfulCalls() {
        SlidingWindow w = window();
        return w == null ? 0 : w.calls() - w.failures();
    }

    /**
     * Slow failures in {@code w}: counted from a count window's slots (its stored form, one digit a slot, 3 a slow
     * failure); for a time window, the least the counts allow (see the class comment).
     */
    static int slowFailed(SlidingWindow w) {
        if (w.type() == SlidingWindowType.COUNT_BASED) {
            String s = w.encode(); // c<N>.<position>.<slots>
            int slots = s.indexOf('.', s.indexOf('.') + 1);
            int n = 0;
            if (slots >= 0) {
                for (int i = slots + 1; i < s.length(); i++) {
                    if (s.charAt(i) == '3') {
                        n++;
                    }
                }
            }
            return n;
        }
        return Math.max(0, w.slowCalls() + w.failures() - w.calls());
    }
}

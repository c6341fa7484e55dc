package dev.redeye.cli;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The one downstream service every simulated instance calls: healthy, down from {@code downAt} until
 * {@code upAt} (times since the start of the run), healthy again after. A call takes its latency (a sleep:
 * real time is the point here) and fails if the dependency is down when it answers.
 *
 * <p>Counts precisely, with atomics: calls that reached it while down, trial calls (marked by the
 * {@link TrialMark} set by the counting store that saw the trial claim) and the most trial calls in flight at once;
 * and, per time bucket for the chart, every call and every trial call at its arrival. Thread-safe.
 */
final class SimulatedDependency {

    /** The dependency answered while down. Stackless: it is thrown on the hot path of the simulation. */
    static final class DownException extends Exception {
        private static final long serialVersionUID = 1L;

        DownException() {
            super("dependency is down", null, false, false);
        }
    }

    private final long startNanos;
    private final long downAtNanos;
    private final long upAtNanos;
    private final LongAdder calls = new LongAdder();
    private final LongAdder reachedWhileDown = new LongAdder();
    private final LongAdder trialsWhileDown = new LongAdder();
    private final LongAdder trialCalls = new LongAdder();
    private final AtomicInteger trialsInFlight = new AtomicInteger();
    private final AtomicInteger maxTrialsInFlight = new AtomicInteger();
    private final TickCounts callsPerTick;
    private final TickCounts trialsPerTick;
    /** The instance (0-based) whose every call fails, as if its own network were broken; -1 for none. */
    private final int badInstance;

    /**
     * @param callsPerTick  counts every call reaching the dependency, at its arrival
     * @param trialsPerTick counts the trial calls among them
     */
    SimulatedDependency(long startNanos, long downAtNanos, long upAtNanos, TickCounts callsPerTick,
            TickCounts trialsPerTick, int badInstance) {
        this.badInstance = badInstance;
        this.startNanos = startNanos;
        this.downAtNanos = downAtNanos;
        this.upAtNanos = upAtNanos;
        this.callsPerTick = callsPerTick;
        this.trialsPerTick = trialsPerTick;
    }

    /** Whether the dependency is down at the given {@link System#nanoTime()}. */
    boolean isDown(long nanoTime) {
        long t = nanoTime - startNanos;
        return t >= downAtNanos && t < upAtNanos;
    }

    /**
     * One call, taking {@code latencyNanos}; {@code instance} (0-based) is the caller.
     *
     * @throws DownException if the dependency is down when the call completes, or the caller is the bad instance
     */
    String call(int instance, long latencyNanos) throws DownException {
        boolean trial = TrialMark.currentThreadIsTrial();
        calls.increment();
        long arrival = System.nanoTime();
        callsPerTick.add(arrival);
        if (trial) {
            trialsPerTick.add(arrival);
            trialCalls.increment();
            int now = trialsInFlight.incrementAndGet();
            maxTrialsInFlight.accumulateAndGet(now, Math::max);
        }
        try {
            sleepNanos(latencyNanos);
            if (instance == badInstance) {
                throw new DownException(); // the bad instance's own failure: the dependency is not down for it
            }
            if (isDown(System.nanoTime())) {
                reachedWhileDown.increment();
                if (trial) {
                    trialsWhileDown.increment();
                }
                throw new DownException();
            }
            return "ok";
        } finally {
            if (trial) {
                trialsInFlight.decrementAndGet();
            }
        }
    }

    private static void sleepNanos(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.util.concurrent.CancellationException("simulation interrupted");
        }
    }

    long calls() {
        return calls.sum();
    }

    long reachedWhileDown() {
        return reachedWhileDown.sum();
    }

    long trialsWhileDown() {
        return trialsWhileDown.sum();
    }

    long trialCalls() {
        return trialCalls.sum();
    }

    int maxConcurrentTrials() {
        return maxTrialsInFlight.get();
    }
}

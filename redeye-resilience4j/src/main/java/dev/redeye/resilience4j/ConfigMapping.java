package dev.redeye.resilience4j;

import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Turns a Resilience4j {@link CircuitBreakerConfig} into redeye builder options, refusing at build (with an
 * {@link IllegalArgumentException} that names the Resilience4j option and says why) every option redeye cannot
 * honour, so that no option is dropped silently. The module README lists the mapping and the refusals.
 */
final class ConfigMapping {
    /**
     * How many attempts of {@code waitIntervalFunctionInOpenState} are probed to decide that it is a constant
     * (a fixed {@code waitDurationInOpenState}). A function that is constant for its first 64 attempts and then
     * changes is not told apart; Resilience4j's own functions (fixed, randomized, exponential) all are.
     */
    static final int WAIT_PROBES = 64;

    private ConfigMapping() {
    }

    /**
     * Applies {@code c} to {@code b}: the sliding-window strategy with Resilience4j's thresholds, a fixed reset
     * window without backoff or jitter, the half-open permits, the exception and result predicates and the
     * initial mode.
     *
     * @return the mode the breaker starts in ({@link BreakerMode#NORMAL}, {@code METRICS_ONLY} or {@code DISABLED})
     * @throws IllegalArgumentException naming the Resilience4j option that cannot be honoured, and why
     */
    static BreakerMode apply(String name, CircuitBreakerConfig c, CircuitBreakerBuilder b) {
        refuseUnsupported(name, c);

        SlidingWindowType type = c.getSlidingWindowType() == CircuitBreakerConfig.SlidingWindowType.TIME_BASED
                ? SlidingWindowType.TIME_BASED : SlidingWindowType.COUNT_BASED;
        set(name, "slidingWindowType/slidingWindowSize", type + "/" + c.getSlidingWindowSize(),
                () -> b.slidingWindow(type, c.getSlidingWindowSize()));
        set(name, "failureRateThreshold", c.getFailureRateThreshold(),
                () -> b.failureRateThreshold(c.getFailureRateThreshold()));
        set(name, "minimumNumberOfCalls", c.getMinimumNumberOfCalls(),
                () -> b.minimumNumberOfCalls(c.getMinimumNumberOfCalls()));
        set(name, "slowCallRateThreshold", c.getSlowCallRateThreshold(),
                () -> b.slowCallRateThreshold(c.getSlowCallRateThreshold()));
        set(name, "slowCallDurationThreshold", c.getSlowCallDurationThreshold(),
                () -> b.slowCallDurationThreshold(c.getSlowCallDurationThreshold()));

        // A fixed wait: redeye's reset window without its backoff (multiplier 1) and without its per-instance
        // jitter, which Resilience4j does not have.
        Duration wait = fixedWait(name, c.getWaitIntervalFunctionInOpenState());
        set(name, "waitDurationInOpenState", wait, () -> b.resetTimeout(wait).maxResetTimeout(wait)
                .backoffMultiplier(1).jitter(0));

        // Resilience4j lets N calls through in half-open and closes unless their failure (or slow) rate reaches the
        // threshold. redeye runs at most N trials at once and closes after `successThreshold` successful ones; a
        // failed trial reopens at once. successThreshold = N closes exactly when Resilience4j would close with all
        // N calls successful, and never closes a dependency Resilience4j would have reopened (see the README).
        int permits = c.getPermittedNumberOfCallsInHalfOpenState();
        set(name, "permittedNumberOfCallsInHalfOpenState", permits,
                () -> b.halfOpenPermits(permits).successThreshold(permits));

        // Ignored exceptions never reach recordFailure (the adapter releases their permit); an exception neither
        // ignored nor recorded counts as a success, as in Resilience4j.
        Predicate<Throwable> record = c.getRecordExceptionPredicate();
        Predicate<Throwable> ignore = c.getIgnoreExceptionPredicate();
        b.recordFailure(t -> !ignore.test(t) && record.test(t));
        Predicate<Object> recordResult = c.getRecordResultPredicate();
        b.recordResult(recordResult);
        b.writableStackTraces(c.isWritableStackTraceEnabled());

        BreakerMode mode = initialMode(name, c.getInitialState());
        b.mode(mode);
        return mode;
    }

    private static void refuseUnsupported(String name, CircuitBreakerConfig c) {
        if (!c.getMaxWaitDurationInHalfOpenState().isZero()) {
            throw refused(name, "maxWaitDurationInHalfOpenState", c.getMaxWaitDurationInHalfOpenState(),
                    "redeye does not leave half-open after a time; an unfinished trial's claim expires after "
                            + "trialTimeout and the next caller takes the trial instead (leave it at 0)");
        }
        if (c.getTransitionToStateAfterWaitDuration()
                != CircuitBreakerConfig.DEFAULT_TRANSITION_TO_STATE_AFTER_WAIT_DURATION) {
            throw refused(name, "transitionToStateAfterWaitDuration", c.getTransitionToStateAfterWaitDuration(),
                    "redeye's timed move is only from open to half-open, when the wait is over");
        }
        if (c.getTransitionOnResult() != CircuitBreakerConfig.ofDefaults().getTransitionOnResult()) {
            throw refused(name, "transitionOnResult", "a custom function",
                    "redeye's transitions follow its strategy and the manual API only; a result cannot open or "
                            + "close the breaker for a chosen duration");
        }
    }

    /** The breaker's starting mode for Resilience4j's {@code initialState}. */
    private static BreakerMode initialMode(String name, State initial) {
        switch (initial) {
            case CLOSED:
                return BreakerMode.NORMAL;
            case METRICS_ONLY:
                return BreakerMode.METRICS_ONLY;
            case DISABLED:
                return BreakerMode.DISABLED;
            default:
                throw refused(name, "initialState", initial, "a shared breaker's state is the fleet's; only "
                        + "CLOSED, METRICS_ONLY and DISABLED (modes) can be a starting point (use "
                        + "transitionToForcedOpenState for a fleet-wide forced open)");
        }
    }

    /**
     * The fixed wait {@code f} stands for: it must answer the same for every attempt probed (a
     * {@code waitDurationInOpenState}); a growing or randomized wait is refused.
     */
    static Duration fixedWait(String name, IntervalFunction f) {
        long first = millis(name, f, 1);
        for (int attempt = 2; attempt <= WAIT_PROBES; attempt++) {
            long next = millis(name, f, attempt);
            if (next != first) {
                throw refused(name, "waitIntervalFunctionInOpenState", "attempt 1 waits " + first + " ms, attempt "
                        + attempt + " waits " + next + " ms", "only a fixed wait (waitDurationInOpenState) is "
                        + "honoured: redeye's own backoff (backoffMultiplier, maxResetTimeout, jitter) does not "
                        + "reproduce Resilience4j's interval functions exactly");
            }
        }
        return Duration.ofMillis(first);
    }

    private static long millis(String name, IntervalFunction f, int attempt) {
        Long v;
        try {
            v = f.apply(attempt);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("circuit breaker '" + name + "': waitIntervalFunctionInOpenState "
                    + "threw for attempt " + attempt + ": " + e, e);
        }
        if (v == null) {
            throw refused(name, "waitIntervalFunctionInOpenState", "null for attempt " + attempt,
                    "a wait must be a number of milliseconds");
        }
        return v;
    }

    /** Runs a redeye setter, turning its refusal into one that names the Resilience4j option. */
    private static void set(String name, String option, Object value, Runnable setter) {
        try {
            setter.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("circuit breaker '" + name + "': Resilience4j option " + option + " = "
                    + value + " cannot be honoured by redeye: " + e.getMessage(), e);
        }
    }

    static IllegalArgumentException refused(String name, String option, Object value, String why) {
        return new IllegalArgumentException("circuit breaker '" + name + "': Resilience4j option " + option + " = "
                + value + " is not supported over redeye: " + why);
    }
}

package dev.redeye.resilience4j;

import dev.redeye.CircuitBreakerObserver;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.resilience4j.PermitLedger.Completion;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import io.github.resilience4j.circuitbreaker.ResultRecordedAsFailureException;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnCallNotPermittedEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnErrorEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnFailureRateExceededEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnIgnoredErrorEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnResetEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnSlowCallRateExceededEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnSuccessEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Resilience4j's {@link CircuitBreaker} over one redeye {@link dev.redeye.CircuitBreaker} and one of its
 * operations (the Resilience4j name): every Resilience4j decorator, operator and integration that takes a
 * {@code CircuitBreaker} runs over it unchanged, and in distributed mode its state is the fleet's. Built by
 * {@link Resilience4jBreakers}.
 *
 * <h2>Permissions and outcomes</h2>
 * {@link #tryAcquirePermission()} asks redeye for a {@link Permit} ({@link dev.redeye.CircuitBreaker#tryAcquire});
 * a permitted one is kept until {@code onSuccess}, {@code onError}, {@code onResult} or
 * {@code releasePermission} completes it: the newest permit this thread acquired, or else the oldest outstanding
 * one (a call completed on another thread). See {@link PermitLedger} for what that means when calls interleave
 * across threads. An outcome reported with no permit outstanding (code that records outcomes without asking for
 * permission) is recorded with redeye's manual {@code recordSuccess} / {@code recordFailure}.
 *
 * <p>{@code onError}: an exception Resilience4j's {@code ignoreExceptionPredicate} matches releases the permit
 * (nothing recorded, {@code CircuitBreakerOnIgnoredErrorEvent}); any other goes to redeye, which counts it as a
 * failure when {@code recordExceptionPredicate} matches, else as a success. redeye never records an interrupt or
 * a cancellation as a failure ({@code InterruptedException}, {@code CancellationException}, ...): it releases
 * the permit instead. {@code onResult} applies {@code recordResultPredicate} (a failure is published as an error
 * event carrying {@link ResultRecordedAsFailureException}).
 *
 * <p>Slow calls are timed by redeye from the permit's acquisition, on its ticker, and counted while they run
 * (see redeye's README); the duration passed to {@code onSuccess}/{@code onError} is used for the events only.
 *
 * <h2>State</h2>
 * {@link #getState()} answers from this instance's view ({@code localStatus}, {@code localState}: no store call):
 * {@code HALF_OPEN} once the wait has elapsed, whether or not a call arrived (redeye derives half-open from the
 * time). The manual transitions act on the shared state, for the whole fleet: {@code transitionToForcedOpenState}
 * ({@code forceOpen}), {@code transitionToHalfOpenState} ({@code forceHalfOpen}), {@code transitionToDisabledState}
 * and {@code transitionToMetricsOnlyState} ({@code forceMode}), {@code transitionToClosedState} and
 * {@code reset} ({@code reset}). {@code transitionToOpenState} and its timed variants throw
 * {@link UnsupportedOperationException}: redeye's manual API opens only for good ({@code forceOpen}) or with
 * the wait already over ({@code forceHalfOpen}).
 *
 * <h2>Events</h2>
 * Success, error, ignored error and not-permitted events for this instance's calls (not in {@code DISABLED} and
 * {@code FORCED_OPEN}, as in Resilience4j); state transitions this instance caused or learned from the store's
 * feed, deduplicated by the state's version, and {@code OPEN -> HALF_OPEN} when this instance admits its first
 * trial of an open period; before an opening's transition, the failure-rate and slow-call-rate exceeded events of
 * the window that tripped; a reset event for {@link #reset()} called here. In {@code METRICS_ONLY}, where redeye
 * starts a new window each time the thresholds are reached (and Resilience4j keeps counting in the same one), no
 * rate-exceeded event is published: the window's rates are not kept past that point.
 *
 * <p>Thread-safe.
 */
public final class RedeyeBackedCircuitBreaker implements CircuitBreaker {
    /** Resilience4j's default timestamp function (one shared instance: every default config holds it). */
    private static final Function<Clock, Long> DEFAULT_TIMESTAMPS =
            CircuitBreakerConfig.ofDefaults().getCurrentTimestampFunction();

    private final String name;
    private final CircuitBreakerConfig config;
    private final dev.redeye.CircuitBreaker breaker;
    private final BreakerMode configuredMode;
    private final Map<String, String> tags;
    private final PermitLedger ledger;
    private final Events events = new Events();
    private final RedeyeMetricsView metrics;
    /** Whether the config keeps Resilience4j's default timestamps: {@code System.nanoTime()}, in nanoseconds. */
    private final boolean nanoTimestamps;

    /** The last state published to {@code onStateTransition} consumers, and the redeye version it came from. */
    private State published;
    private long publishedVersion = Long.MIN_VALUE;

    RedeyeBackedCircuitBreaker(String name, CircuitBreakerConfig config, dev.redeye.CircuitBreaker breaker,
            BreakerMode configuredMode, Map<String, String> tags) {
        this.name = name;
        this.config = config;
        this.breaker = breaker;
        this.configuredMode = configuredMode;
        this.tags = Map.copyOf(tags);
        this.metrics = new RedeyeMetricsView(name, breaker);
        this.ledger = new PermitLedger(breaker, name);
        this.nanoTimestamps = config.getCurrentTimestampFunction() == DEFAULT_TIMESTAMPS
                && config.getTimestampUnit() == TimeUnit.NANOSECONDS;
        this.published = stateOf(BreakerStatus.CLOSED, configuredMode);
        // Transitions of this instance's writes, and (distributed mode) the fleet's from the store's feed; the
        // observer also keeps localState following the feed, which getState and getMetrics read.
        breaker.addObserver(new CircuitBreakerObserver() {
            @Override
            public void stateChanged(TransitionEvent event) {
                transition(event);
            }

            @Override
            public void feedEvent(TransitionEvent event) {
                transition(event);
            }
        });
    }

    /** The redeye breaker this adapter runs over (its only operation is {@link #getName()}). */
    public dev.redeye.CircuitBreaker redeye() {
        return breaker;
    }

    // ----------------------------------------------------------------------------------------- permissions

    @Override
    public boolean tryAcquirePermission() {
        return acquire() == null;
    }

    @Override
    public void acquirePermission() {
        if (acquire() != null) {
            // Also for a store error under StoreErrorPolicy.REJECT: Resilience4j's callers (fallbacks, operators)
            // expect this exception for every refusal. It cannot carry the store error (Resilience4j builds it
            // with its cause fixed to none); that error reaches redeye's onStoreError listener and observers.
            throw CallNotPermittedException.createCallNotPermittedException(this);
        }
    }

    /**
     * One admission: null if permitted (the permit kept in the ledger), else redeye's rejection
     * ({@code CircuitOpenException}, or {@code StoreUnavailableException} under REJECT).
     */
    private RuntimeException acquire() {
        Object held = ledger.acquire();
        if (held instanceof RuntimeException) {
            if (publishing()) {
                events.publish(new CircuitBreakerOnCallNotPermittedEvent(name));
            }
            return (RuntimeException) held;
        }
        if (((PermitLedger.Slot) held).permit.isTrial()) {
            halfOpenSeen();
        }
        return null;
    }

    @Override
    public void releasePermission() {
        ledger.complete(Completion.RELEASE, null);
    }

    @Override
    public void onSuccess(long duration, TimeUnit unit) {
        if (!ledger.complete(Completion.SUCCESS, null) && recording()) {
            breaker.recordSuccess(name);
        }
        if (publishing()) {
            events.publish(new CircuitBreakerOnSuccessEvent(name, elapsed(duration, unit)));
        }
    }

    @Override
    public void onError(long duration, TimeUnit unit, Throwable throwable) {
        Objects.requireNonNull(throwable, "throwable");
        if (config.getIgnoreExceptionPredicate().test(throwable)) {
            ledger.complete(Completion.RELEASE, null);
            if (publishing()) {
                events.publish(new CircuitBreakerOnIgnoredErrorEvent(name, elapsed(duration, unit), throwable));
            }
            return;
        }
        boolean failure = config.getRecordExceptionPredicate().test(throwable);
        // redeye's recordFailure is the same predicates; interrupts and cancellations are not recorded
        if (!ledger.complete(Completion.FAILURE, throwable) && recording()) {
            if (failure) {
                breaker.recordFailure(name);
            } else {
                breaker.recordSuccess(name);
            }
        }
        if (publishing()) {
            events.publish(failure ? new CircuitBreakerOnErrorEvent(name, elapsed(duration, unit), throwable)
                    : new CircuitBreakerOnSuccessEvent(name, elapsed(duration, unit)));
        }
    }

    @Override
    public void onResult(long duration, TimeUnit unit, Object result) {
        // redeye's recordResult is the same predicate, applied when a permit is outstanding
        if (!ledger.complete(Completion.RESULT, result) && recording()) {
            if (config.getRecordResultPredicate().test(result)) {
                breaker.recordFailure(name);
            } else {
                breaker.recordSuccess(name);
            }
        }
        if (publishing()) {
            events.publish(config.getRecordResultPredicate().test(result)
                    ? new CircuitBreakerOnErrorEvent(name, elapsed(duration, unit),
                            new ResultRecordedAsFailureException(name, result))
                    : new CircuitBreakerOnSuccessEvent(name, elapsed(duration, unit)));
        }
    }

    /**
     * Whether a call event is published: someone listens (the state is not read otherwise: the healthy path
     * stays free of it), and the state allows it (not DISABLED or FORCED_OPEN, as in Resilience4j). The state is
     * read after the outcome is recorded, which cannot have moved the breaker into either.
     */
    private boolean publishing() {
        return events.hasConsumers() && getState().allowPublish;
    }

    /** Whether an outcome without a permit is recorded: not while this instance sees the breaker disabled. */
    private boolean recording() {
        return getState() != State.DISABLED;
    }

    private static Duration elapsed(long duration, TimeUnit unit) {
        return Duration.ofNanos(unit.toNanos(duration));
    }

    // ---------------------------------------------------------------------------------------------- state

    /**
     * This instance's view of the breaker, without a store call: redeye's {@code localStatus}, and for a closed
     * breaker the mode in force ({@code METRICS_ONLY}, {@code DISABLED}).
     */
    @Override
    public State getState() {
        BreakerStatus status = breaker.localStatus(name);
        if (status != BreakerStatus.CLOSED) {
            return stateOf(status, configuredMode);
        }
        Optional<BreakerState> s = breaker.localState(name);
        BreakerMode stored = s.isPresent() ? s.get().mode() : BreakerMode.DEFAULT;
        return stateOf(status, stored == BreakerMode.DEFAULT ? configuredMode : stored);
    }

    static State stateOf(BreakerStatus status, BreakerMode mode) {
        switch (status) {
            case OPEN:
                return State.OPEN;
            case HALF_OPEN:
                return State.HALF_OPEN;
            case FORCED_OPEN:
                return State.FORCED_OPEN;
            default:
                return mode == BreakerMode.METRICS_ONLY ? State.METRICS_ONLY
                        : mode == BreakerMode.DISABLED ? State.DISABLED : State.CLOSED;
        }
    }

    /** A redeye transition (this instance's write, or the feed's): published once per version. */
    private void transition(TransitionEvent event) {
        if (!event.operation().equals(name)) {
            return;
        }
        BreakerMode mode = event.state().mode() == BreakerMode.DEFAULT ? configuredMode : event.state().mode();
        State to = stateOf(event.to(), mode);
        State from;
        synchronized (this) {
            if (event.version() <= publishedVersion && event.state().hasKnownVersion()) {
                return; // already published (our own write comes back on the feed), or older than what we know
            }
            publishedVersion = event.version();
            from = published;
            published = to;
        }
        if (event.kind() == TransitionKind.OPENED) {
            thresholdsExceeded(event.state().window());
        }
        publishTransition(from, to);
    }

    /**
     * The rate-exceeded events of an opening by the sliding window {@code w} (the window that tripped, kept in the
     * open state), before the state transition, as Resilience4j publishes them.
     */
    private void thresholdsExceeded(SlidingWindow w) {
        if (w == null || w.calls() == 0 || !events.hasConsumers()) {
            return;
        }
        float failureRate = w.failures() * 100f / w.calls();
        float slowCallRate = w.slowCalls() * 100f / w.calls();
        if (failureRate >= config.getFailureRateThreshold()) {
            events.publish(new CircuitBreakerOnFailureRateExceededEvent(name, failureRate));
        }
        if (slowCallRate >= config.getSlowCallRateThreshold()) {
            events.publish(new CircuitBreakerOnSlowCallRateExceededEvent(name, slowCallRate));
        }
    }

    /** This instance admitted a trial: the breaker is half-open, as Resilience4j says on the first call after the wait. */
    private void halfOpenSeen() {
        State from;
        synchronized (this) {
            if (published != State.OPEN) {
                return;
            }
            from = published;
            published = State.HALF_OPEN;
        }
        publishTransition(from, State.HALF_OPEN);
    }

    private void publishTransition(State from, State to) {
        if (from == to) {
            return;
        }
        StateTransition t;
        try {
            t = StateTransition.transitionBetween(name, from, to);
        } catch (IllegalStateTransitionException notInResilience4j) {
            return; // e.g. METRICS_ONLY -> OPEN cannot happen in Resilience4j; its consumers do not expect it
        }
        events.publish(new CircuitBreakerOnStateTransitionEvent(name, t));
    }

    // ------------------------------------------------------------------------------------ manual transitions

    /** Closes the breaker for the fleet (redeye's {@code reset}) and publishes a reset event. */
    @Override
    public void reset() {
        breaker.reset(name);
        events.publish(new CircuitBreakerOnResetEvent(name));
    }

    /**
     * Closes the breaker for the fleet: redeye's {@code reset}, or, when this breaker was built in a mode other
     * than normal ({@code initialState} METRICS_ONLY or DISABLED), {@code forceMode(NORMAL)}.
     */
    @Override
    public void transitionToClosedState() {
        if (configuredMode == BreakerMode.NORMAL) {
            breaker.reset(name);
        } else {
            breaker.forceMode(name, BreakerMode.NORMAL);
        }
    }

    /** Not supported: redeye's manual API has no open state with a wait (see the class comment). */
    @Override
    public void transitionToOpenState() {
        throw unsupported("transitionToOpenState");
    }

    /** Not supported (see {@link #transitionToOpenState()}). */
    @Override
    public void transitionToOpenStateFor(Duration waitDuration) {
        throw unsupported("transitionToOpenStateFor");
    }

    /** Not supported (see {@link #transitionToOpenState()}). */
    @Override
    public void transitionToOpenStateUntil(Instant waitUntil) {
        throw unsupported("transitionToOpenStateUntil");
    }

    private static UnsupportedOperationException unsupported(String method) {
        return new UnsupportedOperationException(method + " is not supported over redeye: its manual API opens a "
                + "breaker for the fleet either until reset (transitionToForcedOpenState) or with the wait already "
                + "over (transitionToHalfOpenState), never for a wait of its own");
    }

    /** Opens the breaker with the wait over, for the fleet: the next call claims a trial (redeye's {@code forceHalfOpen}). */
    @Override
    public void transitionToHalfOpenState() {
        breaker.forceHalfOpen(name);
    }

    /** Admits every call and records nothing, fleet-wide, until another transition (redeye's {@code forceMode(DISABLED)}). */
    @Override
    public void transitionToDisabledState() {
        breaker.forceMode(name, BreakerMode.DISABLED);
    }

    /** Counts and evaluates but never rejects, fleet-wide (redeye's {@code forceMode(METRICS_ONLY)}). */
    @Override
    public void transitionToMetricsOnlyState() {
        breaker.forceMode(name, BreakerMode.METRICS_ONLY);
    }

    /** Rejects every call, fleet-wide, until reset or closed (redeye's {@code forceOpen}). */
    @Override
    public void transitionToForcedOpenState() {
        breaker.forceOpen(name);
    }

    // ------------------------------------------------------------------------------------------- the rest

    @Override
    public String getName() {
        return name;
    }

    @Override
    public CircuitBreakerConfig getCircuitBreakerConfig() {
        return config;
    }

    /** This instance's counters and its view of the (shared) sliding window; see {@link RedeyeMetricsView}. */
    @Override
    public Metrics getMetrics() {
        return metrics;
    }

    @Override
    public Map<String, String> getTags() {
        return tags;
    }

    @Override
    public EventPublisher getEventPublisher() {
        return events;
    }

    /**
     * Resilience4j's timestamp, from the config's clock and timestamp function (durations for the events); with
     * Resilience4j's default function ({@code System.nanoTime()}) read directly, without boxing it.
     */
    @Override
    public long getCurrentTimestamp() {
        return nanoTimestamps ? System.nanoTime() : config.getCurrentTimestampFunction().apply(config.getClock());
    }

    @Override
    public TimeUnit getTimestampUnit() {
        return config.getTimestampUnit();
    }

    /** How many permits are acquired and not completed yet (for tests and diagnostics). */
    int outstandingPermits() {
        return ledger.outstanding();
    }

    @Override
    public String toString() {
        return "RedeyeBackedCircuitBreaker '" + name + "'";
    }
}

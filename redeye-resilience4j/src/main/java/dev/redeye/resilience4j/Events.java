package dev.redeye.resilience4j;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnCallNotPermittedEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnErrorEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnFailureRateExceededEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnIgnoredErrorEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnResetEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnSlowCallRateExceededEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnSuccessEvent;
import io.github.resilience4j.core.EventConsumer;
import io.github.resilience4j.core.EventProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One adapter's {@link CircuitBreaker.EventPublisher}: consumers registered per event type, or for every event
 * ({@code onEvent}), on Resilience4j's own {@link EventProcessor} (which dispatches by the event's class).
 * Consumers run on the thread that caused the event. An exception a consumer throws is logged and goes no
 * further: thrown out of {@code onSuccess}, a Resilience4j decorator would report the same call again as an error,
 * and the adapter would complete a second permit (another call's) with it.
 */
final class Events extends EventProcessor<CircuitBreakerEvent> implements CircuitBreaker.EventPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(RedeyeBackedCircuitBreaker.class);

    /** Publishes {@code event} if anyone listens; cheap when no one does. Never throws a consumer's exception. */
    void publish(CircuitBreakerEvent event) {
        try {
            processEvent(event);
        } catch (RuntimeException e) {
            LOG.warn("a consumer of circuit breaker '{}' threw on {}", event.getCircuitBreakerName(),
                    event.getEventType(), e);
        }
    }

    @Override
    public CircuitBreaker.EventPublisher onSuccess(EventConsumer<CircuitBreakerOnSuccessEvent> consumer) {
        registerConsumer(CircuitBreakerOnSuccessEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public CircuitBreaker.EventPublisher onError(EventConsumer<CircuitBreakerOnErrorEvent> consumer) {
        registerConsumer(CircuitBreakerOnErrorEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public CircuitBreaker.EventPublisher onStateTransition(
            EventConsumer<CircuitBreakerOnStateTransitionEvent> consumer) {
        registerConsumer(CircuitBreakerOnStateTransitionEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public CircuitBreaker.EventPublisher onReset(EventConsumer<CircuitBreakerOnResetEvent> consumer) {
        registerConsumer(CircuitBreakerOnResetEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public CircuitBreaker.EventPublisher onIgnoredError(EventConsumer<CircuitBreakerOnIgnoredErrorEvent> consumer) {
        registerConsumer(CircuitBreakerOnIgnoredErrorEvent.class.getName(), consumer);
        return this;
    }

    @Override
    public CircuitBreaker.EventPublisher onCallNotPermitted(
            EventConsumer<CircuitBreakerOnCallNotPermittedEvent> consumer) {
        registerConsumer(CircuitBreakerOnCallNotPermittedEvent.class.getName(), consumer);
        return this;
    }

    /**
     * Registered, but never called in this version: the adapter does not publish the rate-exceeded events yet
     * (see the module README).
     */
    @Override
    public CircuitBreaker.EventPublisher onFailureRateExceeded(
            EventConsumer<CircuitBreakerOnFailureRateExceededEvent> consumer) {
        registerConsumer(CircuitBreakerOnFailureRateExceededEvent.class.getName(), consumer);
        return this;
    }

    /** Registered, but never called in this version (see {@link #onFailureRateExceeded}). */
    @Override
    public CircuitBreaker.EventPublisher onSlowCallRateExceeded(
            EventConsumer<CircuitBreakerOnSlowCallRateExceededEvent> consumer) {
        registerConsumer(CircuitBreakerOnSlowCallRateExceededEvent.class.getName(), consumer);
        return this;
    }
}

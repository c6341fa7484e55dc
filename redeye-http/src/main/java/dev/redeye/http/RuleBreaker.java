package dev.redeye.http;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.TransitionEvent;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule and its breaker: the rule's effective options (its own, else the defaults), the status
 * classification its breaker's {@code recordResult} predicate applies, and the callback dispatch (the rule's
 * own callback first, then the registry-wide one, each isolated).
 */
final class RuleBreaker {
    private static final Logger LOG = LoggerFactory.getLogger(HttpBreakers.class);

    final HttpRule rule;
    final String operation;
    final int failureThreshold;
    final StatusCodes successStatuses;
    final StatusCodes failureStatuses;
    private final Consumer<HttpStateChange> registryCallback;
    CircuitBreaker breaker;

    RuleBreaker(HttpRule rule, RuleDefaults d, Consumer<HttpStateChange> registryCallback) {
        this.rule = rule;
        this.operation = rule.operation();
        this.failureThreshold = rule.failureThreshold().orElse(d.failureThreshold());
        this.successStatuses = rule.successStatuses().orElse(d.successStatuses());
        this.failureStatuses = rule.failureStatuses().orElse(d.failureStatuses());
        this.registryCallback = registryCallback;
    }

    /**
     * Whether a response with {@code status} is a failure: the failure statuses first, then the success
     * statuses, then the default (2xx is a success, anything else a failure).
     */
    boolean isFailure(int status) {
        if (failureStatuses.contains(status)) {
            return true;
        }
        if (successStatuses.contains(status)) {
            return false;
        }
        return status < 200 || status > 299;
    }

    /** The breaker's {@code recordResult} predicate: a result is the response's status code. */
    boolean resultIsFailure(Object result) {
        return !(result instanceof Integer) || isFailure((Integer) result);
    }

    /** The breaker's {@code onStateChange}: never throws into the call that caused the transition. */
    void stateChanged(TransitionEvent event) {
        HttpStateChange change = new HttpStateChange(rule.level(), rule.key(), event);
        Consumer<HttpStateChange> own = rule.onStateChange().orElse(null);
        if (own != null) {
            try {
                own.accept(change);
            } catch (RuntimeException ex) {
                LOG.warn("onStateChange callback of rule {} threw on {}", operation, change, ex);
            }
        }
        if (registryCallback != null) {
            try {
                registryCallback.accept(change);
            } catch (RuntimeException ex) {
                LOG.warn("registry-wide onStateChange callback threw on {}", change, ex);
            }
        }
    }
}

package dev.redeye.http;

import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import java.time.Duration;
import java.util.Objects;

/**
 * The options a rule does not set itself: {@code failureThreshold}, {@code resetTimeout} and
 * {@code successThreshold} the engine's defaults ({@link Policy#FAILURE_THRESHOLD} and the others: 5, 60 s and
 * 1), {@code strategy} {@link Strategy#LEAKY} (a failure adds 1, a success subtracts 1),
 * no success or failure statuses beyond the default (2xx success, anything else a failure). Immutable.
 *
 * @param failureThreshold failures that open a breaker (>= 1)
 * @param resetTimeout         how long a breaker stays open before a trial (at least 1 ms)
 * @param successThreshold successful trials that close a breaker (>= 1)
 * @param strategy         how failures are counted
 * @param successStatuses  statuses that are successes (after failure statuses, before the 2xx default)
 * @param failureStatuses  statuses that are failures (first in precedence)
 */
public record RuleDefaults(int failureThreshold, Duration resetTimeout, int successThreshold, Strategy strategy,
        StatusCodes successStatuses, StatusCodes failureStatuses) {

    private static final RuleDefaults DEFAULTS = new RuleDefaults(Policy.FAILURE_THRESHOLD.defaultValue(),
            Policy.RESET_TIMEOUT.defaultValue(), Policy.SUCCESS_THRESHOLD.defaultValue(), Strategy.LEAKY,
            StatusCodes.NONE, StatusCodes.NONE);

    /**
     * @throws dev.redeye.api.InvalidOptionException naming the bad option (each option's own check)
     * @throws NullPointerException     if an object component is null
     */
    public RuleDefaults {
        Objects.requireNonNull(resetTimeout, "resetTimeout");
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(successStatuses, "successStatuses");
        Objects.requireNonNull(failureStatuses, "failureStatuses");
        Policy.FAILURE_THRESHOLD.check(failureThreshold);
        Policy.SUCCESS_THRESHOLD.check(successThreshold);
        Policy.RESET_TIMEOUT.check(resetTimeout);
    }

    /** The reference defaults (see the class comment). */
    public static RuleDefaults defaults() {
        return DEFAULTS;
    }

    public RuleDefaults withFailureThreshold(int v) {
        return new RuleDefaults(v, resetTimeout, successThreshold, strategy, successStatuses, failureStatuses);
    }

    public RuleDefaults withResetTimeout(Duration v) {
        return new RuleDefaults(failureThreshold, v, successThreshold, strategy, successStatuses, failureStatuses);
    }

    public RuleDefaults withSuccessThreshold(int v) {
        return new RuleDefaults(failureThreshold, resetTimeout, v, strategy, successStatuses, failureStatuses);
    }

    public RuleDefaults withStrategy(Strategy v) {
        return new RuleDefaults(failureThreshold, resetTimeout, successThreshold, v, successStatuses, failureStatuses);
    }

    public RuleDefaults withSuccessStatuses(StatusCodes v) {
        return new RuleDefaults(failureThreshold, resetTimeout, successThreshold, strategy, v, failureStatuses);
    }

    public RuleDefaults withFailureStatuses(StatusCodes v) {
        return new RuleDefaults(failureThreshold, resetTimeout, successThreshold, strategy, successStatuses, v);
    }
}

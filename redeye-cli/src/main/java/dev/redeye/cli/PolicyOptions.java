package dev.redeye.cli;

import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Policy;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The timing options an operator command needs to interpret a stored state the way the application's
 * breakers do. The store holds state, not configuration: whether an open breaker is already half-open, and
 * how long until a trial, depend on the application's {@code resetTimeout}, {@code backoffMultiplier} and
 * {@code maxResetTimeout}. Their defaults are the library's own ({@link Policy#RESET_TIMEOUT},
 * {@link Policy#BACKOFF_MULTIPLIER}, {@link Policy#MAX_RESET_TIMEOUT}), given by {@link LibraryDefaults}.
 */
public final class PolicyOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--reset-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "The application's resetTimeout (default: ${DEFAULT-VALUE}).")
    Duration resetTimeout;

    @Option(names = "--backoff-multiplier", paramLabel = "X",
            description = "The application's backoffMultiplier (default: ${DEFAULT-VALUE}).")
    double backoffMultiplier;

    @Option(names = "--max-reset-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "The application's maxResetTimeout (default: 8 x --reset-timeout).")
    Duration maxResetTimeout;

    /** Creates the mixin (picocli calls this). */
    public PolicyOptions() {
    }

    /**
     * The policy these options describe.
     *
     * @throws ParameterException naming the bad command-line option, found from the option the policy refused
     */
    Policy policy() {
        try {
            Policy.Builder b = Policy.builder().resetTimeout(resetTimeout).backoffMultiplier(backoffMultiplier);
            if (maxResetTimeout != null) {
                b.maxResetTimeout(maxResetTimeout);
            }
            return b.build();
        } catch (InvalidOptionException e) {
            throw OptionErrors.usage(mixee, e);
        }
    }
}

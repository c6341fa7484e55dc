package dev.redeye.cli;

import dev.redeye.api.Policy;
import java.util.Map;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The defaults of the command-line options that stand for a library option, read from the library's
 * declarations ({@link Policy#RESET_TIMEOUT} and the others) rather than written again in an annotation: the
 * operator commands' timing options ({@link PolicyOptions}) and {@code simulate}'s breaker options but its
 * {@code --reset-timeout} (a simulation's own, shorter window). Any other option's default is its own.
 * Set on the root command line, it serves every subcommand. Stateless, thread-safe.
 */
final class LibraryDefaults implements IDefaultValueProvider {
    private static final Map<String, String> POLICY_OPTIONS = Map.of(
            "--reset-timeout", DurationConverter.format(Policy.RESET_TIMEOUT.defaultValue()),
            "--backoff-multiplier", String.valueOf(Policy.BACKOFF_MULTIPLIER.defaultValue()));
    private static final Map<String, String> SIMULATE_OPTIONS = Map.of(
            "--failure-threshold", String.valueOf(Policy.FAILURE_THRESHOLD.defaultValue()),
            "--backoff-multiplier", String.valueOf(Policy.BACKOFF_MULTIPLIER.defaultValue()),
            "--jitter", String.valueOf(Policy.JITTER.defaultValue()));

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || option.command() == null) {
            return null;
        }
        CommandSpec command = option.command();
        if (command.userObject() instanceof SimulateCommand) {
            return SIMULATE_OPTIONS.get(option.longestName());
        }
        for (CommandSpec mixin : command.mixins().values()) {
            if (mixin.userObject() instanceof PolicyOptions && mixin.options().contains(option)) {
                return POLICY_OPTIONS.get(option.longestName());
            }
        }
        return null;
    }
}

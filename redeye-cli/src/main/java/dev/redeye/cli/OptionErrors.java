package dev.redeye.cli;

import dev.redeye.api.InvalidOptionException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

/**
 * Turns a breaker option the engine refused into a usage error naming the command-line option that set it. The
 * option is found from the exception's {@link InvalidOptionException#option()} (a builder option such as
 * {@code resetTimeout} is the command's {@code --reset-timeout}), never from its message.
 */
final class OptionErrors {
    private OptionErrors() {
    }

    /**
     * A usage error of {@code spec}'s command for {@code e}: {@code "--reset-timeout must be ..., was PT0S"} when
     * the command has the option, else the engine's own message.
     */
    static ParameterException usage(CommandSpec spec, InvalidOptionException e) {
        OptionSpec option = spec.findOption(flag(e.option()));
        String message = option != null ? option.longestName() + " " + e.reason() : e.getMessage();
        return new ParameterException(spec.commandLine(), message, e);
    }

    /** {@code resetTimeout} as {@code --reset-timeout}. */
    static String flag(String builderOption) {
        StringBuilder sb = new StringBuilder("--");
        for (int i = 0; i < builderOption.length(); i++) {
            char c = builderOption.charAt(i);
            if (Character.isUpperCase(c)) {
                sb.append('-').append(Character.toLowerCase(c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}

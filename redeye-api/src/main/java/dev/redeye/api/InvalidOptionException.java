package dev.redeye.api;

import java.util.Objects;

/**
 * A breaker option was given a value it does not take. Thrown by the builders' setters (and, for a rule
 * between two options such as {@code maxResetTimeout >= resetTimeout}, by {@code build()}), it carries the
 * option's name as users write it in Java ({@code resetTimeout}, {@code failureThreshold}), so that a caller
 * that set the option from somewhere else (a Spring property, a command-line option) can say which of its own
 * names was wrong without reading the message.
 *
 * <p>The message is {@code "<option> <reason>"}, for example {@code "failureThreshold must be >= 1, was 0"}.
 */
public class InvalidOptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The option's name, as users write it. */
    private final String option;
    /** What is wrong with the value, without the option's name. */
    private final String reason;

    /**
     * @param option the option's name as users write it in Java (e.g. {@code resetTimeout})
     * @param reason what is wrong with the value, without the option's name (e.g. {@code "must be >= 1, was 0"})
     * @throws NullPointerException if an argument is null
     */
    public InvalidOptionException(String option, String reason) {
        super(Objects.requireNonNull(option, "option") + " " + Objects.requireNonNull(reason, "reason"));
        this.option = option;
        this.reason = reason;
    }

    /** The name of the option whose value was refused, as users write it in Java ({@code resetTimeout}). */
    public String option() {
        return option;
    }

    /** What is wrong with the value, without the option's name ({@code "must be >= 1, was 0"}). */
    public String reason() {
        return reason;
    }
}

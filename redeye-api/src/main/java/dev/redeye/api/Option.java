package dev.redeye.api;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One breaker option, declared once: its name as users write it, its default and its check. The builders'
 * setters run {@link #check(Object)}, so that a bad value fails where it is set, with an
 * {@link InvalidOptionException} that names the option. {@link Policy}'s options are declared on
 * {@link Policy}; the engine declares its own next to its builder.
 *
 * <p>Immutable and thread-safe (when the default value is).
 *
 * @param <T> the option's value type
 */
public final class Option<T> {
    private final String name;
    private final T defaultValue;
    private final Predicate<? super T> valid;
    private final String requirement;

    private Option(String name, T defaultValue, Predicate<? super T> valid, String requirement) {
        this.name = Objects.requireNonNull(name, "name");
        this.defaultValue = defaultValue;
        this.valid = Objects.requireNonNull(valid, "valid");
        this.requirement = Objects.requireNonNull(requirement, "requirement");
    }

    /**
     * An option whose values must be non-null and satisfy {@code valid}.
     *
     * @param name         the option's name as users write it
     * @param defaultValue its default, or null when it is unset by default
     * @param valid        whether a non-null value is allowed
     * @param requirement  what {@code valid} asks, as in {@code "must be >= 1"}
     */
    public static <T> Option<T> of(String name, T defaultValue, Predicate<? super T> valid, String requirement) {
        return new Option<>(name, defaultValue, valid, requirement);
    }

    /** An option whose only requirement is a non-null value. */
    public static <T> Option<T> nonNull(String name, T defaultValue) {
        return new Option<>(name, defaultValue, v -> true, "must not be null");
    }

    /** An integer option of at least 1. */
    public static Option<Integer> atLeastOne(String name, Integer defaultValue) {
        return new Option<>(name, defaultValue, v -> v >= 1, "must be >= 1");
    }

    /**
     * A duration option of at least 1 ms (durations are used at millisecond precision, so less is as
     * meaningless as zero) and at most {@code max}.
     */
    public static Option<Duration> duration(String name, Duration defaultValue, Duration max) {
        Objects.requireNonNull(max, "max");
        return new Option<>(name, defaultValue, v -> v.compareTo(max) <= 0 && v.toMillis() >= 1,
                "must be at least 1 ms and at most " + describe(max));
    }

    private static String describe(Duration max) {
        return max.toMillis() % 86_400_000L == 0 && max.toDays() < 100_000 ? max.toDays() + " days"
                : max.toMillis() + " ms";
    }

    /** The option's name as users write it in Java ({@code resetTimeout}). */
    public String name() {
        return name;
    }

    /** The option's default, or null when it is unset by default (or its default is computed from others). */
    public T defaultValue() {
        return defaultValue;
    }

    /**
     * Returns {@code value} if the option takes it.
     *
     * @throws InvalidOptionException naming this option, if {@code value} is null or not allowed
     */
    public T check(T value) {
        if (value == null) {
            throw new InvalidOptionException(name, "must not be null");
        }
        if (!valid.test(value)) {
            throw new InvalidOptionException(name, requirement + ", was " + value);
        }
        return value;
    }

    @Override
    public String toString() {
        return name + " (default " + defaultValue + ")";
    }
}

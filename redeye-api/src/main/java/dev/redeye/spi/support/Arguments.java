package dev.redeye.spi.support;

import java.time.Duration;
import java.util.Objects;

/**
 * Checks of the arguments a store or its builder takes, each failing with the message every store gives for
 * it: {@code "<name> must be >= <min>, was <value>"} or {@code "<name> must be positive, was <value>"}.
 */
public final class Arguments {
    private Arguments() {
    }

    /**
     * @param name  the argument's name, as the message gives it
     * @param value the argument
     * @param min   the least value allowed
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is below {@code min}
     */
    public static int atLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", was " + value);
        }
        return value;
    }

    /**
     * @param name  the argument's name, as the message gives it
     * @param value the argument
     * @param min   the least value allowed
     * @return {@code value}
     * @throws IllegalArgumentException if {@code value} is below {@code min}
     */
    public static long atLeast(String name, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(name + " must be >= " + min + ", was " + value);
        }
        return value;
    }

    /**
     * @param name    the argument's name, as the messages give it
     * @param value   the argument
     * @param min     the shortest duration allowed
     * @param minText {@code min} as the message gives it, such as {@code "1 s"}
     * @return {@code value}
     * @throws NullPointerException     if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is shorter than {@code min}
     */
    public static Duration atLeast(String name, Duration value, Duration min, String minText) {
        Objects.requireNonNull(value, name);
        if (value.compareTo(min) < 0) {
            throw new IllegalArgumentException(name + " must be >= " + minText + ", was " + value);
        }
        return value;
    }

    /**
     * @param name  the argument's name, as the messages give it
     * @param value the argument
     * @return {@code value}
     * @throws NullPointerException     if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is zero or negative
     */
    public static Duration positive(String name, Duration value) {
        Objects.requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return value;
    }
}

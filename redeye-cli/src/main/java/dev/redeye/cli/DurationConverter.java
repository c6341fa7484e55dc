package dev.redeye.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses a command-line duration: a number with a unit ({@code 500ms}, {@code 2s}, {@code 1.5s}, {@code 3m},
 * {@code 1h}) or an ISO-8601 duration ({@code PT2S}). A bare number is refused, since it is ambiguous.
 *
 * <p>Stateless and thread-safe; picocli calls it once per option value.
 */
public final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern WITH_UNIT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");

    /** Creates the converter (picocli instantiates it). */
    public DurationConverter() {
    }

    /**
     * @throws TypeConversionException with a message that shows the accepted forms
     */
    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * Parses a duration.
     *
     * @param value the text, e.g. {@code 500ms}, {@code 2s}, {@code PT2S}
     * @return the duration, never negative
     * @throws TypeConversionException if the text is not a non-negative duration in an accepted form
     */
    public static Duration parse(String value) {
        if (value == null || value.isBlank()) {
            throw new TypeConversionException("a duration is required, for example 500ms, 2s or 1m");
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.startsWith("p")) {
            try {
                Duration d = Duration.parse(v.toUpperCase(Locale.ROOT));
                if (d.isNegative()) {
                    throw new TypeConversionException("duration must not be negative: '" + value + "'");
                }
                return d;
            } catch (DateTimeParseException e) {
                throw new TypeConversionException("'" + value + "' is not a duration (use 500ms, 2s, 1.5s, 1m or PT2S)");
            }
        }
        Matcher m = WITH_UNIT.matcher(v);
        if (!m.matches()) {
            throw new TypeConversionException("'" + value + "' is not a duration (use a unit: 500ms, 2s, 1.5s, 1m, 1h)");
        }
        BigDecimal amount = new BigDecimal(m.group(1));
        BigDecimal millisPerUnit;
        switch (m.group(2)) {
            case "ms":
                millisPerUnit = BigDecimal.ONE;
                break;
            case "s":
                millisPerUnit = BigDecimal.valueOf(1_000);
                break;
            case "m":
                millisPerUnit = BigDecimal.valueOf(60_000);
                break;
            default:
                millisPerUnit = BigDecimal.valueOf(3_600_000);
                break;
        }
        try {
            return Duration.ofMillis(amount.multiply(millisPerUnit).setScale(0, java.math.RoundingMode.HALF_UP)
                    .longValueExact());
        } catch (ArithmeticException e) {
            throw new TypeConversionException("duration '" + value + "' is too long");
        }
    }

    /**
     * A short human form of a duration.
     *
     * @param d the duration
     * @return for example {@code 850ms}, {@code 2s}, {@code 1.5s}, {@code 3m 20s}
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return ms % 1_000 == 0 ? (ms / 1_000) + "s" : String.format(Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = ms / 1_000;
        if (s < 3_600) {
            return (s / 60) + "m" + (s % 60 == 0 ? "" : " " + (s % 60) + "s");
        }
        return (s / 3_600) + "h" + ((s % 3_600) / 60 == 0 ? "" : " " + ((s % 3_600) / 60) + "m");
    }
}

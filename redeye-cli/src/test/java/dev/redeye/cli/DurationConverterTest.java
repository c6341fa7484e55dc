package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {

    @Test
    void parsesUnitsDecimalsAndIso() {
        assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
        assertEquals(Duration.ofSeconds(2), DurationConverter.parse("2s"));
        assertEquals(Duration.ofMillis(1500), DurationConverter.parse("1.5s"));
        assertEquals(Duration.ofMinutes(3), DurationConverter.parse("3m"));
        assertEquals(Duration.ofHours(1), DurationConverter.parse("1h"));
        assertEquals(Duration.ofSeconds(2), DurationConverter.parse("PT2S"));
        assertEquals(Duration.ofMillis(250), DurationConverter.parse(" 250 MS "));
    }

    @Test
    void refusesAmbiguousOrNegativeValues() {
        for (String bad : new String[] {"5", "", "2 seconds", "-1s", "PT-1S", "1.5.2s", "p"}) {
            assertThrows(TypeConversionException.class, () -> DurationConverter.parse(bad), bad);
        }
    }

    @Test
    void formatsShort() {
        assertEquals("850ms", DurationConverter.format(Duration.ofMillis(850)));
        assertEquals("2s", DurationConverter.format(Duration.ofSeconds(2)));
        assertEquals("1.5s", DurationConverter.format(Duration.ofMillis(1500)));
        assertEquals("3m 20s", DurationConverter.format(Duration.ofSeconds(200)));
        assertEquals("1h 30m", DurationConverter.format(Duration.ofMinutes(90)));
    }
}

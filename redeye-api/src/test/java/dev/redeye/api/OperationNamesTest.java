package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OperationNamesTest {

    @Test
    void wellFormedNamesPass() {
        for (String ok : new String[] {"", "a", "emoji \uD83D\uDE00", "\u0000", "\uD834\uDD1E x", "x".repeat(10_000)}) {
            assertEquals(ok, OperationNames.requireWellFormed(ok));
        }
    }

    @Test
    void unpairedSurrogatesAreRefusedWithTheirIndex() {
        IllegalArgumentException high = assertThrows(IllegalArgumentException.class,
                () -> OperationNames.requireWellFormed("ab\uD800c"));
        assertTrue(high.getMessage().contains("high surrogate U+D800 at index 2"), high.getMessage());
        IllegalArgumentException end = assertThrows(IllegalArgumentException.class,
                () -> OperationNames.requireWellFormed("a\uD83D"));
        assertTrue(end.getMessage().contains("at index 1"), end.getMessage());
        IllegalArgumentException low = assertThrows(IllegalArgumentException.class,
                () -> OperationNames.requireWellFormed("\uDE00a"));
        assertTrue(low.getMessage().contains("low surrogate U+DE00 at index 0"), low.getMessage());
        assertThrows(NullPointerException.class, () -> OperationNames.requireWellFormed(null));
    }

    @Test
    void theEngineRuleRefusesEmptyTooLongNulAndUnpairedSurrogates() {
        for (String ok : new String[] {"a", "emoji \uD83D\uDE00", "new\nline", "x".repeat(OperationNames.MAX_LENGTH),
            "\u4e2d".repeat(OperationNames.MAX_LENGTH)}) {
            assertEquals(ok, OperationNames.requireValid(ok));
        }
        assertTrue(OperationNames.requireValid("\u4e2d".repeat(OperationNames.MAX_LENGTH))
                .getBytes(StandardCharsets.UTF_8).length <= OperationNames.MAX_UTF8_BYTES);
        assertTrue(OperationNames.requireValid("\uD83D\uDE00".repeat(OperationNames.MAX_LENGTH / 2))
                .getBytes(StandardCharsets.UTF_8).length <= OperationNames.MAX_UTF8_BYTES);
        assertTrue(message("").contains("must not be empty"));
        assertTrue(message("x".repeat(OperationNames.MAX_LENGTH + 1)).contains((OperationNames.MAX_LENGTH + 1)
                + " characters long"));
        assertTrue(message("a\u0000b").contains("U+0000 at index 1"));
        assertTrue(message("a\uDBFF").contains("unpaired high surrogate U+DBFF at index 1"));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> OperationNames.requireValid(null));
        assertEquals("operation", npe.getMessage());
    }

    private static String message(String name) {
        return assertThrows(IllegalArgumentException.class, () -> OperationNames.requireValid(name)).getMessage();
    }

    @Test
    void abbreviateEscapesControlCharactersAndCutsLongTextWithItsLength() {
        assertEquals("short", OperationNames.abbreviate("short"));
        assertEquals("null", OperationNames.abbreviate(null));
        assertEquals("a\\nb\\rc\\td\\u0000e\\u007f", OperationNames.abbreviate("a\nb\rc\td\u0000e\u007f"));
        String cut = OperationNames.abbreviate("y".repeat(500));
        assertEquals("y".repeat(80) + "...(500 chars)", cut);
        assertEquals("abc...(6 chars)", OperationNames.abbreviate("abcdef", 3));
        // never half a surrogate pair
        assertEquals("ab...(6 chars)", OperationNames.abbreviate("ab\uD83D\uDE00cd", 3));
        assertEquals("ab\uD83D\uDE00...(6 chars)", OperationNames.abbreviate("ab\uD83D\uDE00cd", 4));
        assertThrows(IllegalArgumentException.class, () -> OperationNames.abbreviate("x", 0));
    }
}

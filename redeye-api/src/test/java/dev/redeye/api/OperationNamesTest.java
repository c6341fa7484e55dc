package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}

package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import dev.redeye.store.redis.LuaLibrary.Fn;

/**
 * The two forms of the library: the Function library holds the whole body; each function's EVAL script holds it
 * without the sections marked for another function (the outcomes function's fold stays out of the record
 * function's script, whose every call runs the script's top level), and with its own. Malformed markers are
 * refused. That the scripts run is what the store's tests in {@link LuaRunner.Mode#SCRIPTS} show.
 */
class LuaLibraryTest {
    private static final LuaLibrary LIBRARY = LuaLibrary.standard();

    @Test
    void onlyTheOutcomesScriptHoldsTheOutcomesSection() {
        String body = LIBRARY.body();
        assertTrue(body.contains(LuaLibrary.ONLY + "outcomes\n"), "the library marks the outcomes section");
        assertTrue(LIBRARY.librarySource().endsWith(body), "the Function library holds every section");
        for (Fn f : Fn.values()) {
            String script = LIBRARY.scriptSource(f);
            boolean own = f == Fn.OUTCOMES;
            assertEquals(own, script.contains("local function fold("), f + ": the fold");
            assertEquals(own, script.contains("export('outcomes', recorded_outcomes)"), f + ": the export");
            assertTrue(script.contains("local function record("), f + ": the rules every function shares");
            assertTrue(script.contains("export('" + f.exported + "', "), f + ": its own export");
        }
    }

    @Test
    void aBodyWithoutSectionsIsEveryScriptsBody() {
        String body = "local a = 1\n-- a comment\nexport('record', a)\n";
        for (Fn f : Fn.values()) {
            assertEquals(body, LuaLibrary.scriptBody(body, f));
        }
    }

    @Test
    void aSectionIsLeftOutOfTheOtherScriptsWithItsMarkers() {
        String body = "a\n-- @only outcomes\nb\n-- @end\nc\n";
        assertEquals(body, LuaLibrary.scriptBody(body, Fn.OUTCOMES));
        assertEquals("a\nc\n", LuaLibrary.scriptBody(body, Fn.RECORD));
        String scripts = LuaLibrary.of("test", body).scriptSource(Fn.STATE);
        assertFalse(scripts.contains("\nb\n"), scripts);
    }

    @Test
    void malformedMarkersAreRefused() {
        for (String body : new String[] {"-- @only outcomes\nb\n", "b\n-- @end\n", "-- @only nothing\nb\n-- @end\n",
            "-- @only outcomes\n-- @only record\n-- @end\n-- @end\n"}) {
            assertThrows(IllegalStateException.class, () -> LuaLibrary.of("test", body), body);
        }
    }
}

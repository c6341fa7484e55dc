package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.TckRunner;
import java.util.EnumSet;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * A divergence from {@code Transitions} planted in a copy of the Lua library {@code redeye.lua} (never in the
 * production library: the copy runs through the store's own mechanism, {@code Builder.library}, as a library
 * of its own name) is found by the TCK's model rule R8.1 and shrunk to a replay of a few steps that names the
 * rule, the call and the field. Each planted line is in {@code closed_outcome}, the one rule both the record
 * path and the general path apply.
 */
class PlantedLuaDivergenceTest extends WithRedisPrefix {
    private static final Pattern SHRUNK = Pattern.compile("shrunk to (\\d+) steps?");

    /** Clients running {@code source} instead of {@code redeye.lua}. */
    private Supplier<Store> clients(String name, String source) {
        LuaLibrary library = LuaLibrary.of(name, source);
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestSupport.url());
        return () -> RedisStore.builder(new JedisPooled(p.address(), p.config())).prefix(prefix).closeClient(true)
                .library(library).build();
    }

    private static String planted(String find, String replace) {
        String original = LuaLibrary.standard().body();
        String copy = original.replace(find, replace);
        assertNotEquals(original, copy, "the line to change is no longer in redeye.lua: " + find);
        return copy;
    }

    /** The R8.1 result, which must have failed and shrunk to at most {@code steps} steps. */
    private static String assertFoundAndShrunk(TckReport report, int steps, String... fragments) {
        TckReport.RuleResult r = report.result(Rule.R8_1).orElseThrow();
        assertEquals(Status.FAILED, r.status(), report.format());
        String m = r.message();
        assertTrue(m.startsWith("R8.1 violated: "), m);
        Matcher shrunk = SHRUNK.matcher(m);
        assertTrue(shrunk.find(), m);
        assertTrue(Integer.parseInt(shrunk.group(1)) <= steps, "shrunk to more than " + steps + " steps:\n" + m);
        for (String f : fragments) {
            assertTrue(m.contains(f), "the replay must mention '" + f + "':\n" + m);
        }
        return m;
    }

    @Test
    void aGapComparisonOffByOneIsFoundAndShrunkToTwoFailures() {
        String copy = planted("now - last > max_gap", "now - last >= max_gap");
        TckReport report = TckRunner.run(clients("redeye.lua with >= for the gap", copy), EnumSet.of(Rule.R8_1),
                Map.of());
        String m = assertFoundAndShrunk(report, 2, "recordFailure", "maxGapBetweenFailures",
                "failures expected 2 but was 1");
        System.out.println(m); // the replay a store author would read
    }

    @Test
    void aLeakySuccessThatClearsIsFoundByTheModelAndByTheLeakyRules() {
        String copy = planted("return failures - 1, last, rate, samples, false", "return 0, last, rate, samples, false");
        TckReport report = TckRunner.run(clients("redeye.lua clearing on a leaky success", copy),
                EnumSet.of(Rule.R8_1, Rule.R9_1, Rule.R9_6, Rule.R2_9), Map.of());
        for (Rule leaky : EnumSet.of(Rule.R9_1, Rule.R9_6)) {
            assertEquals(Status.FAILED, report.result(leaky).orElseThrow().status(), report.format());
        }
        assertEquals(Status.PASSED, report.result(Rule.R2_9).orElseThrow().status(), report.format());
        String m = assertFoundAndShrunk(report, 4, "Strategy.LEAKY", "failures expected");
        System.out.println(m);
    }

    @Test
    void anEwmaInAnotherFormIsFoundAlthoughTheScriptedErrorRateRulesPass() {
        String copy = planted("r = decay * rate + (1 - decay) * x", "r = rate + (1 - decay) * (x - rate)");
        TckReport report = TckRunner.run(clients("redeye.lua with an incremental EWMA", copy),
                EnumSet.of(Rule.R8_1, Rule.R3_1, Rule.R3_2, Rule.R3_4), Map.of());
        for (Rule scripted : EnumSet.of(Rule.R3_1, Rule.R3_2, Rule.R3_4)) {
            assertEquals(Status.PASSED, report.result(scripted).orElseThrow().status(), report.format());
        }
        String m = assertFoundAndShrunk(report, 3, "recordOutcome", "errorRate expected", "not bit-exact");
        System.out.println(m);
    }
}

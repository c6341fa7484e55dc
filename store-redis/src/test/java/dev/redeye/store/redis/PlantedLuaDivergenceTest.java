package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.TckRunner;
import java.util.EnumSet;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * A divergence from {@code Transitions} planted in a copy of {@code state.lua} (never in the production
 * script: the copy runs through the store's own script mechanism, {@code Builder.stateScript}) is found by
 * the TCK's model rule R8.1 and shrunk to a replay of a few steps that names the rule, the call and the field.
 */
class PlantedLuaDivergenceTest {
    private static final Pattern SHRUNK = Pattern.compile("shrunk to (\\d+) steps?");
    private JedisPooled raw;
    private String prefix;

    @BeforeEach
    void open() {
        raw = RedisTestSupport.raw();
        prefix = RedisTestSupport.newPrefix();
    }

    @AfterEach
    void close() {
        RedisTestSupport.deleteAll(raw, prefix);
        raw.close();
    }

    /** Clients running {@code source} instead of {@code state.lua}. */
    private Supplier<Store> clients(String name, String source) {
        LuaScript script = LuaScript.of(name, source);
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse(RedisTestSupport.url());
        return () -> RedisStore.builder(new JedisPooled(p.address, p.config)).prefix(prefix).closeClient(true)
                .stateScript(script).build();
    }

    private static String planted(String find, String replace) {
        String original = LuaScript.load("state.lua").source();
        String copy = original.replace(find, replace);
        assertNotEquals(original, copy, "the line to change is no longer in state.lua: " + find);
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
        String copy = planted("now - s.lastFailureAt > max_gap", "now - s.lastFailureAt >= max_gap");
        TckReport report = TckRunner.run(clients("state.lua with >= for the gap", copy), EnumSet.of(Rule.R8_1),
                Map.of());
        String m = assertFoundAndShrunk(report, 2, "recordFailure", "maxGapBetweenFailures",
                "failures expected 2 but was 1");
        System.out.println(m); // the replay a store author would read
    }

    @Test
    void aLeakySuccessThatClearsIsFoundByTheModelAndByTheLeakyRules() {
        String copy = planted("n.failures = s.failures - 1", "n.failures = 0");
        TckReport report = TckRunner.run(clients("state.lua clearing on a leaky success", copy),
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
        String copy = planted("rate = decay * s.errorRate + (1 - decay) * x",
                "rate = s.errorRate + (1 - decay) * (x - s.errorRate)");
        TckReport report = TckRunner.run(clients("state.lua with an incremental EWMA", copy),
                EnumSet.of(Rule.R8_1, Rule.R3_1, Rule.R3_2, Rule.R3_4), Map.of());
        for (Rule scripted : EnumSet.of(Rule.R3_1, Rule.R3_2, Rule.R3_4)) {
            assertEquals(Status.PASSED, report.result(scripted).orElseThrow().status(), report.format());
        }
        String m = assertFoundAndShrunk(report, 3, "recordOutcome", "errorRate expected", "not bit-exact");
        System.out.println(m);
    }
}

package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.Strategy;
import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The map and properties forms of the rules, their relaxed keys, and the errors that name the bad key. */
class RuleConfigTest {

    @Test
    void theMapFormReadsEveryOption() {
        Consumer<HttpStateChange> callback = c -> { };
        Map<String, Object> charges = new LinkedHashMap<>();
        charges.put("type", "endpoint");
        charges.put("match", "/payments/v1/charges");
        charges.put("name", "charges");
        charges.put("failureThreshold", 3);
        charges.put("resetTimeout", "20s");
        charges.put("success-threshold", "2");
        charges.put("success_statuses", List.of(404, "409"));
        charges.put("FailureStatuses", "429, 5xx");
        charges.put("strategy", "consecutive");
        charges.put("onStateChange", callback);
        HttpRuleSet set = HttpRuleSet.fromMap(Map.of(
                "defaults", Map.of("failureThreshold", 7, "resetTimeout", "PT2M", "strategy", "leaky",
                        "successStatuses", "3xx"),
                "rules", List.of(Map.of("type", "service", "match", "/payments",
                        "skipList", List.of("/payments/health", "/payments/status")), charges)));
        assertEquals(7, set.defaults().failureThreshold());
        assertEquals(Duration.ofMinutes(2), set.defaults().resetTimeout());
        assertEquals(StatusCodes.parse("3xx"), set.defaults().successStatuses());
        HttpRule service = set.rules().get(0);
        assertEquals(Level.SERVICE, service.level());
        assertEquals(List.of("/payments/health", "/payments/status"), service.skipList());
        assertFalse(service.failureThreshold().isPresent(), "unset: the defaults apply");
        HttpRule c = set.rules().get(1);
        assertEquals("charges", c.key());
        assertEquals("endpoint:charges", c.operation());
        assertEquals(3, c.failureThreshold().orElseThrow());
        assertEquals(Duration.ofSeconds(20), c.resetTimeout().orElseThrow());
        assertEquals(2, c.successThreshold().orElseThrow());
        assertEquals(StatusCodes.parse("404,409"), c.successStatuses().orElseThrow());
        assertTrue(c.failureStatuses().orElseThrow().contains(429) && c.failureStatuses().orElseThrow().contains(503));
        assertEquals(Strategy.CONSECUTIVE, c.strategy().orElseThrow());
        assertSame(callback, c.onStateChange().orElseThrow());
    }

    @Test
    void thePropertiesFormIsTheSameShapeFlat() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(String.join("\n",
                "redeye.http.defaults.failure-threshold=4",
                "redeye.http.defaults.resetTimeout=500ms",
                "redeye.http.rules[0].type=service",
                "redeye.http.rules[0].match=/payments",
                "redeye.http.rules[0].skip-list=/payments/health, /payments/status",
                "redeye.http.rules[1].type=endpoint",
                "redeye.http.rules[1].match=/payments/v1/refunds",
                "redeye.http.rules[1].success-statuses[0]=404",
                "redeye.http.rules[1].success-statuses[1]=410",
                "redeye.http.rules[10].type=endpoint",
                "redeye.http.rules[10].match=/payments/v1",
                "other.key=ignored")));
        HttpRuleSet set = HttpRuleSet.fromProperties(p, "redeye.http.");
        assertEquals(4, set.defaults().failureThreshold());
        assertEquals(Duration.ofMillis(500), set.defaults().resetTimeout());
        assertEquals(3, set.rules().size());
        assertEquals(List.of("/payments/health", "/payments/status"), set.rules().get(0).skipList());
        assertEquals(StatusCodes.of(404, 410), set.rules().get(1).successStatuses().orElseThrow());
        assertEquals("/payments/v1", set.rules().get(2).match(), "rules[10] comes after rules[1], by index");
        assertEquals("/payments/v1/refunds", set.match(Level.ENDPOINT, "/payments/v1/refunds/7").match());
        assertEquals("/payments/v1", set.match(Level.ENDPOINT, "/payments/v1/charges").match());
        assertNull(set.match(Level.SERVICE, "/payments/health/deep"), "skipped");
    }

    @Test
    void badInputIsRefusedNamingTheKey() {
        assertMessage("rules[0].type is required", Map.of("rules", List.of(Map.of("match", "/x"))));
        assertMessage("rules[0].match is required", Map.of("rules", List.of(Map.of("type", "service"))));
        assertMessage("rules[0].type: unknown rule type 'api'",
                Map.of("rules", List.of(Map.of("type", "api", "match", "/x"))));
        assertMessage("unknown key 'rules[0].treshold'",
                Map.of("rules", List.of(Map.of("type", "service", "match", "/x", "treshold", 3))));
        assertMessage("rules[0].failureThreshold must be an integer, was 'many'",
                Map.of("rules", List.of(Map.of("type", "service", "match", "/x", "failureThreshold", "many"))));
        assertMessage("rules[0]: failureThreshold must be >= 1, was 0",
                Map.of("rules", List.of(Map.of("type", "service", "match", "/x", "failureThreshold", 0))));
        assertMessage("rules[0].resetTimeout must be a duration",
                Map.of("rules", List.of(Map.of("type", "service", "match", "/x", "resetTimeout", "soon"))));
        assertMessage("rules[0].successStatuses: bad HTTP status '6xx'",
                Map.of("rules", List.of(Map.of("type", "endpoint", "match", "/x", "successStatuses", "6xx"))));
        assertMessage("rules[0]: skipList is for service rules only",
                Map.of("rules", List.of(Map.of("type", "endpoint", "match", "/x", "skipList", "/y"))));
        assertMessage("defaults.strategy: unknown strategy 'fast'", Map.of("defaults", Map.of("strategy", "fast")));
        assertMessage("two endpoint rules have the key '/x'", Map.of("rules", List.of(
                Map.of("type", "endpoint", "match", "/x"), Map.of("type", "endpoint", "match", "/x"))));
        assertMessage("rules[0].onStateChange must be a Consumer",
                Map.of("rules", List.of(Map.of("type", "endpoint", "match", "/x", "onStateChange", "log"))));
        Properties p = new Properties();
        p.setProperty("h.rules[0].type", "service");
        p.setProperty("h.rules[0].match", "/x");
        p.setProperty("h.rules[0].resetTimeout", "-1s");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HttpRuleSet.fromProperties(p, "h."));
        assertTrue(e.getMessage().startsWith("under 'h.': rules[0].resetTimeout"), e.getMessage());
    }

    /** The rule options take the engine's names and checks: a bad value names the option, as the engine does. */
    @Test
    void ruleOptionsAreCheckedByTheEnginesOptions() {
        dev.redeye.api.InvalidOptionException e = assertThrows(dev.redeye.api.InvalidOptionException.class,
                () -> HttpRule.service("/x").resetTimeout(java.time.Duration.ZERO));
        assertEquals("resetTimeout", e.option());
        e = assertThrows(dev.redeye.api.InvalidOptionException.class,
                () -> HttpRule.endpoint("/x").successThreshold(0));
        assertEquals("successThreshold", e.option());
        e = assertThrows(dev.redeye.api.InvalidOptionException.class,
                () -> RuleDefaults.defaults().withFailureThreshold(0));
        assertEquals("failureThreshold", e.option());
        assertMessage("defaults.failureThreshold must be >= 1, was 0",
                Map.of("defaults", Map.of("failureThreshold", 0)));
        assertEquals(dev.redeye.api.Policy.RESET_TIMEOUT.defaultValue(), RuleDefaults.defaults().resetTimeout());
    }

    @Test
    void statusCodesParseCodesClassesAndRanges() {
        StatusCodes s = StatusCodes.parse(" 404, 5xx ,420-429");
        assertTrue(s.contains(404) && s.contains(500) && s.contains(599) && s.contains(425));
        assertFalse(s.contains(200) || s.contains(430) || s.contains(403));
        assertEquals("404,5xx,420-429", s.toString());
        assertTrue(StatusCodes.parse("").isEmpty());
        for (String bad : new String[] {"99", "600", "abc", "5xxx", "429-420", "7xx"}) {
            assertThrows(IllegalArgumentException.class, () -> StatusCodes.parse(bad), bad);
        }
    }

    private static void assertMessage(String fragment, Map<String, ?> config) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpRuleSet.fromMap(config));
        assertTrue(e.getMessage().contains(fragment), "expected '" + fragment + "' in: " + e.getMessage());
    }
}

package dev.redeye.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Runs each example's {@code main} with stdout captured and checks what it printed. */
class ExamplesTest {

    /** Runs {@code main} of {@code example} with {@code System.out} captured; returns the lines it printed. */
    private static List<String> runMain(Class<?> example) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            example.getMethod("main", String[].class).invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(original);
        }
        String out = buffer.toString(StandardCharsets.UTF_8);
        original.print(out);
        return out.lines().toList();
    }

    private static boolean has(List<String> lines, String prefix) {
        return lines.stream().anyMatch(l -> l.startsWith(prefix));
    }

    @Test
    void prometheusExamplePrintsAScrapeWithTheBreakersMeters() throws Exception {
        List<String> lines = runMain(PrometheusExample.class);
        assertTrue(has(lines, "# rejected: "), "the rejection is printed");
        String tags = "{app=\"example\",kind=\"successful\",name=\"inventory\"}";
        assertTrue(has(lines, "redeye_circuitbreaker_calls_seconds_count" + tags + " 3"), String.join("\n", lines));
        assertTrue(has(lines, "redeye_circuitbreaker_calls_seconds_count{app=\"example\",kind=\"failed\","
                + "name=\"inventory\"} 2"), String.join("\n", lines));
        assertTrue(has(lines, "redeye_circuitbreaker_not_permitted_calls_total{app=\"example\",kind=\"not_permitted\",name=\"inventory\"} 1"));
        assertTrue(has(lines, "redeye_circuitbreaker_state{app=\"example\",name=\"inventory\",state=\"open\"} 1"));
        assertTrue(has(lines, "redeye_circuitbreaker_state{app=\"example\",name=\"inventory\",state=\"closed\"} 0"));
        assertTrue(has(lines, "# TYPE redeye_circuitbreaker_calls_seconds summary"), "a timer");
    }

    @Test
    void reactorExampleOpensAfterTwoFailuresAndAnswersRejectionsWithTheFallback() throws Exception {
        List<String> lines = runMain(ReactorExample.class);
        assertEquals(List.of(
                "subscription 1: price 42",
                "subscription 2: price 42",
                "subscription 3: fallback (IOException)",
                "subscription 4: fallback (IOException)",
                "subscription 5: fallback (CircuitOpenException)",
                "subscription 6: fallback (CircuitOpenException)",
                "calls that reached the pricing service: 4",
                "breaker: OPEN, Metrics[calls=4, successes=2, failures=2, ignored=0, rejections=2, storeErrors=0, "
                        + "trials=0]",
                "stock: [apple, pear, plum], first: apple",
                "stock breaker: CLOSED, Metrics[calls=3, successes=2, failures=0, ignored=1, rejections=0, "
                        + "storeErrors=0, trials=0]"), lines);
    }

    @Test
    void kotlinExampleOpensAfterTwoFailuresAndNeverCountsACancellation() throws Exception {
        List<String> lines = runMain(KotlinExample.class);
        assertEquals(List.of(
                "call 1: price 42",
                "call 2: price 42",
                "call 3: fallback (IOException)",
                "call 4: fallback (IOException)",
                "call 5: fallback (CircuitOpenException)",
                "calls that reached the pricing service: 4",
                "pricing: OPEN, Metrics[calls=4, successes=2, failures=2, ignored=0, rejections=1, storeErrors=0, "
                        + "trials=0]",
                "inventory after a cancelled call: CLOSED, Metrics[calls=1, successes=0, failures=0, ignored=1, "
                        + "rejections=0, storeErrors=0, trials=0]",
                "stock: [apple, pear], Metrics[calls=1, successes=1, failures=0, ignored=0, rejections=0, "
                        + "storeErrors=0, trials=0]"), lines);
    }

    @Test
    void interceptorExampleOpensOnlyTheFailingMethod() throws Exception {
        List<String> lines = runMain(InterceptorExample.class);
        assertEquals(4, lines.stream().filter(l -> l.startsWith("shop.Quotes/GetQuote -> UNAVAILABLE")).count(),
                "3 from the server, then the breaker's own");
        assertEquals(4, lines.stream().filter(l -> l.equals("shop.Orders/Validate -> INVALID_ARGUMENT")).count(),
                "a client error is not the dependency's failure");
        assertEquals(4, lines.stream().filter(l -> l.equals("shop.Orders/Place -> OK")).count());
        assertTrue(lines.contains("calls that reached the server: 11"), lines.toString());
        assertTrue(lines.contains("shop.Quotes/GetQuote: OPEN"));
        assertTrue(lines.contains("shop.Orders/Validate: CLOSED"));
        assertTrue(lines.contains("shop.Orders/Place: CLOSED"));
    }
}

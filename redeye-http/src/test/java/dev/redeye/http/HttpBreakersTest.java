package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Strategy;
import dev.redeye.tck.MutableClock;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The two-level model against a real HTTP server (the JDK's), through the guarded {@code HttpClient}: rule
 * order and first match, skip lists, query stripping, status precedence, leaky counting, both levels tripping
 * independently, a request matching nothing, and the release of a service trial claim when the endpoint
 * rejects. Time is a virtual clock.
 */
class HttpBreakersTest {
    private final MutableClock clock = new MutableClock(1_000_000L);
    private final HttpClient jdk = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private ScriptedServer server;
    private HttpBreakers breakers;
    private HttpClient client;

    @BeforeEach
    void start() throws IOException {
        server = new ScriptedServer();
    }

    @AfterEach
    void stop() {
        if (breakers != null) {
            breakers.close();
        }
        server.close();
    }

    private void use(HttpRuleSet rules) {
        use(HttpBreakers.builder(rules));
    }

    private void use(HttpBreakers.Builder b) {
        breakers = b.clock(clock).ticker(clock).customize(cb -> cb.jitter(0)).build();
        client = RedeyeHttpClient.wrap(jdk, breakers);
    }

    /** Sends a GET; the status, or -1 when the request got no response (an IOException). */
    private int get(String pathAndQuery) throws InterruptedException {
        try {
            return client.send(HttpRequest.newBuilder(server.uri(pathAndQuery)).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode();
        } catch (IOException e) {
            return -1;
        }
    }

    private HttpCircuitOpenException rejected(String pathAndQuery) {
        return assertThrows(HttpCircuitOpenException.class, () -> get(pathAndQuery), pathAndQuery + " must be rejected");
    }

    @Test
    void theFirstMatchingRuleOfEachLevelWins() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.endpoint("/v1/charges").name("charges").failureThreshold(2))
                .rule(HttpRule.endpoint("/v1").name("v1").failureThreshold(2))
                .rule(HttpRule.service("/v1").name("api").failureThreshold(100))
                .rule(HttpRule.service("/").name("everything").failureThreshold(1))
                .build());
        HttpPermit p = breakers.acquire(server.uri("/v1/charges/7"));
        assertEquals(Optional.of("charges"), p.endpointKey(), "the first endpoint rule in order wins");
        assertEquals(Optional.of("api"), p.serviceKey(), "the first service rule in order wins");
        p.release();
        server.status("/v1/charges", 503);
        assertEquals(503, get("/v1/charges/1"));
        assertEquals(503, get("/v1/charges/2"));
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "charges"));
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "v1"), "a later match never counts");
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "everything"),
                "the later service rule (threshold 1) never saw the failures");
        assertEquals(200, get("/v1/customers"), "another endpoint of the service still passes");
        HttpCircuitOpenException e = rejected("/v1/charges/3");
        assertEquals(Level.ENDPOINT, e.level());
        assertEquals("charges", e.key());
        assertEquals("endpoint:charges", e.operation());
        assertEquals(Duration.ofSeconds(60), e.retryAfter().orElseThrow(), "the default resetTimeout, nothing elapsed");
        assertEquals(List.of("/v1/charges/1", "/v1/charges/2", "/v1/customers"), server.received(),
                "the rejected request never reached the server");
    }

    @Test
    void aSkipListKeepsEndpointsOutOfTheService() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.service("/payments").skip("/payments/health", "/reports").failureThreshold(2))
                .rule(HttpRule.service("/").name("catch-all").failureThreshold(1))
                .build());
        server.status("/payments/health", 500).status("/payments/reports", 503);
        for (int i = 0; i < 5; i++) {
            assertEquals(500, get("/payments/health"));
            assertEquals(503, get("/payments/reports/daily"));
        }
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "/payments"),
                "skipped endpoints' failures are not counted toward the service");
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "catch-all"),
                "a skipped request does not fall through to a later service rule");
        assertFalse(breakers.acquire("/payments/health").isGuarded());
        server.status("/payments/v1", 502);
        assertEquals(502, get("/payments/v1/a"));
        assertEquals(502, get("/payments/v1/b"));
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.SERVICE, "/payments"));
        HttpCircuitOpenException e = rejected("/payments/v1/c");
        assertEquals(Level.SERVICE, e.level());
        assertEquals(500, get("/payments/health?verbose=1"),
                "the skipped health check still reaches the server while the service is open");
    }

    @Test
    void theQueryStringIsNeverMatchedNorShown() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.endpoint("token").failureThreshold(1))
                .rule(HttpRule.endpoint("/v1/charges").failureThreshold(1))
                .build());
        server.status("/v1", 500);
        assertEquals(500, get("/v1/items?token=s3cr3t-token"));
        assertEquals(500, get("/v1/items?x=1#token"));
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "token"),
                "a rule matching only the query string must never match");
        assertFalse(breakers.acquire("/v1/items?token=1").isGuarded());
        assertFalse(breakers.acquire("https://api.example.com/v1/items?token=1").isGuarded());
        assertEquals(500, get("/v1/charges?card=4111111111111111"));
        HttpCircuitOpenException e = rejected("/v1/charges?card=4111111111111111&cvc=123");
        assertFalse(e.getMessage().contains("4111") || e.getMessage().contains("cvc"), e.getMessage());
        List<String> lines = new ArrayList<>();
        breakers.printStatus(lines::add);
        assertFalse(String.join("\n", lines).contains("4111"), lines.toString());
        assertEquals(List.of("/v1/items?token=s3cr3t-token", "/v1/items?x=1", "/v1/charges?card=4111111111111111"),
                server.received(), "the query still reaches the server unchanged");
    }

    @Test
    void statusPrecedenceIsFailureStatusesThenSuccessStatusesThenTwoHundreds() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.endpoint("/e").failureThreshold(1).strategy(Strategy.CONSECUTIVE)
                        .successStatuses("404, 500, 409").failureStatuses("500, 201"))
                .build());
        // status -> is it a failure?
        int[][] cases = {{200, 0}, {204, 0}, {201, 1}, {404, 0}, {409, 0}, {500, 1}, {302, 1}, {400, 1}, {503, 1}};
        for (int[] c : cases) {
            breakers.resetAll();
            server.status("/e", c[0]);
            assertEquals(c[0], get("/e/x"));
            assertEquals(c[1] == 1 ? BreakerStatus.OPEN : BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "/e"),
                    "status " + c[0] + (c[1] == 1 ? " must be a failure" : " must be a success"));
        }
        breakers.resetAll();
        server.status("/e", ScriptedServer.DROP);
        assertEquals(-1, get("/e/x"), "the server closed the connection without a response");
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/e"), "no response is a failure");
    }

    @Test
    void defaultsApplyToRulesThatDoNotSetAnOption() throws Exception {
        use(HttpRuleSet.builder()
                .defaults(RuleDefaults.defaults().withFailureThreshold(2).withSuccessStatuses(StatusCodes.parse("4xx")))
                .rule(HttpRule.endpoint("/a"))
                .rule(HttpRule.endpoint("/b").successStatuses("404"))
                .build());
        server.status("/a", 404).status("/b", 400);
        for (int i = 0; i < 3; i++) {
            assertEquals(404, get("/a"));
        }
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "/a"), "4xx is a success by the defaults");
        assertEquals(400, get("/b"));
        assertEquals(400, get("/b"));
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/b"),
                "the rule's own successStatuses replace the defaults' (400 fails), threshold 2 from the defaults");
    }

    @Test
    void leakyCountingOpensWhereConsecutiveNeverWould() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.endpoint("/leaky").failureThreshold(3))
                .rule(HttpRule.endpoint("/consecutive").failureThreshold(3).strategy(Strategy.CONSECUTIVE))
                .build());
        String pattern = "FFSFSFF"; // leaky levels 1 2 1 2 1 2 3
        for (String path : new String[] {"/leaky", "/consecutive"}) {
            for (int i = 0; i < pattern.length(); i++) {
                server.status(path, pattern.charAt(i) == 'F' ? 503 : 200);
                int expected = pattern.charAt(i) == 'F' ? 503 : 200;
                assertEquals(expected, get(path), path + " call " + (i + 1));
            }
        }
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/leaky"),
                "leaky (the default): F F S F S F F reaches 3");
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "/consecutive"),
                "consecutive: every success cleared the count");
        assertEquals(2, breakers.breaker(Level.ENDPOINT, "/consecutive").state("endpoint:/consecutive").failures());
        server.status("/leaky", 200);
        rejected("/leaky");
    }

    @Test
    void bothLevelsTripIndependently() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.service("/api").failureThreshold(4).resetTimeout(Duration.ofSeconds(30)))
                .rule(HttpRule.endpoint("/api/a").failureThreshold(2).resetTimeout(Duration.ofSeconds(10)))
                .build());
        server.status("/api/a", 500);
        assertEquals(500, get("/api/a"));
        assertEquals(500, get("/api/a"));
        assertEquals(Level.ENDPOINT, rejected("/api/a").level(), "endpoint /api/a opened after 2 failures");
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "/api"), "service count 2 of 4");
        assertEquals(200, get("/api/b"), "the service still admits its other endpoints");
        // the success on /api/b leaked one failure out of the service count: 1 of 4
        server.status("/api/b", 503);
        for (int i = 0; i < 3; i++) {
            assertEquals(503, get("/api/b"));
        }
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.SERVICE, "/api"));
        HttpCircuitOpenException e = rejected("/api/c");
        assertEquals(Level.SERVICE, e.level());
        assertEquals("/api", e.key());
        assertEquals(Duration.ofSeconds(30), e.retryAfter().orElseThrow());
        clock.advance(Duration.ofSeconds(11));
        assertEquals(BreakerStatus.HALF_OPEN, breakers.stateOf(Level.ENDPOINT, "/api/a"));
        assertEquals(Level.SERVICE, rejected("/api/a").level(),
                "the endpoint could try a trial, but the service level is still open: both must admit");
        assertEquals(Duration.ofSeconds(19), rejected("/api/a").retryAfter().orElseThrow());
    }

    @Test
    void aServiceTrialClaimIsReleasedWhenTheEndpointRejects() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.service("/api").failureThreshold(2).resetTimeout(Duration.ofSeconds(10)))
                .rule(HttpRule.endpoint("/api/a").failureThreshold(1).resetTimeout(Duration.ofMinutes(10)))
                .build());
        server.status("/api", 500);
        assertEquals(500, get("/api/a")); // endpoint a opens; service 1 of 2
        assertEquals(500, get("/api/b")); // service opens
        clock.advance(Duration.ofSeconds(10));
        assertEquals(BreakerStatus.HALF_OPEN, breakers.stateOf(Level.SERVICE, "/api"));
        HttpCircuitOpenException e = rejected("/api/a");
        assertEquals(Level.ENDPOINT, e.level(), "the service admitted a trial, the endpoint (open 10 min) rejected");
        server.status("/api", 200);
        HttpPermit trial = breakers.acquire(server.uri("/api/b"));
        assertTrue(trial.isTrial(), "the service's trial claim went back at once, so /api/b wins it now");
        trial.onStatus(200);
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "/api"), "the trial closed the service");
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/api/a"));
    }

    @Test
    void aRequestMatchingNoRulePassesUntouched() throws Exception {
        use(HttpRuleSet.builder().rule(HttpRule.service("/payments").failureThreshold(1)).build());
        server.status("/other", 503);
        for (int i = 0; i < 10; i++) {
            assertEquals(503, get("/other/x?i=" + i));
        }
        assertEquals(10, server.received().size());
        assertFalse(breakers.acquire(server.uri("/other")).isGuarded());
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.SERVICE, "/payments"));
        assertEquals(0, breakers.breaker(Level.SERVICE, "/payments").allMetrics().values().stream()
                .mapToLong(m -> m.calls()).sum(), "no breaker saw a call");
    }

    @Test
    void callbacksRunPerRuleFirstThenRegistryWideAndAreIsolated() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        use(HttpBreakers.builder(HttpRuleSet.builder()
                        .rule(HttpRule.endpoint("/a").failureThreshold(1).onStateChange(c -> {
                            order.add("rule " + c);
                            throw new IllegalStateException("a rule callback that throws");
                        }))
                        .rule(HttpRule.endpoint("/b").failureThreshold(1))
                        .build())
                .onStateChange(c -> {
                    order.add("registry " + c.operation() + " " + c.level() + " " + c.key() + " " + c.to());
                    throw new IllegalStateException("a registry callback that throws");
                }));
        server.status("/", 500);
        assertEquals(500, get("/a"), "a throwing callback never reaches the request");
        assertEquals(500, get("/b"));
        assertEquals(List.of("rule endpoint:/a CLOSED -> OPEN (opened)", "registry endpoint:/a ENDPOINT /a OPEN",
                "registry endpoint:/b ENDPOINT /b OPEN"), order);
        breakers.reset(Level.ENDPOINT, "/a");
        assertEquals("registry endpoint:/a ENDPOINT /a CLOSED", order.get(order.size() - 1));
        int before = order.size();
        breakers.resetAll(); // /a is closed and clean: only /b closes
        assertEquals(List.of("registry endpoint:/b ENDPOINT /b CLOSED"), order.subList(before, order.size()),
                "no CLOSED -> CLOSED callback for a breaker already closed");
        breakers.resetAll();
        assertEquals(before + 1, order.size());
    }

    @Test
    void operateReadsResetsAndPrintsEveryBreaker() throws Exception {
        use(HttpRuleSet.builder()
                .rule(HttpRule.service("/api").name("api").failureThreshold(3))
                .rule(HttpRule.endpoint("/api/a").failureThreshold(1).resetTimeout(Duration.ofSeconds(20)))
                .build());
        server.status("/api/a", 500);
        assertEquals(500, get("/api/a"));
        clock.advance(Duration.ofMillis(7_500));
        List<BreakerSnapshot> snaps = breakers.snapshots();
        assertEquals(2, snaps.size());
        assertEquals(BreakerStatus.CLOSED, snaps.get(0).status());
        assertEquals(1, snaps.get(0).state().failures());
        assertEquals(BreakerStatus.OPEN, snaps.get(1).status());
        assertEquals(Duration.ofMillis(12_500), snaps.get(1).retryAfter().orElseThrow());
        List<String> lines = new ArrayList<>();
        breakers.printStatus(lines::add);
        assertEquals(List.of("service   api  CLOSED       failures 1/3",
                "endpoint  /api/a  OPEN         failures 1/1  retry in 12.5 s"), lines);
        breakers.printStatus(org.slf4j.LoggerFactory.getLogger("redeye.http.status"));
        breakers.reset(Level.ENDPOINT, "/api/a");
        assertEquals(BreakerStatus.CLOSED, breakers.stateOf(Level.ENDPOINT, "/api/a"));
        breakers.breaker(Level.SERVICE, "api").forceOpen(breakers.operation(Level.SERVICE, "api"));
        assertEquals(BreakerStatus.FORCED_OPEN, breakers.stateOf(Level.SERVICE, "api"));
        HttpCircuitOpenException forced = rejected("/api/b");
        assertEquals(BreakerStatus.FORCED_OPEN, forced.status());
        assertEquals(Optional.empty(), forced.retryAfter(), "no trial until a reset: no time to retry at");
        assertEquals(-1, forced.retryAfterMillis());
        assertEquals("circuit 'service:api' is FORCED_OPEN; no trial until it is reset", forced.getMessage());
        assertEquals(Optional.empty(), breakers.snapshots().get(0).retryAfter());
        lines.clear();
        breakers.printStatus(lines::add);
        assertEquals("service   api  FORCED_OPEN  failures 1/3  until reset", lines.get(0));
        breakers.resetAll();
        assertTrue(breakers.snapshots().stream().allMatch(s -> s.status() == BreakerStatus.CLOSED
                && s.state().failures() == 0));
        long version = breakers.breaker(Level.SERVICE, "api").state("service:api").version();
        breakers.resetAll(); // everything closed and clean already: nothing to do
        assertEquals(version, breakers.breaker(Level.SERVICE, "api").state("service:api").version());
        assertThrows(IllegalArgumentException.class, () -> breakers.stateOf(Level.SERVICE, "/api/a"));
    }
}

package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.support.StoreUris;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * status, force-open, force-half-open, reset and watch against the real Redis and PostgreSQL stores
 * (REDEYE_REDIS_URL, REDEYE_POSTGRES_URL, or the local defaults; failing with how to provide it when the server does not answer).
 * Each test uses a fresh operation name with characters a naive store would mangle.
 */
class OpsCommandsTest {

    static Stream<String> stores() {
        return Stream.of(Cli.redisUri(), Cli.postgresUri());
    }

    static JsonNode status(String uri, String op) throws Exception {
        Cli.Run run = Cli.run("status", "--store", uri, "--json", op);
        assertEquals(0, run.exit(), run::toString);
        JsonNode rows = Json.mapper().readTree(run.out());
        assertEquals(1, rows.size(), run::toString);
        assertEquals(op, rows.get(0).get("operation").asText());
        return rows.get(0);
    }

    static CircuitBreaker application(String uri) {
        // Another "process": its own client of the store, the same timing as the commands' defaults.
        return CircuitBreaker.builder().store(Stores.open(uri)).resetTimeout(Duration.ofSeconds(60)).build();
    }

    @ParameterizedTest
    @MethodSource("stores")
    void forceOpenHalfOpenAndResetControlEveryInstance(String uri) throws Exception {
        Cli.assertReachable(uri);
        String op = Cli.uniqueOperation();

        assertUnknown(Cli.run("status", "--store", uri, op), op);

        Cli.Run open = Cli.run("force-open", "--store", uri, op);
        assertEquals(0, open.exit(), open::toString);
        assertTrue(open.out().contains("CLOSED -> FORCED_OPEN"), open::toString);
        JsonNode forced = status(uri, op);
        assertEquals("FORCED_OPEN", forced.get("status").asText());
        assertTrue(forced.get("forced").asBoolean());
        Cli.Run table = Cli.run("status", "--store", uri, op);
        assertEquals(0, table.exit(), table::toString);
        assertTrue(table.out().startsWith("OPERATION"), table::toString);
        assertTrue(table.out().contains(op), table::toString);
        // A store starts a key's life at its own version base (contract v2: Redis and PostgreSQL use their
        // clock in microseconds), so versions are checked relative to the first transition's.
        long first = forced.get("version").asLong();
        assertTrue(first >= 1, "version after the first transition: " + first);
        // An application's breaker, on its own client, now rejects without running the call.
        try (CircuitBreaker app = application(uri)) {
            assertThrows(CircuitOpenException.class, () -> app.execute(op, () -> "must not run"));
        }

        Cli.Run half = Cli.run("force-half-open", "--store", uri, op);
        assertEquals(0, half.exit(), half::toString);
        JsonNode halfOpen = status(uri, op);
        assertEquals("HALF_OPEN", halfOpen.get("status").asText());
        assertEquals(0, halfOpen.get("retryAfterMs").asLong());
        // The next call anywhere is the trial; its success closes the breaker for everyone.
        try (CircuitBreaker app = application(uri)) {
            assertEquals("trial", app.execute(op, () -> "trial"));
        }
        JsonNode closedByTrial = status(uri, op);
        assertEquals("CLOSED", closedByTrial.get("status").asText());
        assertEquals(first + 2, closedByTrial.get("version").asLong());

        assertEquals(0, Cli.run("force-open", "--store", uri, op).exit());
        Cli.Run reset = Cli.run("reset", "--store", uri, op);
        assertEquals(0, reset.exit(), reset::toString);
        assertTrue(reset.out().contains("FORCED_OPEN -> CLOSED"), reset::toString);
        JsonNode closed = status(uri, op);
        assertEquals("CLOSED", closed.get("status").asText());
        assertEquals(first + 4, closed.get("version").asLong());
        try (CircuitBreaker app = application(uri)) {
            assertEquals("ok", app.execute(op, () -> "ok"));
        }
    }

    @ParameterizedTest
    @MethodSource("stores")
    void statusShowsAnOpenBreakerWithItsRetryAfter(String uri) throws Exception {
        Cli.assertReachable(uri);
        String op = Cli.uniqueOperation();
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri)).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(30)).jitter(0).build()) {
            for (int i = 0; i < 2; i++) {
                assertThrows(IllegalStateException.class, () -> app.execute(op, () -> {
                    throw new IllegalStateException("down");
                }));
            }
        }
        JsonNode row = status(uri, op);
        assertEquals("OPEN", row.get("status").asText(), row::toPrettyString);
        assertEquals(2, row.get("failures").asInt());
        long retry = row.get("retryAfterMs").asLong();
        // Opened just now with a 60 s nominal window (the command's default --reset-timeout).
        assertTrue(retry > 50_000 && retry <= 60_000, row::toPrettyString);
        // The application's own timing gives its own window.
        Cli.Run run = Cli.run("status", "--store", uri, "--reset-timeout", "30s", "--json", op);
        long appRetry = Json.mapper().readTree(run.out()).get(0).get("retryAfterMs").asLong();
        assertTrue(appRetry > 20_000 && appRetry <= 30_000, run::toString);
        assertEquals(0, Cli.run("reset", "--store", uri, op).exit());
    }

    @ParameterizedTest
    @MethodSource("stores")
    void watchPrintsTransitionsFromTheFeed(String uri) throws Exception {
        Cli.assertReachable(uri);
        assertWatchPrintsTransitions(uri);
    }

    /** {@code watch --count 2} on {@code uri} prints the two transitions made while it runs, as JSON lines. */
    static void assertWatchPrintsTransitions(String uri) throws Exception {
        String op = Cli.uniqueOperation();
        CompletableFuture<Cli.Run> watch = CompletableFuture.supplyAsync(
                () -> Cli.run("watch", "--store", uri, "--count", "2", "--timeout", "30s", "--json", op));
        // The subscription may take a moment to be live: keep making transitions until the watch has two.
        List<Cli.Run> controls = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean open = false;
        while (!watch.isDone() && System.nanoTime() < deadline) {
            controls.add(Cli.run(open ? "reset" : "force-open", "--store", uri, op));
            open = !open;
            Thread.sleep(300);
        }
        Cli.Run run = watch.get(10, TimeUnit.SECONDS);
        assertEquals(0, run.exit(), run::toString);
        controls.forEach(c -> assertEquals(0, c.exit(), c::toString));
        List<String> lines = run.out().strip().lines().toList();
        assertEquals(2, lines.size(), run::toString);
        long lastVersion = 0;
        for (String line : lines) {
            JsonNode e = Json.mapper().readTree(line);
            assertEquals(op, e.get("operation").asText(), line);
            assertTrue(e.get("kind").asText().startsWith("forced_"), line);
            assertTrue(e.get("version").asLong() > lastVersion, line);
            lastVersion = e.get("version").asLong();
        }
        assertTrue(run.err().contains("watching"), run::toString);
        Cli.run("reset", "--store", uri, op);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void watchWithACountFailsWhenTheTimeoutPassesFirst(String uri) {
        Cli.assertReachable(uri);
        Cli.Run run = Cli.run("watch", "--store", uri, "--count", "1", "--timeout", "300ms", Cli.uniqueOperation());
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.err().contains("0 of 1 event(s) before the timeout"), run::toString);
        assertEquals("", run.out(), run::toString);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void simulateRunsOnTheRealStoreAndCleansUp(String uri) throws Exception {
        Cli.assertReachable(uri);
        Cli.Run run = Cli.run("simulate", "--store", uri, "--instances", "4", "--threads-per-instance", "1",
                "--duration", "2500ms", "--down-at", "300ms", "--up-at", "1500ms", "--reset-timeout", "400ms",
                "--backoff-multiplier", "1", "--think-time", "20ms", "--progress", "never", "--json");
        assertEquals(0, run.exit(), run::toString);
        JsonNode r = Json.mapper().readTree(run.out());
        assertEquals(1, r.get("openings").asLong(), r::toPrettyString);
        assertEquals(1, r.get("maxConcurrentTrials").asInt(), r::toPrettyString);
        assertTrue(r.get("reachedDeadDependencyByNormalCalls").asLong() <= 5 + 3, r::toPrettyString);
        assertFalse(r.get("store").asText().contains("password"), r::toPrettyString);
        // The run's state was deleted afterwards.
        assertUnknown(Cli.run("status", "--store", uri, r.get("operation").asText()), r.get("operation").asText());
    }

    @ParameterizedTest
    @MethodSource("stores")
    void aChangeAlreadyInForceChangesNothingAndTheLinesReadWell(String base) throws Exception {
        // a Redis prefix ending in ':' (the usual form) must not run into the line's own colon
        String uri = base.startsWith("redis") ? base + (base.contains("?") ? "&" : "?") + "prefix=cli-x:" : base;
        assertTrue(Cli.reachable(uri), () -> "store not reachable: " + StoreUris.redact(uri));
        String op = Cli.uniqueOperation();
        String name = "'" + Table.printable(op) + "'";

        Cli.Run first = Cli.run("force-open", "--store", uri, op);
        assertEquals(0, first.exit(), first::toString);
        String line = first.out().lines().findFirst().orElseThrow();
        assertEquals("force-open " + name + ": CLOSED -> FORCED_OPEN (a new state) on " + StoreUris.redact(uri),
                line, first::toString);
        assertFalse(first.out().contains("version 0"), first::toString);
        assertFalse(first.out().contains("::"), first::toString);
        long v = status(uri, op).get("version").asLong();

        Cli.Run again = Cli.run("force-open", "--store", uri, op);
        assertEquals(0, again.exit(), again::toString);
        assertEquals("force-open " + name + ": already FORCED_OPEN, nothing changed (version " + v + ") on "
                + StoreUris.redact(uri), again.out().strip(), again::toString);
        assertEquals(v, status(uri, op).get("version").asLong(), "no version bump, so no event either");

        Cli.Run reset = Cli.run("reset", "--store", uri, op);
        assertTrue(reset.out().startsWith("reset " + name + ": FORCED_OPEN -> CLOSED (version " + v + " -> "
                + (v + 1) + ") on "), reset::toString);
        Cli.Run resetAgain = Cli.run("reset", "--store", uri, op);
        assertEquals(0, resetAgain.exit(), resetAgain::toString);
        assertTrue(resetAgain.out().contains("already CLOSED, nothing changed"), resetAgain::toString);
        assertEquals(v + 1, status(uri, op).get("version").asLong());
    }

    /**
     * force-mode stores a mode for the fleet: an application's breaker on the same store follows it (metrics only:
     * counts, never rejects), status shows the mode and the window, a repeated change changes nothing, a bad mode
     * is a usage error, and reset returns to the application's mode.
     */
    @ParameterizedTest
    @MethodSource("stores")
    void forceModeReachesTheApplicationAndStatusShowsTheModeAndWindow(String uri) throws Exception {
        Cli.assertReachable(uri);
        String op = Cli.uniqueOperation();
        String name = "'" + Table.printable(op) + "'";
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri))
                .slidingWindow(dev.redeye.api.SlidingWindowType.COUNT_BASED, 4).minimumNumberOfCalls(2)
                .failureRateThreshold(60).build()) {
            Cli.Run mode = Cli.run("force-mode", "--store", uri, op, "metrics_only");
            assertEquals(0, mode.exit(), mode::toString);
            assertTrue(mode.out().startsWith("force-mode " + name + ": CLOSED -> CLOSED (metrics_only) (a new state)"),
                    mode::toString);
            for (int i = 0; i < 3; i++) {
                assertThrows(IllegalStateException.class, () -> app.execute(op, () -> {
                    throw new IllegalStateException("down");
                }));
            }
            assertEquals("ok", app.execute(op, () -> "ok"), "metrics only never rejects");
            JsonNode st = status(uri, op);
            assertEquals("metrics_only", st.get("mode").asText(), st::toString);
            assertEquals(2, st.get("windowCalls").asInt(), "the second failure would have opened: counting restarted");
            Cli.Run table = Cli.run("status", "--store", uri, op);
            assertTrue(table.out().contains("CLOSED (metrics_only)") && table.out().contains("1 of 2"),
                    table::toString);
            Cli.Run again = Cli.run("force-mode", "--store", uri, op, "metrics-only");
            assertTrue(again.out().contains("already CLOSED (metrics_only)") || again.out().contains("->"),
                    again::toString);
            Cli.Run bad = Cli.run("force-mode", "--store", uri, op, "sleepy");
            assertEquals(2, bad.exit(), bad::toString);
            assertTrue(bad.err().contains("unknown breaker mode 'sleepy'"), bad::toString);
            assertEquals(0, Cli.run("reset", "--store", uri, op).exit());
            assertEquals("default", status(uri, op).get("mode").asText());
        }
    }

    /** The status of an operation the store holds no state for: said on stderr, exit 1, no row. */
    static void assertUnknown(Cli.Run run, String op) {
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.err().contains("unknown operation '" + Table.printable(op) + "'"), run::toString);
        assertFalse(run.out().contains(Table.printable(op)), run::toString);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void statusOfAnUnknownOperationSaysSoAndPrintsTheKnownOnes(String uri) throws Exception {
        Cli.assertReachable(uri);
        String known = Cli.uniqueOperation();
        String unknown = Cli.uniqueOperation();
        assertEquals(0, Cli.run("force-open", "--store", uri, known).exit());
        Cli.Run run = Cli.run("status", "--store", uri, "--json", known, unknown);
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        JsonNode rows = Json.mapper().readTree(run.out());
        assertEquals(1, rows.size(), run::toString);
        assertEquals(known, rows.get(0).get("operation").asText());
        assertTrue(run.err().contains("unknown operation '" + Table.printable(unknown) + "'"), run::toString);
        assertFalse(run.err().contains(Table.printable(known)), run::toString);
        assertEquals(0, Cli.run("reset", "--store", uri, known).exit());
    }

    @org.junit.jupiter.api.Test
    void statusOfAnUnknownOperationWritesNoRedisKey() {
        String prefix = "redeye-cli-test:" + java.util.UUID.randomUUID().toString().substring(0, 8) + ":";
        String uri = Cli.redisUri() + (Cli.redisUri().contains("?") ? "&" : "?") + "prefix=" + prefix;
        String op = Cli.uniqueOperation();
        assertUnknown(Cli.run("status", "--store", uri, op), op);
        try (redis.clients.jedis.JedisPooled jedis = new redis.clients.jedis.JedisPooled(
                java.net.URI.create(Cli.redisUri()))) {
            assertEquals(java.util.Set.of(), jedis.keys(prefix + "*"));
        }
    }

    @org.junit.jupiter.api.Test
    void statusNeverCreatesPostgresTables() throws Exception {
        String schema = "redeye_cli_" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String uri = Cli.postgresUri() + (Cli.postgresUri().contains("?") ? "&" : "?") + "schema=" + schema;
        for (String s : new String[] {uri, uri + "&createSchema=true"}) {
            Cli.Run run = Cli.run("status", "--store", s, "op");
            assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
            assertTrue(run.err().contains("missing"), run::toString);
        }
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(Cli.postgresUri());
                java.sql.PreparedStatement st = c.prepareStatement(
                        "SELECT count(*) FROM pg_namespace WHERE nspname = ?")) {
            st.setString(1, schema);
            try (java.sql.ResultSet rs = st.executeQuery()) {
                rs.next();
                assertEquals(0, rs.getInt(1), "status created schema " + schema);
            }
        }
    }
}

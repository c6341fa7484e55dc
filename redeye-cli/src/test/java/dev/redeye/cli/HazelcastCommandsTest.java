package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.api.CircuitOpenException;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The operator commands, simulate and tck on {@code hazelcast://} against a real member in the test JVM.
 * Versions are compared with the first one the store gave (the store starts a key's life at its clock in
 * microseconds, contract v2), not with 0.
 */
class HazelcastCommandsTest {

    static JsonNode status(String uri, String op) throws Exception {
        Cli.Run run = Cli.run("status", "--store", uri, "--json", op);
        assertEquals(0, run.exit(), run::toString);
        return Json.mapper().readTree(run.out()).get(0);
    }

    @Test
    void statusWithoutNamesListsTheMap() throws Exception {
        String uri = HazelcastMember.uri() + (HazelcastMember.uri().contains("?") ? "&" : "?") + "map=list-"
                + UUID.randomUUID().toString().substring(0, 8);
        StatusListingTest.assertListed(uri, List.of("a-first", "b {second}", "c \u4e2d"), true);
    }

    @Test
    void forceOpenHalfOpenAndResetControlEveryInstance() throws Exception {
        String uri = HazelcastMember.uri();
        String op = Cli.uniqueOperation();
        OpsCommandsTest.assertUnknown(Cli.run("status", "--store", uri, op), op);

        Cli.Run open = Cli.run("force-open", "--store", uri, op);
        assertEquals(0, open.exit(), open::toString);
        assertTrue(open.out().contains("CLOSED -> FORCED_OPEN"), open::toString);
        JsonNode forced = status(uri, op);
        assertEquals("FORCED_OPEN", forced.get("status").asText());
        long v = forced.get("version").asLong();
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri)).build()) {
            assertThrows(CircuitOpenException.class, () -> app.execute(op, () -> "must not run"));
        }

        assertEquals(0, Cli.run("force-half-open", "--store", uri, op).exit());
        assertEquals("HALF_OPEN", status(uri, op).get("status").asText());
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri)).build()) {
            assertEquals("trial", app.execute(op, () -> "trial"));
        }
        JsonNode closed = status(uri, op);
        assertEquals("CLOSED", closed.get("status").asText());
        assertEquals(v + 2, closed.get("version").asLong(), "force half-open and the trial's close");

        assertEquals(0, Cli.run("force-open", "--store", uri, op).exit());
        Cli.Run reset = Cli.run("reset", "--store", uri, op);
        assertEquals(0, reset.exit(), reset::toString);
        assertTrue(reset.out().contains("FORCED_OPEN -> CLOSED"), reset::toString);
        assertEquals(v + 4, status(uri, op).get("version").asLong());
    }

    @Test
    void watchPrintsTransitionsFromTheFeed() throws Exception {
        OpsCommandsTest.assertWatchPrintsTransitions(HazelcastMember.uri());
    }

    @Test
    void simulateRunsOnTheRealStoreWithOneTrialAtATime() throws Exception {
        Cli.Run run = Cli.run("simulate", "--store", HazelcastMember.uri(), "--instances", "4",
                "--threads-per-instance", "1", "--duration", "2500ms", "--down-at", "300ms", "--up-at", "1500ms",
                "--reset-timeout", "400ms", "--backoff-multiplier", "1", "--think-time", "20ms", "--progress", "never",
                "--json");
        assertEquals(0, run.exit(), run::toString);
        JsonNode r = Json.mapper().readTree(run.out());
        assertEquals(1, r.get("openings").asLong(), r::toPrettyString);
        assertEquals(1, r.get("maxConcurrentTrials").asInt(), r::toPrettyString);
        assertTrue(r.get("store").asText().startsWith("hazelcast://"), r::toPrettyString);
        // the run's state was deleted afterwards
        OpsCommandsTest.assertUnknown(Cli.run("status", "--store", HazelcastMember.uri(), r.get("operation").asText()),
                r.get("operation").asText());
    }

    @Test
    void tckRunsAgainstTheStore() {
        Cli.Run run = Cli.run("tck", "--store", HazelcastMember.uri(), "--rule", "R2.7,R4.4,R6.3,R7.2");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("4 passed, 0 failed, 0 skipped"), run::toString);
    }

    @Test
    void anUnreachableClusterIsOneLineWithoutThePassword() {
        Cli.Run run = Cli.run("status", "--store", "hazelcast://127.0.0.1:1?timeout=300&password=s3cretpw", "op");
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.err().contains("cannot reach the Hazelcast cluster"), run::toString);
        assertFalse(run.err().contains("s3cretpw"), run::toString);
    }
}

package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.api.CircuitOpenException;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The commands over {@code dynamodb://} on dynalite (REDEYE_DYNAMODB_URL, started by scripts/services.sh):
 * status, force-open, force-half-open, reset, watch (the polled feed), simulate and tck, all through
 * {@code Stores.open}, in a table of this class's own that is deleted afterwards. Versions are compared
 * relative to each other: a DynamoDB key's life starts at the store's clock in microseconds (contract v2).
 */
class DynamoDbCliTest {
    private static final String TABLE = "redeye_cli_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private static String uri;

    @BeforeAll
    static void locate() {
        uri = Cli.dynamodbUri(TABLE);
        assertNotNull(uri, "REDEYE_DYNAMODB_URL is not set: run scripts/test.sh (which installs and starts dynalite) "
                + "or '. scripts/services.sh' first");
        Stores.open(uri).close(); // creates the table: status, a read, never does
    }

    @AfterAll
    static void dropTable() {
        Cli.dropDynamoDbTable(TABLE);
    }

    static JsonNode status(String op) throws Exception {
        Cli.Run run = Cli.run("status", "--store", uri, "--json", op);
        assertEquals(0, run.exit(), run::toString);
        assertFalse(run.out().contains("s3cretkey") || run.err().contains("s3cretkey"), run::toString);
        return Json.mapper().readTree(run.out()).get(0);
    }

    @Test
    void statusWithoutNamesListsTheTable() throws Exception {
        StatusListingTest.assertListed(uri, List.of("list-" + UUID.randomUUID(), "list {b}:" + UUID.randomUUID()),
                false);
    }

    @Test
    void forceOpenHalfOpenAndResetControlEveryInstance() throws Exception {
        String op = Cli.uniqueOperation();
        OpsCommandsTest.assertUnknown(Cli.run("status", "--store", uri, op), op);
        Cli.Run open = Cli.run("force-open", "--store", uri, op);
        assertEquals(0, open.exit(), open::toString);
        assertTrue(open.out().contains("CLOSED -> FORCED_OPEN"), open::toString);
        JsonNode forced = status(op);
        assertEquals("FORCED_OPEN", forced.get("status").asText());
        long v = forced.get("version").asLong();
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri)).build()) {
            assertThrows(CircuitOpenException.class, () -> app.execute(op, () -> "must not run"));
        }
        assertEquals(0, Cli.run("force-half-open", "--store", uri, op).exit());
        assertEquals("HALF_OPEN", status(op).get("status").asText());
        try (CircuitBreaker app = CircuitBreaker.builder().store(Stores.open(uri)).build()) {
            assertEquals("trial", app.execute(op, () -> "trial"));
        }
        JsonNode closed = status(op);
        assertEquals("CLOSED", closed.get("status").asText());
        assertEquals(v + 2, closed.get("version").asLong(), "force-half-open and the trial's close: two transitions");
        assertEquals(0, Cli.run("force-open", "--store", uri, op).exit());
        Cli.Run reset = Cli.run("reset", "--store", uri, op);
        assertTrue(reset.out().contains("FORCED_OPEN -> CLOSED"), reset::toString);
        assertEquals(v + 4, status(op).get("version").asLong());
    }

    // The store-independent command tests of OpsCommandsTest, on dynamodb:// (its force test asserts absolute
    // versions, 1 to 5, so the one above replaces it here).

    @Test
    void watchPrintsTransitionsFromThePolledFeed() throws Exception {
        new OpsCommandsTest().watchPrintsTransitionsFromTheFeed(uri);
    }

    @Test
    void watchWithACountFailsWhenTheTimeoutPassesFirst() {
        new OpsCommandsTest().watchWithACountFailsWhenTheTimeoutPassesFirst(uri);
    }

    @Test
    void statusShowsAnOpenBreakerWithItsRetryAfter() throws Exception {
        new OpsCommandsTest().statusShowsAnOpenBreakerWithItsRetryAfter(uri);
    }

    @Test
    void simulateRunsOnDynamoDbWithOneTrialAtATimeAndCleansUp() throws Exception {
        new OpsCommandsTest().simulateRunsOnTheRealStoreAndCleansUp(uri);
    }

    @Test
    void tckCommandRunsRulesOfEveryGroupOnDynamoDb() {
        Cli.Run run = Cli.run("tck", "--store", uri, "--rule", "R1.5,R2.8,R4.4,R5.6,R6.3,R7.2");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("6 passed, 0 failed, 0 skipped"), run::toString);
        assertFalse(run.out().contains("s3cretkey"), run::toString);
    }

    @Test
    void statusNeverCreatesTheTableEvenWithCreateTable() {
        String missing = uri.replace(TABLE, TABLE + "_status");
        Cli.Run run = Cli.run("status", "--store", missing, "op");
        assertEquals(1, run.exit(), run::toString);
        assertTrue(run.err().contains("aws dynamodb create-table --table-name " + TABLE + "_status"), run::toString);
    }

    @Test
    void aMissingTableWithoutCreateTableSaysHowToCreateIt() {
        String noCreate = uri.replace("createTable=true", "createTable=false").replace(TABLE, TABLE + "_none");
        Cli.Run run = Cli.run("status", "--store", noCreate, "op");
        assertEquals(1, run.exit(), run::toString);
        assertTrue(run.err().contains("aws dynamodb create-table --table-name " + TABLE + "_none"), run::toString);
        assertFalse(run.err().contains("s3cretkey"), run::toString);
    }
}

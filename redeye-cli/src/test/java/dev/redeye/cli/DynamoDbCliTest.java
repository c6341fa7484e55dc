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
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

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
    }

    @AfterAll
    static void dropTable() {
        String env = System.getenv("REDEYE_DYNAMODB_URL");
        if (env == null) {
            return;
        }
        try (DynamoDbClient c = DynamoDbClient.builder().endpointOverride(URI.create(env.trim()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("cli", "x")))
                .build()) {
            c.deleteTable(r -> r.tableName(TABLE));
        } catch (ResourceNotFoundException e) {
            // never created
        }
    }

    static JsonNode status(String op) throws Exception {
        Cli.Run run = Cli.run("status", "--store", uri, "--json", op);
        assertEquals(0, run.exit(), run::toString);
        assertFalse(run.out().contains("s3cretkey") || run.err().contains("s3cretkey"), run::toString);
        return Json.mapper().readTree(run.out()).get(0);
    }

    @Test
    void forceOpenHalfOpenAndResetControlEveryInstance() throws Exception {
        String op = Cli.uniqueOperation();
        assertEquals("CLOSED", status(op).get("status").asText());
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

    @Test
    void watchPrintsTransitionsFromThePolledFeed() throws Exception {
        String op = Cli.uniqueOperation();
        CompletableFuture<Cli.Run> watch = CompletableFuture.supplyAsync(
                () -> Cli.run("watch", "--store", uri, "--count", "2", "--timeout", "30s", "--json", op));
        List<Cli.Run> controls = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        boolean open = false;
        while (!watch.isDone() && System.nanoTime() < deadline) {
            controls.add(Cli.run(open ? "reset" : "force-open", "--store", uri, op));
            open = !open;
            Thread.sleep(600);
        }
        Cli.Run run = watch.get(10, TimeUnit.SECONDS);
        assertEquals(0, run.exit(), run::toString);
        controls.forEach(c -> assertEquals(0, c.exit(), c::toString));
        List<String> lines = run.out().strip().lines().toList();
        assertEquals(2, lines.size(), run::toString);
        long last = 0;
        for (String line : lines) {
            JsonNode e = Json.mapper().readTree(line);
            assertEquals(op, e.get("operation").asText(), line);
            assertTrue(e.get("version").asLong() > last, line);
            last = e.get("version").asLong();
        }
    }

    @Test
    void simulateRunsOnDynamoDbWithOneTrialAtATime() throws Exception {
        Cli.Run run = Cli.run("simulate", "--store", uri, "--instances", "4", "--threads-per-instance", "1",
                "--duration", "2500ms", "--down-at", "300ms", "--up-at", "1500ms", "--reset-timeout", "400ms",
                "--backoff-multiplier", "1", "--think-time", "20ms", "--progress", "never", "--json");
        assertEquals(0, run.exit(), run::toString);
        JsonNode r = Json.mapper().readTree(run.out());
        assertEquals(1, r.get("openings").asLong(), r::toPrettyString);
        assertEquals(1, r.get("maxConcurrentTrials").asInt(), r::toPrettyString);
        assertFalse(r.get("store").asText().contains("s3cretkey"), r::toPrettyString);
        assertFalse(status(r.get("operation").asText()).get("stored").asBoolean(), "the run's state was deleted");
    }

    @Test
    void tckCommandRunsRulesOfEveryGroupOnDynamoDb() {
        Cli.Run run = Cli.run("tck", "--store", uri, "--rule", "R1.5,R2.8,R4.4,R5.6,R6.3,R7.2");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("6 passed, 0 failed, 0 skipped"), run::toString);
        assertFalse(run.out().contains("s3cretkey"), run::toString);
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

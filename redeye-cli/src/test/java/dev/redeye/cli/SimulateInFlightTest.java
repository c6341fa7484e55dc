package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@code simulate} says reached the dead dependency adds up, on the stores where a call admitted by a read
 * that raced the opening was counted nowhere (DynamoDB, Hazelcast) and in memory: every normal call that
 * reached the dead dependency is either a failure recorded before the breaker opened (at least
 * failureThreshold of them) or one already in flight at the opening, none was admitted by a read that started
 * after the opening was stored, and the text says what the JSON says.
 */
class SimulateInFlightTest {
    private static final String TABLE = "redeye_inflight_"
            + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    private static final int RUNS = 3;

    @AfterAll
    static void dropTable() {
        Cli.dropDynamoDbTable(TABLE);
    }

    private static String uri(String store) {
        switch (store) {
            case "dynamodb":
                String u = Cli.dynamodbUri(TABLE);
                assertNotNull(u, "REDEYE_DYNAMODB_URL is not set: '. scripts/services.sh' first");
                return u;
            case "hazelcast":
                return HazelcastMember.uri();
            default:
                return "memory:";
        }
    }

    private static String[] args(String uri, boolean json) {
        List<String> a = new ArrayList<>(List.of("simulate", "--store", uri, "--instances", "10",
                "--threads-per-instance", "2", "--duration", "2500ms", "--down-at", "500ms", "--up-at", "2s",
                "--reset-timeout", "1s", "--failure-threshold", "5", "--progress", "never"));
        if (json) {
            a.add("--json");
        }
        return a.toArray(new String[0]);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "dynamodb", "hazelcast"})
    void everyNormalCallThatReachedTheDeadDependencyIsCountedOnce(String store) throws Exception {
        String uri = uri(store);
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < RUNS; i++) {
            Cli.Run run = Cli.run(args(uri, true));
            assertEquals(0, run.exit(), run::toString);
            JsonNode r = Json.mapper().readTree(run.out());
            long normal = r.get("reachedDeadDependencyByNormalCalls").asLong();
            long before = r.get("failuresBeforeOpening").asLong();
            long inFlight = r.get("inFlightAtOpening").asLong();
            long notRecorded = r.get("failuresNotRecorded").asLong();
            if (normal != before + inFlight + notRecorded) {
                wrong.add("run " + i + ": " + normal + " normal calls reached the dead dependency, but " + before
                        + " recorded before the opening + " + inFlight + " in flight + " + notRecorded
                        + " not recorded = " + (before + inFlight + notRecorded));
            }
            if (before < r.get("failureThreshold").asLong()) {
                wrong.add("run " + i + ": " + before + " failures recorded before the opening, below failureThreshold "
                        + r.get("failureThreshold"));
            }
            if (r.get("admittedAfterOpening").asLong() != 0) {
                wrong.add("run " + i + ": " + r.get("admittedAfterOpening") + " call(s) admitted by a read that started"
                        + " after the opening was stored");
            }
        }
        assertTrue(wrong.isEmpty(), store + ":\n  " + String.join("\n  ", wrong));
    }

    /** The text tells the same figures as its table: the story's numbers are the rows' numbers. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "hazelcast"})
    void theStoryLineAndTheTableShowTheSameMeasuredFigures(String store) {
        Cli.Run run = Cli.run(args(uri(store), false));
        assertEquals(0, run.exit(), run::toString);
        String out = run.out();
        long normal = row(out, "  normal calls (not trials)");
        long before = row(out, "    failures recorded before the opening");
        long inFlight = row(out, "    already in flight at the opening");
        assertEquals(normal, before + inFlight, out);
        String story = "shared: " + normal + " normal call(s) reached the dead dependency: " + before
                + " recorded before the breaker opened (failureThreshold 5) and " + inFlight
                + " already in flight at the opening";
        assertTrue(out.contains(story), "expected '" + story + "' in:\n" + out);
    }

    private static long row(String out, String label) {
        for (String line : out.split("\n")) {
            if (line.startsWith("  " + label + " ")) {
                return Long.parseLong(line.trim().substring(line.trim().lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no row '" + label + "' in:\n" + out);
    }
}

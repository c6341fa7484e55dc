package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code redeye status} without operation names lists every operation of a store that can list them
 * (PostgreSQL, in a schema of its own so that other tests' rows stay out; Redis under a prefix of its own), sorted
 * by name, at most {@code --limit}; a store that cannot list them (the test scheme {@code nofeed:}, which has no
 * capability) is a usage error naming the way out. {@code DynamoDbCliTest} and {@code HazelcastCommandsTest} list
 * their stores with {@link #assertListed}.
 */
class StatusListingTest {

    @Test
    void statusWithoutNamesListsEveryOperationUpToTheLimit() throws Exception {
        Cli.assertReachable(Cli.postgresUri());
        String schema = "redeye_list_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String uri = Cli.postgresUri() + (Cli.postgresUri().contains("?") ? "&" : "?") + "schema=" + schema;
        List<String> names = List.of("a-first", "b {second}:'op'", "c third \u4e2d");
        try (Store s = Stores.open(uri, OpenMode.STRICT)) {
            for (int i = 0; i < names.size(); i++) {
                s.put(names.get(i), BreakerState.INITIAL.toBuilder().failures(i + 1).build(), Duration.ofHours(1));
            }
        }
        Cli.Run all = Cli.run("status", "--store", uri, "--json");
        assertEquals(0, all.exit(), all::toString);
        JsonNode rows = Json.mapper().readTree(all.out());
        List<String> listed = new ArrayList<>();
        rows.forEach(r -> listed.add(r.get("operation").asText()));
        assertEquals(names, listed, all::toString);
        assertEquals(2, rows.get(1).get("failures").asInt());

        Cli.Run table = Cli.run("status", "--store", uri);
        assertEquals(0, table.exit(), table::toString);
        assertTrue(table.out().contains("b {second}:'op'"), table::toString);

        Cli.Run two = Cli.run("status", "--store", uri, "--json", "--limit", "2");
        assertEquals(0, two.exit(), two::toString);
        assertEquals(2, Json.mapper().readTree(two.out()).size(), two::toString);
        assertTrue(two.err().contains("more operations than --limit 2"), two::toString);

        Cli.Run zero = Cli.run("status", "--store", uri, "--limit", "0");
        assertEquals(RedeyeCommand.EXIT_USAGE, zero.exit(), zero::toString);
    }

    /** Redis lists by SCAN: names with braces and percent signs come back from their keys as written. */
    @Test
    void statusWithoutNamesListsARedisStore() throws Exception {
        Cli.assertReachable(Cli.redisUri());
        String prefix = "redeye-cli-list-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        String uri = Cli.redisUri() + (Cli.redisUri().contains("?") ? "&" : "?") + "prefix=" + prefix;
        List<String> names = List.of("a-first", "b {second}:'op'", "c 100% \u4e2d", "");
        try {
            assertListed(uri, names, true);
        } finally {
            try (Store s = Stores.open(uri, OpenMode.STRICT)) {
                names.forEach(s::delete);
            }
        }
    }

    /**
     * Writes a state for each of {@code names} (failures 1, 2, ...) and checks that {@code redeye status --json}
     * without names lists them, with their failures: exactly them, sorted, when {@code alone} (a store of this test
     * only), else among the store's others.
     */
    static void assertListed(String uri, List<String> names, boolean alone) throws Exception {
        try (Store s = Stores.open(uri, OpenMode.STRICT)) {
            for (int i = 0; i < names.size(); i++) {
                s.put(names.get(i), BreakerState.INITIAL.toBuilder().failures(i + 1).build(), Duration.ofHours(1));
            }
        }
        Cli.Run all = Cli.run("status", "--store", uri, "--json");
        assertEquals(0, all.exit(), all::toString);
        java.util.Map<String, Integer> listed = new java.util.TreeMap<>();
        Json.mapper().readTree(all.out()).forEach(r -> listed.put(r.get("operation").asText(),
                r.get("failures").asInt()));
        if (alone) {
            assertEquals(new java.util.TreeSet<>(names), listed.keySet(), all::toString);
        }
        for (int i = 0; i < names.size(); i++) {
            assertEquals(i + 1, listed.get(names.get(i)), "the failures listed for '" + names.get(i) + "': " + all);
        }
    }

    @Test
    void aStoreThatCannotListSaysToNameTheOperations() {
        Cli.Run run = Cli.run("status", "--store", "nofeed:");
        assertEquals(RedeyeCommand.EXIT_USAGE, run.exit(), run::toString);
        assertTrue(run.err().contains("cannot list its operations"), run::toString);
    }
}

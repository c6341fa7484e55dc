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
 * (PostgreSQL, in a schema of its own so that other tests' rows stay out), sorted by name, at most
 * {@code --limit}; a store that cannot list them (the test scheme {@code nofeed:}, which has no capability) is
 * a usage error naming the way out.
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

    @Test
    void aStoreThatCannotListSaysToNameTheOperations() {
        Cli.Run run = Cli.run("status", "--store", "nofeed:");
        assertEquals(RedeyeCommand.EXIT_USAGE, run.exit(), run::toString);
        assertTrue(run.err().contains("cannot list its operations"), run::toString);
    }
}

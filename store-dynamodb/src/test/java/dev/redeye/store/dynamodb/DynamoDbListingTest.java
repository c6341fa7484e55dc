package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.OperationListing;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The DynamoDB listing beyond the TCK's R15: one {@code Scan} request per page whatever the table holds besides
 * states (feed shards, tombstones), expiry judged by the store's clock as {@code get} judges it, and cursors it did
 * not make refused.
 */
class DynamoDbListingTest {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_list");
    private static final BreakerState STATE = BreakerState.INITIAL.toBuilder().failures(3).build();

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    private static DynamoDbStore store(DynamoDbClient client, Clock clock) {
        return DynamoDbStore.builder(client).table(TABLE).createTable(true).clock(clock).build();
    }

    @Test
    void eachPageIsOneScanAndOnlyLiveStatesAreListed() {
        try (DynamoDbClient client = DynamoTestSupport.rawClient(); DynamoDbStore store = store(client, Clock.systemUTC())) {
            Set<String> written = new TreeSet<>();
            for (int i = 0; i < 7; i++) {
                store.put("op-" + i, STATE, Duration.ofMinutes(5));
                written.add("op-" + i);
            }
            store.apply("forced", AtomicOperation.force(BreakerStatus.OPEN), Policy.defaults(), System.currentTimeMillis());
            written.add("forced"); // a transition: the table now holds a feed shard item too
            store.put("gone", STATE, Duration.ofMinutes(5));
            store.delete("gone"); // a tombstone
            long before = store.usage().requests();
            Set<String> listed = new TreeSet<>();
            int pages = 0;
            String cursor = null;
            do {
                OperationListing.Page page = store.page(cursor, 2);
                assertTrue(page.entries().size() <= 2, "a page of 2 held " + page.entries().size());
                page.entries().forEach(e -> listed.add(e.operation()));
                page.entries().forEach(e -> assertTrue(e.stateIfRead().isPresent(), "a state read with " + e));
                cursor = page.next();
                pages++;
            } while (cursor != null);
            assertEquals(written, listed);
            assertEquals(pages, store.usage().requests() - before, "requests of " + pages + " pages");
            // a clock past the states' expiry lists the pinned (forced) state only, as get reads them
            try (DynamoDbStore later = store(client, Clock.fixed(Instant.now().plus(Duration.ofHours(1)),
                    ZoneOffset.UTC))) {
                Set<String> live = new TreeSet<>();
                String c = null;
                do {
                    OperationListing.Page page = later.page(c, OperationListing.MAX_LIMIT);
                    page.entries().forEach(e -> live.add(e.operation()));
                    c = page.next();
                } while (c != null);
                assertEquals(Set.of("forced"), live);
            }
        }
    }

    @Test
    void aCursorItDidNotMakeIsRefused() {
        try (DynamoDbClient client = DynamoTestSupport.rawClient(); DynamoDbStore store = store(client, Clock.systemUTC())) {
            for (String bad : List.of("", "d1~", "d1~***", "x1~bw", "o#a")) {
                assertThrows(IllegalArgumentException.class, () -> store.page(bad, 10), "cursor '" + bad + "'");
            }
            assertThrows(IllegalArgumentException.class, () -> store.page(null, OperationListing.MAX_LIMIT + 1));
        }
    }
}

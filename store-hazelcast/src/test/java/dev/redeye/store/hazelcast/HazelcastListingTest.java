package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.OperationListing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Hazelcast listing beyond the TCK's R15, on the shared 2-member cluster: pages in key order over both
 * members' partitions, in a map of the default BINARY format and in one of OBJECT format, tombstones and
 * claims-only entries left out, and cursors it did not make refused.
 */
@ExtendWith(SharedClusters.class)
class HazelcastListingTest {
    private static final BreakerState STATE = BreakerState.INITIAL.toBuilder().failures(1).build();

    @Test
    void pagesFollowTheKeysOrderAcrossMembersAndLeaveOutWhatHoldsNoState() {
        for (String map : List.of("listing-" + UUID.randomUUID(), SharedClusters.OBJECT_MAPS.replace("*", "")
                + "listing-" + UUID.randomUUID())) {
            try (HazelcastStore store = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map).build()) {
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < 25; i++) {
                    String name = String.format("op-%02d", i);
                    store.put(name, STATE, Duration.ofMinutes(5));
                    if (i % 5 == 0) {
                        store.delete(name); // a tombstone
                    } else {
                        expected.add(name);
                    }
                }
                store.claimTrial("claimed-only", 1, Duration.ofMinutes(5));
                List<String> listed = new ArrayList<>();
                String cursor = null;
                do {
                    OperationListing.Page page = store.page(cursor, 4);
                    assertTrue(page.entries().size() <= 4, "a page of 4 held " + page.entries().size());
                    page.entries().forEach(e -> listed.add(e.operation()));
                    page.entries().forEach(e -> assertEquals(STATE, e.stateIfRead().orElseThrow(), e.operation()));
                    cursor = page.next();
                } while (cursor != null);
                assertEquals(expected, listed, "in map " + map);
            }
        }
    }

    @Test
    void aCursorItDidNotMakeIsRefused() {
        try (HazelcastStore store = HazelcastStore.builder(SharedClusters.embedded().clientA())
                .map("listing-" + UUID.randomUUID()).build()) {
            assertThrows(IllegalArgumentException.class, () -> store.page("op-1", 10));
            assertThrows(IllegalArgumentException.class, () -> store.page("", 10));
            assertThrows(IllegalArgumentException.class, () -> store.page(null, 0));
            assertTrue(store.page("h1:zzz", 10).entries().isEmpty(), "a cursor past every key");
        }
    }
}

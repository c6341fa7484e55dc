package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.RICH;
import static dev.redeye.tck.TckSupport.SHORT_STATE_TTL;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.describe;
import static dev.redeye.tck.TckSupport.hostileNames;
import static dev.redeye.tck.TckSupport.need;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R15 (OperationListing): every operation holding a state is listed, exactly as named, with the state
 * {@code get} returns; pages are bounded by their limit; a listing reads only and leaves out what holds no state;
 * keys removed behind the cursor never make the listing skip one. The store under test may hold other tests'
 * keys: each rule looks only at the names of its own key prefix. Run by {@link StoreTck}.
 */
interface ListingRules extends TckContext {
    /** How long walking one listing may take at most: a bound for a cursor that never ends. */
    long WALK_MILLIS = TimeUnit.SECONDS.toMillis(120);

    /** The store's listing; the rule is skipped, with the reason, if it lacks one. */
    static OperationListing listing(Store s) {
        return need(s, OperationListing.class);
    }

    /**
     * Walks a whole listing with pages of {@code limit}, checking each page's bound, and returns what it listed of
     * the names starting with {@code prefix}: each name with the state its last entry carried (empty for a name
     * listed without one). {@code afterPage} runs after each page with the names of the prefix it held.
     */
    static Map<String, Optional<BreakerState>> walk(OperationListing l, int limit, String prefix,
            Consumer<List<String>> afterPage) {
        Map<String, Optional<BreakerState>> out = new LinkedHashMap<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WALK_MILLIS);
        String cursor = null;
        int pages = 0;
        do {
            OperationListing.Page page = l.page(cursor, limit);
            assertNotNull(page, "page returned null");
            assertNotNull(page.entries(), "a page's entries are null");
            assertTrue(page.entries().size() <= limit, "page " + (pages + 1) + " holds " + page.entries().size()
                    + " entries, above its limit " + limit);
            List<String> ours = new ArrayList<>();
            for (OperationListing.Entry e : page.entries()) {
                if (e.operation().startsWith(prefix)) {
                    out.put(e.operation(), e.stateIfRead());
                    ours.add(e.operation());
                }
            }
            afterPage.accept(ours);
            assertFalse(cursor != null && cursor.equals(page.next()), "a page returned the cursor it was asked "
                    + "with: the listing would never end");
            cursor = page.next();
            pages++;
            if (System.nanoTime() - deadline > 0) {
                fail("the listing did not end within " + WALK_MILLIS + " ms (" + pages + " pages of " + limit + ")");
            }
        } while (cursor != null);
        return out;
    }

    /** The names of {@code prefix} a whole listing holds. */
    static Set<String> namesOf(OperationListing l, int limit, String prefix) {
        return new TreeSet<>(walk(l, limit, prefix, ours -> { }).keySet());
    }

    /**
     * R15.1 Every operation holding a state is listed by the other client, exactly as named (hostile names
     * included), with the state get returns, and names never written are not. If this fails, check the listing's
     * decoding of names (the inverse of the key mapping) and that it walks every page.
     */
    @Test
    @DisplayName("R15.1 every operation holding a state is listed exactly as named, with its state")
    default void r15_1_everyOperationIsListedWithItsState() {
        Store a = client();
        Store b = client();
        OperationListing l = listing(b);
        String prefix = key("");
        Set<String> written = new TreeSet<>();
        List<String> names = hostileNames();
        for (int i = 0; i < names.size(); i++) {
            String k = key(names.get(i));
            a.put(k, RICH.toBuilder().failures(i + 1).build(), STATE_TTL);
            written.add(k);
        }
        Optional<AtomicUpdates> updates = a.capability(AtomicUpdates.class);
        if (updates.isPresent()) {
            String k = key("opened-atomically");
            updates.get().apply(k, AtomicOperation.force(BreakerStatus.OPEN), TckSupport.ONE, T0);
            written.add(k);
        }
        for (int limit : new int[] {3, 50, OperationListing.MAX_LIMIT}) {
            Map<String, Optional<BreakerState>> listed = walk(l, limit, prefix, ours -> { });
            Set<String> missing = new TreeSet<>(written);
            missing.removeAll(listed.keySet());
            Set<String> extra = new TreeSet<>(listed.keySet());
            extra.removeAll(written);
            if (!missing.isEmpty() || !extra.isEmpty()) {
                fail("with pages of " + limit + ": " + missing.size() + " operation(s) holding a state not listed "
                        + missing.stream().map(TckSupport::describe).toList() + ", " + extra.size()
                        + " listed that were never written " + extra.stream().map(TckSupport::describe).toList());
            }
            for (Map.Entry<String, Optional<BreakerState>> e : listed.entrySet()) {
                if (e.getValue().isPresent()) {
                    assertSameState(a.get(e.getKey()).orElseThrow(), e.getValue().get(), "the state listed for "
                            + describe(e.getKey()) + " (pages of " + limit + ") against get");
                }
            }
        }
    }

    /**
     * R15.2 A page never holds more entries than its limit, and a limit out of range (0, above MAX_LIMIT) is an
     * IllegalArgumentException. If this fails, check that the limit reaches the backend's query (LIMIT, COUNT,
     * a page size) and is checked first.
     */
    @Test
    @DisplayName("R15.2 pages are bounded by their limit; a limit out of range is refused")
    default void r15_2_pagesAreBounded() {
        Store a = client();
        OperationListing l = listing(client());
        String prefix = key("");
        for (int i = 0; i < 12; i++) {
            a.put(key("bounded-" + i), RICH, STATE_TTL);
        }
        for (int limit : new int[] {2, 5}) {
            assertEquals(12, walk(l, limit, prefix, ours -> { }).size(), "operations listed with pages of "
                    + limit);
        }
        assertTrue(l.page(null, 1).entries().size() <= 1, "the first page of limit 1 holds more than one entry");
        assertThrows(IllegalArgumentException.class, () -> l.page(null, 0), "limit 0");
        assertThrows(IllegalArgumentException.class, () -> l.page(null, OperationListing.MAX_LIMIT + 1),
                "limit MAX_LIMIT + 1");
    }

    /**
     * R15.3 A listing only reads, and lists only what holds a state: walking it twice changes no state (versions,
     * counters) and creates no key; deleted operations, expired states (real time, a 300 ms ttl) and keys holding
     * only trial claims are not listed. If this fails, check that the listing filters out removed, expired and
     * claim-only data and writes nothing (no touch, no ttl refresh, no placeholder row).
     */
    @Test
    @DisplayName("R15.3 a listing reads only and leaves out deleted, expired and claim-only keys")
    default void r15_3_aListingReadsOnlyAndListsOnlyStates() {
        Store a = client();
        Store b = client();
        OperationListing l = listing(b);
        String prefix = key("");
        String kept = key("kept");
        String deleted = key("deleted");
        String expiring = key("expiring");
        String claimOnly = key("claim-only");
        a.put(kept, RICH, STATE_TTL);
        a.put(deleted, RICH, STATE_TTL);
        a.put(expiring, RICH.toBuilder().forced(false).build(), SHORT_STATE_TTL);
        Optional<TrialClaims> claims = a.capability(TrialClaims.class);
        claims.ifPresent(c -> c.claimTrial(claimOnly, 1, Duration.ofMinutes(5)));
        a.delete(deleted);
        assertEquals(Set.of(kept, expiring), namesOf(l, 10, prefix), "listed before the short ttl passed");
        TckSupport.sleep(SHORT_STATE_TTL.toMillis() + 500);
        assertEquals(Set.of(kept), namesOf(l, 10, prefix), "listed after " + describe(expiring)
                + " expired (300 ms ttl), " + describe(deleted) + " was deleted and " + describe(claimOnly)
                + " holds only a claim");
        namesOf(l, 2, prefix);
        assertSameState(RICH, a.get(kept).orElseThrow(), "the state of " + describe(kept) + " after three listings");
        for (String k : List.of(deleted, expiring, claimOnly)) {
            assertEquals(Optional.empty(), a.get(k), "a listing must create no state: " + describe(k));
        }
    }

    /**
     * R15.4 Keys deleted behind the cursor never make the listing skip one: walking pages of 10 while deleting every
     * operation already listed still lists each of the others. If this fails, check the cursor: it must name where
     * the listing stopped (the last key, a scan cursor), never a count of rows to skip (OFFSET), which moves when
     * rows before it go.
     */
    @Test
    @DisplayName("R15.4 deleting listed keys between pages never makes the listing skip one")
    default void r15_4_deletionsBehindTheCursorSkipNothing() {
        Store a = client();
        OperationListing l = listing(client());
        String prefix = key("");
        Set<String> written = new TreeSet<>();
        for (int i = 0; i < 30; i++) {
            String k = key("moving-" + i);
            a.put(k, RICH, STATE_TTL);
            written.add(k);
        }
        Map<String, Optional<BreakerState>> listed = walk(l, 10, prefix, ours -> ours.forEach(a::delete));
        Set<String> missing = new TreeSet<>(written);
        missing.removeAll(listed.keySet());
        assertTrue(missing.isEmpty(), missing.size() + " operation(s) skipped while the ones listed before them "
                + "were deleted: " + missing.stream().map(TckSupport::describe).toList());
    }
}

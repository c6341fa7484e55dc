package dev.redeye;

import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Point 10, the local cache's order of states: a feed event must carry a strictly higher version than what is
 * cached to replace it (a duplicate or late event never overwrites newer data); a fresh store read is
 * authoritative, also when a key's version restarted or jumped in a new life, so the cache never wedges and is
 * never bypassed for good; a read never undoes a newer event that arrived while it ran. Versions start at a
 * microsecond clock base here, as a store's new key life may.
 */
class CacheOrderTest {
    private static final String OP = "ordered";
    private static final long BASE = 1_700_000_000_000_000L; // a microsecond clock, as a store may start a life
    private final MutableClock clock = new MutableClock();
    private final InMemoryStore backend = new InMemoryStore();
    private final FeedControl store = new FeedControl(backend.newClient());
    private final CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(3)
            .resetTimeout(Duration.ofSeconds(30)).localCache(Duration.ofSeconds(1)).store(store).build();

    @AfterEach
    void close() {
        b.close();
        backend.close();
    }

    private static BreakerState closed(long version) {
        return BreakerState.INITIAL.withVersion(version);
    }

    private BreakerState open(long version) {
        return BreakerState.builder().open(true).openedAt(clock.millis()).failures(3).version(version).build();
    }

    @Test
    void aDuplicateOrLateEventNeverOverwritesNewerData() {
        backend.put(OP, closed(BASE + 5), Duration.ofDays(1));
        ok(b, OP);
        assertEquals(1, store.reads.get());
        store.publish(OP, open(BASE + 5)); // same version as cached: a duplicate, not news
        store.publish(OP, open(BASE + 4)); // older: late
        for (int i = 0; i < 10; i++) {
            ok(b, OP);
        }
        assertEquals(1, store.reads.get(), "still served from the cache, with zero reads");
        store.publish(OP, open(BASE + 6)); // strictly newer: applied
        rejected(b, OP);
        store.publish(OP, closed(BASE + 6)); // same version again: ignored
        rejected(b, OP);
        assertEquals(1, store.reads.get());
    }

    @Test
    void aFreshReadIsAuthoritativeAfterTheVersionRestarted() {
        backend.put(OP, closed(BASE + 50), Duration.ofDays(1));
        ok(b, OP);
        backend.delete(OP); // a new life of the key, at a lower version (a foreign store may do this)
        backend.put(OP, BreakerState.builder().failures(2).version(7).build(), Duration.ofDays(1));
        clock.advance(Duration.ofSeconds(1)); // the entry is stale: re-read
        ok(b, OP);
        assertEquals(2, store.reads.get());
        for (int i = 0; i < 10; i++) {
            ok(b, OP);
        }
        assertEquals(2, store.reads.get(), "the new life is cached: zero reads, not a read per call for good");
        store.publish(OP, open(8)); // the new life's next transition
        rejected(b, OP);
        assertEquals(2, store.reads.get());
    }

    @Test
    void aReadNeverUndoesANewerEventThatArrivedWhileItRan() {
        backend.put(OP, closed(BASE + 1), Duration.ofDays(1));
        store.duringNextGet(() -> store.publish(OP, open(BASE + 2)));
        ok(b, OP); // the read answered closed; the newer open event arrived before the answer was noted
        rejected(b, OP);
        assertEquals(1, store.reads.get(), "rejected from the newer event, with no further read");
        assertTrue(b.isLocalCacheActive());
    }
}

package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The opt-in local cache over {@link InMemoryStore}'s in-process feed. Staleness is measured on the virtual
 * clock; feed delivery is real (a daemon thread), so tests wait for it with a probe subscribed after the
 * breakers: the feed delivers to subscribers in order, so once the probe has an event the breakers have it.
 */
class LocalCacheTest extends BreakersOverInMemoryStore {
    private static final String OP = "profile";
    private CircuitBreaker build(SpyStore s, Duration staleTolerance) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(30)).store(s).localCache(staleTolerance).build();
        breakers.add(b);
        assertTrue(b.isLocalCacheActive());
        return b;
    }

    private CountDownLatch probe(int events, int gaps) {
        return probes.probe(events, gaps);
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        FeedProbes.await(latch);
    }

    @Test
    void aTrustedClosedEntryServesCallsWithZeroReadsUntilItIsStale() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = build(s, Duration.ofSeconds(1));
        ok(b, OP);
        assertEquals(1, s.reads.get());
        for (int i = 0; i < 100; i++) {
            ok(b, OP);
        }
        clock.advance(Duration.ofMillis(999));
        ok(b, OP);
        assertEquals(1, s.reads.get(), "zero reads while trusted and younger than staleTolerance");
        clock.advanceMillis(1);
        ok(b, OP);
        ok(b, OP);
        assertEquals(2, s.reads.get(), "one re-read once stale");
        assertEquals(0, s.writes.get());
    }

    @Test
    void aFeedEventWithAHigherVersionInvalidatesTheEntry() throws Exception {
        SpyStore s1 = SpyStore.over(backend);
        SpyStore s2 = SpyStore.over(backend);
        CircuitBreaker b1 = build(s1, Duration.ofMinutes(1));
        CircuitBreaker b2 = build(s2, Duration.ofMinutes(1));
        ok(b2, OP);
        CountDownLatch opened = probe(1, 0);
        failOnce(b1, OP);
        failOnce(b1, OP); // opens: a transition on the feed
        await(opened);
        s2.resetCounts();
        rejected(b2, OP);
        rejected(b2, OP);
        assertEquals(0, s2.reads.get(), "b2 learned the opening from the feed, with no read");
        CountDownLatch closed = probe(1, 0);
        b1.reset(OP);
        await(closed);
        assertEquals("ok", ok(b2, OP), "the closing event lifts b2's cached open state at once");
        assertEquals(0, s2.reads.get());
    }

    @Test
    void ownWritesUpdateTheEntry() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = build(s, Duration.ofMinutes(1));
        ok(b, OP);
        failOnce(b, OP);
        s.resetCounts();
        ok(b, OP); // the cached state has failures = 1: this success clears them
        assertEquals(0, s.reads.get());
        assertEquals(1, s.writes.get());
        assertEquals(0, backend.get(OP).orElseThrow().failures());
        failOnce(b, OP);
        failOnce(b, OP);
        s.resetCounts();
        rejected(b, OP);
        assertEquals(0, s.reads.get(), "the own opening write is known without a read");
    }

    @Test
    void entriesOlderThanFiveSecondsAreReReadEvenUnderALongerTolerance() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = build(s, Duration.ofMinutes(10));
        ok(b, OP);
        clock.advance(Duration.ofMillis(4_999));
        ok(b, OP);
        assertEquals(1, s.reads.get());
        clock.advanceMillis(1);
        ok(b, OP);
        assertEquals(2, s.reads.get(), "the fallback poll re-reads entries older than 5 s");
        // a change the feed never told about (written behind redeye's back) is picked up by that re-read
        backend.put(OP, BreakerState.builder().open(true).openedAt(clock.millis()).version(9).build(),
                Duration.ofDays(1));
        clock.advance(Duration.ofSeconds(5));
        rejected(b, OP);
    }

    @Test
    void aGapDistrustsEveryEntryUntilReRead() throws Exception {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = build(s, Duration.ofMinutes(1));
        ok(b, OP);
        ok(b, "other");
        assertEquals(2, s.reads.get());
        CountDownLatch gap = probe(0, 1);
        backend.simulateFeedGap();
        await(gap);
        ok(b, OP);
        ok(b, OP);
        ok(b, "other");
        ok(b, "other");
        assertEquals(4, s.reads.get(), "one re-read per entry after the gap, then trusted again");
    }

    @Test
    void aStateWithoutAVersionIsNeverTrusted() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = build(s, Duration.ofMinutes(1));
        backend.put(OP, BreakerState.INITIAL.withVersion(BreakerState.UNKNOWN_VERSION), Duration.ofDays(1));
        for (int i = 0; i < 5; i++) {
            ok(b, OP);
        }
        assertEquals(5, s.reads.get());
    }

    @Test
    void subscribesOnceAtBuildAndUnsubscribesAtClose() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock)
                .store(s).closeStore(false).localCache().build();
        for (int i = 0; i < 10; i++) {
            ok(b, OP + i);
        }
        assertEquals(1, s.liveSubscriptions.get());
        b.close();
        b.close();
        assertEquals(0, s.liveSubscriptions.get());
        assertFalse(b.isLocalCacheActive());
        assertEquals(0, s.closes.get(), "closeStore(false) leaves the store open");
    }
}

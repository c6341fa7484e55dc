package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Local deadlines run on the ticker, never on the wall clock: the wall clock of one of two breakers steps by
 * an hour, either way (an NTP step, a resumed virtual machine), and every local duration of that breaker
 * (open-view refresh, local-cache age, the hold after a lost claim, a permit's lease, the callTimeout check,
 * the cap on trial eligibility) still ends when its ticker says, no sooner and no later.
 */
class ClockStepTest {
    private static final String OP = "stepped";
    private static final Duration HOUR = Duration.ofHours(1);
    private final MutableClock clockA = new MutableClock();
    private final MutableClock clockB = new MutableClock();
    private final InMemoryStore backend = new InMemoryStore();

    @AfterEach
    void close() {
        backend.close();
    }

    private static CircuitBreakerBuilder on(MutableClock c) {
        return CircuitBreaker.builder().clock(c).ticker(c).jitter(0).failureThreshold(1)
                .resetTimeout(Duration.ofMinutes(10)).openCacheRefresh(Duration.ofSeconds(2));
    }

    /** Time passes for both instances. */
    private void advance(long millis) {
        clockA.advanceMillis(millis);
        clockB.advanceMillis(millis);
    }

    private static CircuitOpenException rejected(CircuitBreaker b) {
        return assertThrows(CircuitOpenException.class, () -> b.execute(OP, () -> "ran"));
    }

    /**
     * B sees the breaker open, then its wall clock steps; A resets the breaker. B learns of it at its normal
     * open-view refresh (openCacheRefresh by its ticker): not an hour later (clock stepped back), and with the
     * clock stepped forward not at once either (one re-verification per refresh; B's reset window is longer
     * than the step, so B's own eligibility does not come either).
     */
    @ParameterizedTest
    @ValueSource(longs = {-1, 1})
    void aResetByAnotherInstanceIsSeenAtTheNormalRefresh(long hours) {
        SpyStore storeB = SpyStore.over(backend);
        try (CircuitBreaker a = on(clockA).store(backend.newClient()).build();
             CircuitBreaker b = on(clockB).store(storeB).resetTimeout(Duration.ofHours(3)).build()) {
            LocalModeTest.failOnce(a, OP);
            rejected(b);
            clockB.step(HOUR.multipliedBy(hours));
            a.reset(OP);
            storeB.resetCounts();
            advance(1_900);
            rejected(b); // the open view still serves
            assertEquals(0, storeB.reads.get(), "no re-verification before openCacheRefresh by the ticker");
            advance(200);
            assertEquals("ran", b.execute(OP, () -> "ran"), "re-verified at openCacheRefresh: the reset is seen");
            assertEquals(1, storeB.reads.get());
        }
    }

    /**
     * B serves a closed state from its local cache; A opens the breaker and B's feed loses the event. B's
     * clock steps back an hour: the entry still goes stale after staleTolerance by the ticker, so B re-reads
     * and rejects; its clock stepped forward, the entry is still served until then, with zero reads (and the
     * re-read then finds the stored window over by B's clock: B's trial, which the store's claim arbitrates).
     */
    @ParameterizedTest
    @ValueSource(longs = {-1, 1})
    void aCachedClosedEntryIsNotServedPastItsStaleTolerance(long hours) {
        FeedControl feedB = new FeedControl(backend.newClient()); // the test delivers events: here, none
        try (CircuitBreaker a = on(clockA).store(backend.newClient()).build();
             CircuitBreaker b = on(clockB).store(feedB).localCache(Duration.ofMillis(100)).build()) {
            assertTrue(b.isLocalCacheActive());
            assertEquals("ran", b.execute(OP, () -> "ran"));
            LocalModeTest.failOnce(a, OP); // open; B hears nothing
            clockB.step(HOUR.multipliedBy(hours));
            int reads = feedB.reads.get();
            advance(90);
            assertEquals("ran", b.execute(OP, () -> "ran"), "younger than staleTolerance by the ticker: served");
            assertEquals(reads, feedB.reads.get(), "served from the cache, not re-read");
            advance(20);
            if (hours < 0) {
                rejected(b);
            } else { // an hour ahead, B finds the stored window long over: its trial (the claim arbitrates it)
                assertEquals("ran", b.execute(OP, () -> "ran"));
                assertEquals(1, b.metrics(OP).trials());
                reads++; // the trial's re-read after its claim
            }
            assertEquals(reads + 1, feedB.reads.get(), "stale by the ticker: re-read once, and the open state seen");
        }
    }

    /**
     * B loses the trial claim to A's hung trial and holds off for trialTimeout by its ticker: with zero store
     * operations even though its clock jumped an hour ahead, and not an hour longer when it jumped back.
     */
    @ParameterizedTest
    @ValueSource(longs = {-1, 1})
    void theHoldAfterALostClaimRunsOnTheTicker(long hours) {
        ManualClaims claims = new ManualClaims();
        SpyStore storeB = new SpyStore(claims.over(backend.newClient()));
        try (CircuitBreaker a = on(clockA).store(claims.over(backend.newClient())).build();
             CircuitBreaker b = on(clockB).store(storeB).trialTimeout(Duration.ofSeconds(30)).build()) {
            LocalModeTest.failOnce(a, OP);
            rejected(b); // B sees the open period from its start
            advance(Duration.ofMinutes(10).toMillis());
            Permit hung = a.tryAcquire(OP);
            assertTrue(hung.isTrial(), "A's trial hangs");
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b).status(), "B lost the claim");
            clockB.step(HOUR.multipliedBy(hours));
            storeB.resetCounts();
            advance(29_000);
            assertEquals(BreakerStatus.HALF_OPEN, rejected(b).status());
            assertEquals(0, storeB.reads.get() + storeB.claims.get(), "held: zero store operations");
            claims.expireAll(); // A's claim could have expired by now
            advance(1_000);
            assertEquals("ran", b.execute(OP, () -> "ran"), "after trialTimeout by the ticker B claims again");
            assertTrue(hung.release());
        }
    }

    /** A permit's trial slot is leased for trialTimeout by the ticker: a clock jumping ahead does not end it. */
    @Test
    void aPermitsLeaseRunsOnTheTicker() {
        try (CircuitBreaker b = on(clockB).store(backend.newClient()).trialTimeout(Duration.ofSeconds(30))
                .build()) {
            LocalModeTest.failOnce(b, OP);
            advance(Duration.ofMinutes(10).toMillis());
            Permit trial = b.tryAcquire(OP);
            assertTrue(trial.isTrial());
            clockB.step(HOUR);
            rejected(b); // finds the slot taken; must not take it back
            assertTrue(trial.onSuccess(), "the lease still runs: the trial's outcome counts");
            assertFalse(backend.get(OP).orElseThrow().open(), "and closed the breaker");
        }
        try (CircuitBreaker b = on(clockB).trialTimeout(Duration.ofSeconds(30)).build()) {
            LocalModeTest.failOnce(b, OP);
            advance(Duration.ofMinutes(10).toMillis());
            Permit lost = b.tryAcquire(OP);
            clockB.step(HOUR.negated());
            advance(30_000);
            Permit next = b.tryAcquire(OP);
            assertTrue(next.isTrial(), "trialTimeout by the ticker after the lost permit, its slot is taken back");
            assertFalse(lost.onSuccess(), "the lost permit's late completion is ignored");
            assertTrue(next.onSuccess());
        }
    }

    /** Whether a call that returned took longer than callTimeout is measured on the ticker. */
    @Test
    void theCallTimeoutCheckRunsOnTheTicker() {
        try (CircuitBreaker b = on(clockB).callTimeout(Duration.ofSeconds(1)).build()) {
            assertEquals("ran", b.execute(OP, () -> {
                clockB.step(HOUR); // the wall clock jumps while the call runs; no time passes
                return "ran";
            }));
            assertEquals(1, b.metrics(OP).successes(), "quick by the ticker: a success");
            assertEquals("slow", b.execute(OP, () -> {
                clockB.advanceMillis(1_001);
                return "slow";
            }));
            assertEquals(1, b.metrics(OP).failures(), "longer than callTimeout by the ticker: a failure");
        }
    }

    /**
     * Local mode: the breaker opens, then its wall clock steps back an hour. The trial still comes one reset
     * window after this instance saw the opening (by its ticker), not an hour later.
     */
    @Test
    void aLocalBreakerWhoseClockSteppedBackTriesAtItsWindow() {
        try (CircuitBreaker b = on(clockB).build()) {
            LocalModeTest.failOnce(b, OP);
            clockB.step(HOUR.negated());
            advance(Duration.ofMinutes(10).toMillis() - 1);
            CircuitOpenException early = rejected(b);
            assertEquals(1, early.retryAfter().orElseThrow().toMillis(), "the window by the ticker is what remains");
            advance(1);
            assertEquals("trial", b.execute(OP, () -> "trial"));
            assertEquals(BreakerStatus.CLOSED, b.status(OP));
        }
    }
}

package dev.redeye;

import static dev.redeye.LocalModeTest.failOnce;
import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Distributed mode: breakers over clients of one {@link InMemoryStore} stand for processes sharing a backend;
 * {@link SpyStore} counts what each one reads and writes.
 */
class DistributedModeTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";

    private CircuitBreakerBuilder builder(SpyStore store) {
        return CircuitBreaker.builder().clock(clock).ticker(clock)
                .jitter(0).resetTimeout(Duration.ofSeconds(10)).store(store);
    }

    @Test
    void healthyCallsReadOnceAndWriteNothing() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s));
        for (int i = 0; i < 100; i++) {
            ok(b, OP);
        }
        assertEquals(100, s.reads.get());
        assertEquals(0, s.writes.get());
    }

    @Test
    void consecutiveStrategyWritesOnlyFailuresAndClears() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s));
        failOnce(b, OP);
        assertEquals(1, s.writes.get());
        ok(b, OP); // saw failures = 1: clears
        assertEquals(2, s.writes.get());
        assertEquals(0, backend.get(OP).orElseThrow().failures());
        ok(b, OP);
        ok(b, OP);
        assertEquals(2, s.writes.get(), "nothing left to clear");
        assertEquals(4, s.reads.get());
    }

    @Test
    void errorRateStrategyWritesEveryOutcome() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s).strategy(Strategy.ERROR_RATE));
        for (int i = 0; i < 5; i++) {
            ok(b, OP);
        }
        assertEquals(5, s.writes.get());
        assertEquals(5, backend.get(OP).orElseThrow().samples());
    }

    @Test
    void openStateIsServedFromCacheAndReVerifiedOncePerRefresh() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s).failureThreshold(1).openCacheRefresh(Duration.ofSeconds(2)));
        failOnce(b, OP);
        s.resetCounts();
        for (int i = 0; i < 50; i++) {
            rejected(b, OP);
        }
        assertEquals(0, s.reads.get(), "own write made the open state known: no reads while open");
        clock.advance(Duration.ofMillis(1999));
        rejected(b, OP);
        assertEquals(0, s.reads.get());
        clock.advanceMillis(1);
        for (int i = 0; i < 20; i++) {
            rejected(b, OP);
        }
        assertEquals(1, s.reads.get(), "one re-verification per refresh period");
        clock.advance(Duration.ofSeconds(2));
        rejected(b, OP);
        rejected(b, OP);
        assertEquals(2, s.reads.get());
        assertEquals(0, s.claims.get());
    }

    @Test
    void theOpenCacheNeverDelaysTrialEligibility() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s).failureThreshold(1).openCacheRefresh(Duration.ofHours(1)));
        failOnce(b, OP);
        s.resetCounts();
        clock.advance(Duration.ofMillis(9_999));
        rejected(b, OP);
        assertEquals(0, s.reads.get());
        clock.advanceMillis(1);
        assertEquals("ok", ok(b, OP));
        assertEquals(2, s.reads.get(), "re-read at the eligibility instant, and once more after winning the claim");
        assertEquals(1, s.claims.get());
        assertEquals(1, s.releases.get(), "the claim is released after the trial");
        assertFalse(backend.get(OP).orElseThrow().open());
    }

    @Test
    void anotherInstancesOpeningIsSeenOnTheNextReadAndItsClosingAtTheNextRefresh() {
        SpyStore s1 = SpyStore.over(backend);
        SpyStore s2 = SpyStore.over(backend);
        CircuitBreaker b1 = keep(builder(s1).failureThreshold(3));
        CircuitBreaker b2 = keep(builder(s2).failureThreshold(3));
        failOnce(b1, OP);
        failOnce(b2, OP);
        failOnce(b1, OP);
        assertEquals(BreakerStatus.OPEN, b1.status(OP));
        CircuitBreaker b3 = keep(builder(SpyStore.over(backend)).failureThreshold(3));
        rejected(b2, OP);
        b3.reset(OP); // an operator closes it through a third instance
        // b2 still holds the open view it read: it may reject late, never allow early
        clock.advance(Duration.ofMillis(1999));
        rejected(b2, OP);
        clock.advanceMillis(1);
        assertEquals("ok", ok(b2, OP), "re-verified at openCacheRefresh");
        assertEquals("ok", ok(b1, OP), "b1's view is re-verified too");
    }

    @Test
    void onStateChangeFiresOnlyOnTheInstanceWhoseWriteCausedTheTransition() {
        List<TransitionEvent> e1 = new CopyOnWriteArrayList<>();
        List<TransitionEvent> e2 = new CopyOnWriteArrayList<>();
        CircuitBreaker b1 = keep(builder(SpyStore.over(backend)).failureThreshold(2).onStateChange(e1::add));
        CircuitBreaker b2 = keep(builder(SpyStore.over(backend)).failureThreshold(2).onStateChange(e2::add));
        failOnce(b2, OP);
        failOnce(b1, OP);
        assertEquals(List.of(TransitionKind.OPENED), e1.stream().map(TransitionEvent::kind).toList());
        assertTrue(e2.isEmpty());
        b2.reset(OP);
        assertEquals(1, e1.size());
        assertEquals(List.of(TransitionKind.FORCED_CLOSED), e2.stream().map(TransitionEvent::kind).toList());
        assertEquals(BreakerStatus.OPEN, e2.get(0).from());
    }

    @Test
    void forceOpenThroughOneHoldsEveryInstanceWithoutTrialsUntilReset() {
        SpyStore s2 = SpyStore.over(backend);
        CircuitBreaker b1 = keep(builder(SpyStore.over(backend)));
        CircuitBreaker b2 = keep(builder(s2));
        ok(b2, OP);
        b1.forceOpen(OP);
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofMinutes(10));
            assertEquals(BreakerStatus.FORCED_OPEN, rejected(b2, OP).status());
        }
        assertEquals(0, s2.claims.get(), "no trial is ever claimed while forced");
        b1.reset(OP);
        clock.advance(Duration.ofSeconds(2)); // b2's forced view is re-verified at its refresh
        assertEquals("ok", ok(b2, OP));
    }

    @Test
    void aClaimThatThrowsLetsTheCallerThroughAsATrial() {
        SpyStore s = SpyStore.over(backend);
        List<String> errors = new CopyOnWriteArrayList<>();
        CircuitBreaker b = keep(builder(s).failureThreshold(1).onStoreError((op, t) -> errors.add(op)));
        failOnce(b, OP);
        clock.advance(Duration.ofSeconds(10));
        s.failClaims = true;
        assertEquals("ok", ok(b, OP));
        assertEquals(1, b.metrics(OP).trials());
        assertEquals(1, b.metrics(OP).storeErrors());
        assertEquals(List.of(OP), errors);
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "the trial's success closed the breaker");
        assertEquals(0, s.releases.get(), "no token, nothing to release");
    }

    @Test
    void missingCapabilitiesFallBackWithExactlyOneWarningEachPerBreaker() {
        try (LogCapture log = LogCapture.start()) {
            SpyStore plain1 = SpyStore.over(backend, AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
            SpyStore plain2 = SpyStore.over(backend, AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
            CircuitBreaker b1 = keep(builder(plain1).failureThreshold(2).localCache());
            CircuitBreaker b2 = keep(builder(plain2).failureThreshold(2));
            // the fallbacks work: get-then-put counting across instances, local claims, put-based force
            failOnce(b1, OP);
            failOnce(b2, OP);
            assertEquals(BreakerStatus.OPEN, b1.status(OP));
            rejected(b2, OP);
            clock.advance(Duration.ofSeconds(10));
            ok(b2, OP);
            assertFalse(backend.get(OP).orElseThrow().open());
            b1.forceOpen(OP);
            assertTrue(backend.get(OP).orElseThrow().forced());
            b1.reset(OP);
            assertEquals(BreakerStatus.CLOSED, b2.status(OP));
            for (int i = 0; i < 10; i++) {
                failOnce(b1, OP);
                ok(b2, OP);
            }
            assertFalse(b1.isLocalCacheActive());
            assertEquals(2, log.warnings("lacks AtomicUpdates: outcomes, trial outcomes and forced changes are "
                    + "written with get-then-put"));
            assertEquals(2, log.warnings("lacks TrialClaims: half-open trials are claimed per instance"));
            assertEquals(1, log.warnings("lacks TransitionFeed: the local cache is unavailable"),
                    "only the breaker that asked for the local cache warns about the feed");
        }
    }

    @Test
    void underTheLocalPolicyWarningsNameTheUsersStoreAndTheFallbacksDegradeToo() {
        try (LogCapture log = LogCapture.start()) {
            SpyStore s = SpyStore.over(backend, AtomicUpdates.class);
            CircuitBreaker b = keep(builder(s).failureThreshold(2).storeErrorPolicy(StoreErrorPolicy.LOCAL));
            assertEquals(1, log.warnings("store dev.redeye.SpyStore lacks AtomicUpdates"));
            assertEquals(0, log.warnings("DegradingStore"));
            failOnce(b, OP);
            s.failing = true;
            failOnce(b, OP); // get-then-put against the in-process store seeded with failures = 1
            rejected(b, OP);
            assertEquals(1, backend.get(OP).orElseThrow().failures());
        }
    }

    @Test
    void withoutTrialClaimsEachInstanceClaimsItsOwnTrial() {
        CircuitBreaker b1 = keep(builder(SpyStore.over(backend, TrialClaims.class)).failureThreshold(1)
                .successThreshold(2));
        CircuitBreaker b2 = keep(builder(SpyStore.over(backend, TrialClaims.class)).failureThreshold(1)
                .successThreshold(2));
        failOnce(b1, OP);
        clock.advance(Duration.ofSeconds(10));
        List<String> inner = new ArrayList<>();
        b1.execute(OP, () -> {
            inner.add(b2.execute(OP, () -> "b2 trial"));        // another instance: its own permit
            inner.add(rejected(b1, OP).status().name());        // same instance: permit taken
            return "b1 trial";
        });
        assertEquals(List.of("b2 trial", "HALF_OPEN"), inner);
        assertFalse(backend.get(OP).orElseThrow().open(), "two trial successes closed it");
    }

    @Test
    void aStoreWithoutFeedHasNoLocalCacheAndLocalModeNeverDoes() {
        CircuitBreaker noFeed = keep(builder(SpyStore.over(backend, TransitionFeed.class)).localCache());
        assertFalse(noFeed.isLocalCacheActive());
        CircuitBreaker local = keep(CircuitBreaker.builder().localCache());
        assertFalse(local.isLocalCacheActive());
        CircuitBreaker withFeed = keep(builder(SpyStore.over(backend)).localCache());
        assertTrue(withFeed.isLocalCacheActive());
        CircuitBreaker noCache = keep(builder(SpyStore.over(backend)));
        assertFalse(noCache.isLocalCacheActive());
    }

    @Test
    void stateAndStatusReadTheStore() {
        SpyStore s = SpyStore.over(backend);
        CircuitBreaker b = keep(builder(s));
        assertEquals(BreakerState.INITIAL, b.state(OP));
        backend.put(OP, BreakerState.builder().failures(2).build(), Duration.ofDays(1));
        assertEquals(2, b.state(OP).failures());
        assertEquals(BreakerStatus.CLOSED, b.status(OP));
        assertEquals(3, s.reads.get());
    }
}

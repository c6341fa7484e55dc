package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TransitionsTest {
    private final Policy consecutive = Policy.builder().failureThreshold(3).resetTimeout(Duration.ofSeconds(10))
            .build();

    @Test
    void failuresOpenAtThresholdAndBumpVersionOnce() {
        StateChange c1 = Transitions.recordFailure(null, consecutive, 100);
        assertEquals(1, c1.state().failures());
        assertEquals(100, c1.state().lastFailureAt());
        assertEquals(0, c1.state().version());
        assertFalse(c1.isTransition());
        StateChange c2 = Transitions.recordFailure(c1.state(), consecutive, 200);
        StateChange c3 = Transitions.recordFailure(c2.state(), consecutive, 300);
        assertEquals(TransitionKind.OPENED, c3.transition());
        assertTrue(c3.state().open());
        assertEquals(300, c3.state().openedAt());
        assertEquals(1, c3.state().version());
    }

    @Test
    void failureWhileOpenCountsButDoesNotMoveOpenedAtOrVersion() {
        BreakerState open = BreakerState.builder().open(true).openedAt(50).failures(3).version(4).build();
        StateChange c = Transitions.recordFailure(open, consecutive, 999);
        assertEquals(4, c.state().failures());
        assertEquals(999, c.state().lastFailureAt());
        assertEquals(50, c.state().openedAt());
        assertEquals(4, c.state().version());
        assertNull(c.transition());
    }

    @Test
    void maxGapRestartsTheCount() {
        Policy p = consecutive.toBuilder().maxGapBetweenFailures(Duration.ofMillis(100)).build();
        BreakerState s = Transitions.recordFailure(null, p, 1000).state();
        s = Transitions.recordFailure(s, p, 1100).state();
        assertEquals(2, s.failures());
        s = Transitions.recordFailure(s, p, 1201).state();
        assertEquals(1, s.failures());
    }

    @Test
    void successClearsQuietlyOrDoesNothing() {
        StateChange none = Transitions.recordSuccess(BreakerState.INITIAL, consecutive, 1);
        assertFalse(none.changed());
        assertSame(BreakerState.INITIAL, none.state());
        BreakerState two = BreakerState.builder().failures(2).lastFailureAt(5).version(3).build();
        StateChange cleared = Transitions.recordSuccess(two, consecutive, 6);
        assertNull(cleared.transition(), "clearing is a write, not a transition (contract v2)");
        assertTrue(cleared.changed());
        assertEquals(0, cleared.state().failures());
        assertEquals(3, cleared.state().version());
    }

    @Test
    void trialOutcomesAreFencedByTheVersionTheyWereAdmittedUnder() {
        Policy p = consecutive.toBuilder().successThreshold(2).build();
        BreakerState open = BreakerState.builder().open(true).openedAt(1).failures(3).version(7).build();
        // K failing trials of one period reopen it once.
        StateChange first = Transitions.trialFailed(open, 7, p, 100);
        assertEquals(TransitionKind.REOPENED, first.transition());
        assertEquals(8, first.state().version());
        assertEquals(1, first.state().openCount());
        StateChange second = Transitions.trialFailed(first.state(), 7, p, 150);
        assertFalse(second.changed());
        assertSame(first.state(), second.state());
        // A late success from the earlier period never closes the reopened breaker nor counts toward it.
        StateChange late = Transitions.trialSucceeded(first.state(), 7, p, 200);
        assertFalse(late.changed());
        assertEquals(0, late.state().trialSuccesses());
        // The current period's trials count.
        StateChange s1 = Transitions.trialSucceeded(first.state(), 8, p, 300);
        assertNull(s1.transition());
        assertEquals(1, s1.state().trialSuccesses());
        assertEquals(8, s1.state().version());
        StateChange s2 = Transitions.trialSucceeded(s1.state(), 8, p, 301);
        assertEquals(TransitionKind.CLOSED, s2.transition());
        // An outcome on a closed breaker (another trial closed it) changes nothing.
        assertFalse(Transitions.trialFailed(s2.state(), 9, p, 400).changed());
        assertFalse(Transitions.trialFailed(s2.state(), 8, p, 400).changed());
    }

    @Test
    void trialSuccessesRestartInEveryOpenPeriod() {
        Policy p = consecutive.toBuilder().successThreshold(3).build();
        BreakerState open = BreakerState.builder().open(true).openedAt(1).failures(3).version(2).build();
        BreakerState one = Transitions.trialSucceeded(open, 2, p, 10).state();
        assertEquals(1, one.trialSuccesses());
        BreakerState reopened = Transitions.trialFailed(one, 2, p, 20).state();
        assertEquals(0, reopened.trialSuccesses());
        assertEquals(1, Transitions.trialSucceeded(reopened, 3, p, 30).state().trialSuccesses());
    }

    @Test
    void aNewLifeStartsAtTheGivenVersion() {
        BreakerState base = BreakerState.initial(1_000_000);
        StateChange c = Transitions.recordFailure(base, consecutive, 5);
        assertEquals(1_000_000, c.state().version());
        assertSame(BreakerState.INITIAL, BreakerState.initial(0));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> BreakerState.initial(-1));
    }

    @Test
    void leakyAddsOnFailureSubtractsOnSuccessFlooredAtZeroAndOpensAtTheThreshold() {
        Policy p = Policy.builder().strategy(Strategy.LEAKY).failureThreshold(3).build();
        BreakerState s = BreakerState.initial(4);
        String pattern = "SFFSFSSSFFSF"; // levels 0 1 2 1 2 1 0 0 1 2 1 2 -> never 3
        int[] levels = {0, 1, 2, 1, 2, 1, 0, 0, 1, 2, 1, 2};
        for (int i = 0; i < pattern.length(); i++) {
            boolean success = pattern.charAt(i) == 'S';
            StateChange c = Transitions.recordOutcome(s, success, p, 100 + i);
            assertEquals(levels[i], c.state().failures(), "level after call " + (i + 1));
            assertNull(c.transition(), "call " + (i + 1));
            assertEquals(4, c.state().version(), "a leak is a write, not a transition");
            if (success) {
                assertEquals(s.lastFailureAt(), c.state().lastFailureAt(), "a success keeps lastFailureAt");
                assertEquals(s.failures() > 0, c.changed(), "a success at 0 writes nothing");
            }
            s = c.state();
        }
        StateChange opening = Transitions.recordFailure(s, p, 500);
        assertEquals(TransitionKind.OPENED, opening.transition());
        assertEquals(500, opening.state().openedAt());
        assertEquals(5, opening.state().version());
        assertSame(opening.state(), Transitions.recordSuccess(opening.state(), p, 501).state(),
                "a success while open changes nothing");
        // the consecutive strategy would have cleared at every success and never opened
        assertEquals(0, Transitions.recordSuccess(s, consecutive, 502).state().failures());
    }

    @Test
    void leakyRestartsAfterTheGapLikeConsecutive() {
        Policy p = Policy.builder().strategy(Strategy.LEAKY).failureThreshold(5)
                .maxGapBetweenFailures(java.time.Duration.ofMillis(100)).build();
        BreakerState s = Transitions.recordFailure(null, p, 0).state();
        s = Transitions.recordFailure(s, p, 50).state();
        s = Transitions.recordFailure(s, p, 90).state();
        s = Transitions.recordSuccess(s, p, 95).state();
        assertEquals(2, s.failures());
        assertEquals(3, Transitions.recordFailure(s, p, 190).state().failures(), "within the gap of the last failure");
        assertEquals(1, Transitions.recordFailure(s, p, 191).state().failures(), "past the gap: restarts at 1");
    }

    @Test
    void strategiesHaveStableCodesAndNames() {
        assertEquals(2, Strategy.LEAKY.code());
        assertEquals("leaky", Strategy.LEAKY.wireName());
        assertSame(Strategy.LEAKY, Strategy.fromName("LEAKY"));
        assertSame(Strategy.ERROR_RATE, Strategy.fromName("error-rate"));
        assertTrue(Strategy.LEAKY.countsFailures() && Strategy.CONSECUTIVE.countsFailures());
        assertFalse(Strategy.ERROR_RATE.countsFailures());
    }

    @Test
    void errorRateFollowsTheEwmaAndOpensAfterMinimumCalls() {
        Policy p = Policy.builder().strategy(Strategy.ERROR_RATE).minimumCalls(10).errorRateDecay(0.9)
                .errorRateThreshold(0.5).build();
        BreakerState s = null;
        double rate = 0;
        int opened = -1;
        for (int i = 0; i < 40 && opened < 0; i++) {
            boolean success = i % 5 == 4; // 4 failures in 5 calls
            double x = success ? 0 : 1;
            rate = i == 0 ? x : 0.9 * rate + (1 - 0.9) * x;
            StateChange c = Transitions.recordOutcome(s, success, p, i);
            assertEquals(rate, c.state().errorRate(), 0.0);
            assertEquals(i + 1, c.state().samples());
            if (c.isTransition()) {
                opened = i;
                assertEquals(TransitionKind.OPENED, c.transition());
            }
            s = c.state();
        }
        assertEquals(9, opened, "opens at the 10th sample, the first allowed by minimumCalls");
    }

    @Test
    void trialSuccessClosesAtThresholdAndResetsCounters() {
        Policy p = consecutive.toBuilder().successThreshold(2).build();
        BreakerState open = BreakerState.builder().open(true).openedAt(1).failures(5).openCount(2).samples(3)
                .errorRate(0.5).version(7).build();
        StateChange first = Transitions.trialSucceeded(open, 7, p, 10);
        assertNull(first.transition());
        assertEquals(1, first.state().trialSuccesses());
        StateChange second = Transitions.trialSucceeded(first.state(), 7, p, 11);
        assertEquals(TransitionKind.CLOSED, second.transition());
        BreakerState c = second.state();
        assertFalse(c.open());
        assertEquals(0, c.failures());
        assertEquals(0, c.openCount());
        assertEquals(0, c.samples());
        assertEquals(0.0, c.errorRate());
        assertEquals(0, c.trialSuccesses());
        assertEquals(8, c.version());
    }

    @Test
    void trialFailureReopensWithBackoff() {
        BreakerState open = BreakerState.builder().open(true).openedAt(1).failures(1).version(3).build();
        StateChange c = Transitions.trialFailed(open, 3, consecutive, 500);
        assertEquals(TransitionKind.REOPENED, c.transition());
        assertEquals(500, c.state().openedAt());
        assertEquals(1, c.state().openCount());
        assertEquals(3, c.state().failures());
        assertEquals(500, c.state().lastFailureAt());
        assertEquals(4, c.state().version());
        assertEquals(20_000, Transitions.baseResetWindowMillis(c.state(), consecutive));
        BreakerState many = c.state().toBuilder().openCount(30).build();
        assertEquals(consecutive.maxResetTimeoutMillis(), Transitions.baseResetWindowMillis(many, consecutive));
    }

    @Test
    void forcedStatesReadBack() {
        long now = 1_000_000;
        BreakerState held = Transitions.force(null, BreakerStatus.FORCED_OPEN, consecutive, now).state();
        assertEquals(BreakerStatus.FORCED_OPEN, Transitions.status(held, consecutive, now + 10_000_000, 1.0));
        assertSame(held, Transitions.trialSucceeded(held, held.version(), consecutive, now).state());
        BreakerState half = Transitions.force(held, BreakerStatus.HALF_OPEN, consecutive, now).state();
        assertEquals(BreakerStatus.HALF_OPEN, Transitions.status(half, consecutive, now, 1.0 + 0.999));
        BreakerState closed = Transitions.force(half, BreakerStatus.CLOSED, consecutive, now).state();
        assertEquals(BreakerStatus.CLOSED, Transitions.status(closed, consecutive, now, 1.0));
        assertEquals(3, closed.version());
    }

    @Test
    void aForceTargetIsInForceExactlyWhenForcingItAgainWouldChangeNothingThatMatters() {
        long now = 1_000_000;
        assertTrue(Transitions.inForce(null, BreakerStatus.CLOSED, consecutive, now), "no state: nothing to reset");
        assertFalse(Transitions.inForce(null, BreakerStatus.FORCED_OPEN, consecutive, now));
        assertFalse(Transitions.inForce(null, BreakerStatus.HALF_OPEN, consecutive, now));

        BreakerState held = Transitions.force(null, BreakerStatus.FORCED_OPEN, consecutive, now).state();
        assertTrue(Transitions.inForce(held, BreakerStatus.FORCED_OPEN, consecutive, now + 1));
        assertTrue(Transitions.inForce(held, BreakerStatus.OPEN, consecutive, now + 1), "OPEN reads as FORCED_OPEN");
        assertFalse(Transitions.inForce(held, BreakerStatus.HALF_OPEN, consecutive, now + 1));
        assertFalse(Transitions.inForce(held, BreakerStatus.CLOSED, consecutive, now + 1));

        BreakerState half = Transitions.force(held, BreakerStatus.HALF_OPEN, consecutive, now).state();
        assertTrue(Transitions.inForce(half, BreakerStatus.HALF_OPEN, consecutive, now));
        assertTrue(Transitions.inForce(half, BreakerStatus.HALF_OPEN, consecutive, now + 60_000));
        assertFalse(Transitions.inForce(half, BreakerStatus.FORCED_OPEN, consecutive, now));
        BreakerState opened = null;
        for (int i = 0; i < 3; i++) {
            opened = Transitions.recordFailure(opened, consecutive, now).state();
        }
        assertFalse(Transitions.inForce(opened, BreakerStatus.HALF_OPEN, consecutive, now + 10_000),
                "opened by failures: some instance may still wait");
        assertFalse(Transitions.inForce(opened, BreakerStatus.FORCED_OPEN, consecutive, now));

        BreakerState closed = Transitions.force(half, BreakerStatus.CLOSED, consecutive, now).state();
        assertTrue(Transitions.inForce(closed, BreakerStatus.CLOSED, consecutive, now));
        BreakerState failing = Transitions.recordFailure(closed, consecutive, now).state();
        assertFalse(Transitions.inForce(failing, BreakerStatus.CLOSED, consecutive, now), "a failure to clear");
        Policy rate = Policy.builder().strategy(Strategy.ERROR_RATE).minimumCalls(10).build();
        BreakerState sampled = Transitions.recordSuccess(null, rate, now).state();
        assertFalse(Transitions.inForce(sampled, BreakerStatus.CLOSED, rate, now), "samples to clear");
        assertFalse(Transitions.inForce(closed.toBuilder().errorRate(-0.0).build(), BreakerStatus.CLOSED, rate, now),
                "closedFrom writes +0.0");
        assertTrue(Transitions.inForce(closed.toBuilder().lastFailureAt(now - 5).build(), BreakerStatus.CLOSED,
                consecutive, now), "closedFrom keeps lastFailureAt");
    }

    @Test
    void jitterIsStablePerOpenPeriodAndWithinBounds() {
        double a = Transitions.jitterFactor(42, "op", 1000, 0.1);
        assertEquals(a, Transitions.jitterFactor(42, "op", 1000, 0.1));
        boolean differs = false;
        for (int i = 0; i < 100; i++) {
            double f = Transitions.jitterFactor(42, "op", 1000 + i, 0.1);
            assertTrue(f >= 0.9 && f <= 1.1, "factor " + f);
            differs |= f != a;
        }
        assertTrue(differs);
        assertEquals(1.0, Transitions.jitterFactor(42, "op", 1000, 0.0));
    }
}

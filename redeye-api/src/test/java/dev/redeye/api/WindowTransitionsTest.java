package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import org.junit.jupiter.api.Test;

class WindowTransitionsTest {
    private static final long T0 = 1_764_800_000_000L;

    private static final Policy COUNT10 = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10)
            .minimumNumberOfCalls(4).failureRateThreshold(50).build();

    @Test
    void aCountWindowOpensAtTheOutcomeThatReachesTheRateOnceTheMinimumIsMet() {
        BreakerState s = null;
        // three failures: 100 % but below the minimum of 4
        for (int i = 0; i < 3; i++) {
            StateChange c = Transitions.recordFailure(s, COUNT10, T0 + i);
            assertFalse(c.isTransition());
            s = c.state();
        }
        assertEquals(3, s.window().failures());
        assertEquals(T0 + 2, s.lastFailureAt());
        StateChange opened = Transitions.recordSuccess(s, COUNT10, T0 + 3); // 3 of 4 = 75 %
        assertEquals(TransitionKind.OPENED, opened.transition());
        assertTrue(opened.state().open());
        assertEquals(1, opened.state().version());
        assertEquals(4, opened.state().window().calls(), "the window is kept while open");
        StateChange whileOpen = Transitions.recordSuccess(opened.state(), COUNT10, T0 + 4);
        assertFalse(whileOpen.changed());
        BreakerState closed = Transitions.trialSucceeded(opened.state(), 1, COUNT10, T0 + 5).state();
        assertNull(closed.window(), "the window empties when the breaker closes");
    }

    @Test
    void theRateIsComparedExactlyAtTheThreshold() {
        BreakerState s = null;
        // 2 of 5 failed does not open; 3 of 6, exactly 50 %, does (>=)
        boolean[] failed = {false, false, false, true, true};
        for (boolean f : failed) {
            s = Transitions.recordOutcome(s, !f, COUNT10, T0).state();
        }
        assertFalse(s.open());
        assertEquals(TransitionKind.OPENED, Transitions.recordFailure(s, COUNT10, T0).transition());
    }

    @Test
    void theMinimumOfACountWindowIsCappedAtItsSize() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 2).minimumNumberOfCalls(100).build();
        assertEquals(2, p.windowMinimumCalls());
        BreakerState s = Transitions.recordFailure(null, p, T0).state();
        assertEquals(TransitionKind.OPENED, Transitions.recordFailure(s, p, T0).transition());
        Policy t = p.toBuilder().slidingWindow(SlidingWindowType.TIME_BASED, 2).build();
        assertEquals(100, t.windowMinimumCalls());
    }

    @Test
    void slowCallsOpenOnTheSlowRateAndASlowFailureCountsTowardBoth() {
        Policy p = COUNT10.toBuilder().failureRateThreshold(100).slowCallRateThreshold(75).build();
        BreakerState s = Transitions.recordOutcome(null, true, true, p, T0).state();
        s = Transitions.recordOutcome(s, false, true, p, T0).state();
        assertEquals(1, s.window().failures());
        assertEquals(2, s.window().slowCalls());
        s = Transitions.recordOutcome(s, true, false, p, T0).state();
        StateChange c = AtomicOperation.outcome(true, true).apply(s, p, T0);
        assertEquals(TransitionKind.OPENED, c.transition(), "3 slow of 4 = 75 %");
        // the other strategies read a slow outcome as a plain one
        Policy consecutive = Policy.defaults();
        assertEquals(1, AtomicOperation.outcome(false, true).apply(null, consecutive, T0).state().failures());
        assertNull(AtomicOperation.outcome(false, true).apply(null, consecutive, T0).state().window());
    }

    @Test
    void aSlowCallInFlightIsCountedOnceAndItsFailureIsFencedByVersion() {
        Policy p = COUNT10.toBuilder().minimumNumberOfCalls(10).build();
        StateChange slow = AtomicOperation.slowCall().apply(null, p, T0);
        BreakerState s = slow.state();
        assertEquals(1, s.window().slowCalls());
        assertEquals(0, s.window().failures());
        long slot = s.window().position();
        AtomicOperation failed = AtomicOperation.slowCallFailed(slot, s.version());
        BreakerState after = failed.apply(s, p, T0 + 9).state();
        assertEquals(1, after.window().calls(), "not counted twice");
        assertEquals(1, after.window().failures());
        assertEquals(T0 + 9, after.lastFailureAt());
        assertFalse(failed.apply(after, p, T0 + 10).changed(), "marked failed once");
        BreakerState otherPeriod = after.withVersion(after.version() + 2);
        assertFalse(AtomicOperation.slowCallFailed(slot, s.version()).apply(otherPeriod, p, T0).changed());
        assertFalse(AtomicOperation.slowCall().apply(null, Policy.defaults(), T0).changed(),
                "the other strategies judge a call when it ends");
        assertEquals(AtomicOperation.slowCallFailed(slot, 0),
                AtomicOperation.of(AtomicOperation.Kind.SLOW_CALL_FAILED, 0, slot));
    }

    /**
     * Marking a slow call failed may roll a time window first: the failure added is compared with the rolled window,
     * so a failure rolled out at the same moment neither hides the mark nor passes for one.
     */
    @Test
    void aSlowCallFailedJudgesItsMarkAgainstTheRolledWindow() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 2).minimumNumberOfCalls(100).build();
        BreakerState s = Transitions.recordFailure(null, p, T0).state();
        BreakerState slow = Transitions.slowCall(s, p, T0 + 1_000).state();
        long slot = slow.window().position();
        StateChange marked = Transitions.slowCallFailed(slow, slot, slow.version(), p, T0 + 2_000);
        assertTrue(marked.changed(), "the failure of the bucket that left is not the mark");
        assertEquals("t2." + (T0 / 1000 + 2) + ".1-1-1.", marked.state().window().encode());
        assertEquals(T0 + 2_000, marked.state().lastFailureAt());

        BreakerState gone = Transitions.slowCall(Transitions.recordFailure(null, p, T0).state(), p, T0).state();
        StateChange late = Transitions.slowCallFailed(gone, gone.window().position(), gone.version(), p, T0 + 5_000);
        assertFalse(late.changed(), "the slot left the window: nothing is marked, and the roll is no failure");
    }

    @Test
    void aTimeWindowForgetsOutcomesOlderThanItsSeconds() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 10).minimumNumberOfCalls(3).build();
        BreakerState s = Transitions.recordFailure(null, p, T0).state();
        s = Transitions.recordFailure(s, p, T0 + 1_000).state();
        // ten seconds after the first failure its bucket has left: 1 failure + 1 success, below the minimum
        StateChange c = Transitions.recordSuccess(s, p, T0 + 10_000);
        assertFalse(c.isTransition());
        assertEquals(2, c.state().window().calls());
        StateChange opened = Transitions.recordFailure(c.state(), p, T0 + 10_500);
        assertEquals(TransitionKind.OPENED, opened.transition(), "2 of 3 failed");
    }

    @Test
    void aWindowOfAnotherShapeStartsAgain() {
        BreakerState s = Transitions.recordFailure(null, COUNT10, T0).state();
        Policy wider = COUNT10.toBuilder().slidingWindow(SlidingWindowType.COUNT_BASED, 20).build();
        BreakerState t = Transitions.recordSuccess(s, wider, T0).state();
        assertEquals(20, t.window().size());
        assertEquals(1, t.window().calls());
        assertEquals(0, t.window().failures());
    }

    @Test
    void metricsOnlyPublishesWhatWouldOpenAndStartsCountingAgain() {
        Policy p = COUNT10.toBuilder().mode(BreakerMode.METRICS_ONLY).build();
        BreakerState s = null;
        StateChange c = null;
        for (int i = 0; i < 4; i++) {
            c = Transitions.recordFailure(s, p, T0 + i);
            s = c.state();
        }
        assertEquals(TransitionKind.WOULD_OPEN, c.transition());
        assertFalse(s.open());
        assertNull(s.window());
        assertEquals(1, s.version());
        assertEquals(T0 + 3, s.lastFailureAt());
        Policy consecutive = Policy.builder().failureThreshold(2).mode(BreakerMode.METRICS_ONLY).build();
        BreakerState k = Transitions.recordFailure(null, consecutive, T0).state();
        StateChange would = Transitions.recordFailure(k, consecutive, T0);
        assertEquals(TransitionKind.WOULD_OPEN, would.transition());
        assertEquals(0, would.state().failures());
    }

    @Test
    void disabledRecordsNothing() {
        Policy p = COUNT10.toBuilder().mode(BreakerMode.DISABLED).build();
        assertFalse(Transitions.recordFailure(null, p, T0).changed());
        assertFalse(AtomicOperation.slowCall().apply(null, p, T0).changed());
        BreakerState stored = Transitions.forceMode(null, BreakerMode.DISABLED, COUNT10, T0).state();
        assertSame(stored, Transitions.recordFailure(stored, COUNT10, T0).state());
    }

    @Test
    void anOperatorsModeIsStoredClosesTheBreakerAndYieldsToForcedStates() {
        BreakerState open = Transitions.force(null, BreakerStatus.OPEN, COUNT10, T0).state();
        StateChange m = AtomicOperation.forceMode(BreakerMode.METRICS_ONLY).apply(open, COUNT10, T0 + 1);
        assertEquals(TransitionKind.MODE_CHANGED, m.transition());
        assertEquals(BreakerStatus.FORCED_OPEN, m.toEvent("op", COUNT10, T0 + 1).from());
        assertFalse(m.state().open());
        assertEquals(BreakerMode.METRICS_ONLY, m.state().mode());
        assertTrue(m.state().pinned(), "a stored mode does not expire");
        assertEquals(BreakerMode.METRICS_ONLY, m.state().effectiveMode(COUNT10));
        assertTrue(Transitions.inForce(m.state(), BreakerMode.METRICS_ONLY));
        assertTrue(AtomicOperation.forceMode(BreakerMode.DISABLED).removesClaims());
        BreakerState forcedOpen = Transitions.force(m.state(), BreakerStatus.OPEN, COUNT10, T0).state();
        assertEquals(BreakerMode.DEFAULT, forcedOpen.mode(), "an operator's opening is obeyed");
        Policy metricsOnly = COUNT10.toBuilder().mode(BreakerMode.METRICS_ONLY).build();
        assertEquals(BreakerMode.NORMAL, Transitions.force(m.state(), BreakerStatus.HALF_OPEN, metricsOnly, T0).state()
                .effectiveMode(metricsOnly));
        BreakerState reset = Transitions.force(forcedOpen, BreakerStatus.CLOSED, COUNT10, T0).state();
        assertEquals(BreakerMode.DEFAULT, reset.mode(), "a reset returns to the policy's mode");
        assertTrue(Transitions.inForce(reset, BreakerStatus.CLOSED, COUNT10, T0));
        assertFalse(Transitions.inForce(m.state(), BreakerStatus.CLOSED, COUNT10, T0));
        assertEquals("force_mode:metrics_only", AtomicOperation.forceMode(BreakerMode.METRICS_ONLY).toString());
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.of(AtomicOperation.Kind.FORCE_MODE, 9, 0));
    }

    @Test
    void policyOptionsAreCheckedByName() {
        assertThrows(InvalidOptionException.class, () -> Policy.builder().failureRateThreshold(0));
        assertThrows(InvalidOptionException.class, () -> Policy.builder().slowCallRateThreshold(100.5));
        assertThrows(InvalidOptionException.class, () -> Policy.builder().mode(BreakerMode.DEFAULT));
        InvalidOptionException e = assertThrows(InvalidOptionException.class,
                () -> Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 1_001));
        assertTrue(e.getMessage().contains("slidingWindowSize"), e.getMessage());
        assertEquals(Strategy.SLIDING_WINDOW,
                Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 86_400).build().strategy());
        Policy d = Policy.defaults();
        assertEquals(50.0, d.failureRateThreshold());
        assertEquals(100, d.minimumNumberOfCalls());
        assertEquals(100.0, d.slowCallRateThreshold());
        assertEquals(SlidingWindowType.COUNT_BASED, d.slidingWindowType());
        assertEquals(100, d.slidingWindowSize());
        assertEquals(BreakerMode.NORMAL, d.mode());
    }
}

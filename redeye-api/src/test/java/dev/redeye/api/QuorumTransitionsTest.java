package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Quorum opening in the rules: contributions per instance, their scope and bound, and the opening at quorum. */
class QuorumTransitionsTest {
    private static final long T0 = 1_700_000_000_000L;

    private static Policy consecutive(int threshold, int quorum) {
        return Policy.builder().failureThreshold(threshold).quorum(quorum).jitter(0.0).build();
    }

    private static Policy timeWindow(int seconds, int quorum) {
        return Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, seconds).failureRateThreshold(50)
                .minimumNumberOfCalls(2).quorum(quorum).jitter(0.0).build();
    }

    /** Applies outcomes ({@code "A-"}: A failed, {@code "B+"}: B succeeded) one by one, returning every change. */
    private static List<StateChange> play(BreakerState s, Policy p, long now, String... outcomes) {
        List<StateChange> changes = new ArrayList<>();
        BreakerState cur = s;
        for (String o : outcomes) {
            String instance = o.substring(0, o.length() - 1);
            boolean success = o.endsWith("+");
            StateChange c = AtomicOperation.outcome(success, false, instance).apply(cur, p, now);
            changes.add(c);
            cur = c.state();
        }
        return changes;
    }

    private static BreakerState last(List<StateChange> changes) {
        return changes.get(changes.size() - 1).state();
    }

    @Test
    void oneInstanceFailingAloneNeverOpensTheFleet() {
        Policy p = consecutive(3, 2);
        String[] hundred = new String[100];
        java.util.Arrays.fill(hundred, "A-");
        List<StateChange> changes = play(null, p, T0, hundred);
        for (StateChange c : changes) {
            assertNull(c.transition());
        }
        BreakerState s = last(changes);
        assertFalse(s.open());
        assertEquals(100, s.failures(), "the strategy's count goes on");
        assertEquals(List.of(new Contribution("A", 100, 100, T0)), s.contributors());
        assertFalse(Transitions.quorumMet(s, p));
    }

    @Test
    void theFleetOpensAtTheFailureThatMakesTheQuorum() {
        Policy p = consecutive(3, 3);
        List<StateChange> changes = play(null, p, T0, "A-", "A-", "A-", "B-", "B-", "C-");
        for (int i = 0; i < 5; i++) {
            assertNull(changes.get(i).transition(), "step " + i);
        }
        assertEquals(TransitionKind.OPENED, changes.get(5).transition(), "the third instance makes the quorum");
        BreakerState open = last(changes);
        assertTrue(open.open());
        assertEquals(List.of("C", "B", "A"), open.contributors().stream().map(Contribution::instance).toList(),
                "the most recent first, kept in the open state");
        assertTrue(Transitions.quorumMet(open, p));
    }

    @Test
    void aClearingSuccessStartsTheScopeAgainWithTheClearingInstance() {
        Policy p = consecutive(3, 2);
        BreakerState s = last(play(null, p, T0, "A-", "A-", "B+"));
        assertEquals(0, s.failures());
        assertEquals(List.of(new Contribution("B", 0, 1, T0)), s.contributors());
        List<StateChange> after = play(s, p, T0 + 1, "C-", "C-", "C-");
        assertNull(after.get(2).transition(), "A's failures were cleared: C alone is no quorum");
        assertEquals(TransitionKind.OPENED, play(last(after), p, T0 + 2, "A-").get(0).transition());
    }

    @Test
    void aGapPastMaxGapBetweenFailuresRestartsTheScope() {
        Policy p = Policy.builder().failureThreshold(2).quorum(2).jitter(0.0)
                .maxGapBetweenFailures(java.time.Duration.ofSeconds(1)).build();
        BreakerState s = last(play(null, p, T0, "A-"));
        List<StateChange> late = play(s, p, T0 + 5_000, "B-");
        assertNull(late.get(0).transition(), "A's failure is past the gap: the count restarts with B alone");
        assertEquals(List.of("B"), last(late).contributors().stream().map(Contribution::instance).toList());
    }

    @Test
    void aTimeWindowForgetsContributionsOlderThanTheWindow() {
        Policy p = timeWindow(10, 2);
        BreakerState s = last(play(null, p, T0, "A-", "A-"));
        assertFalse(s.open(), "A alone");
        BreakerState later = last(play(s, p, T0 + 11_000, "B-"));
        assertEquals(List.of("B"), later.contributors().stream().map(Contribution::instance).toList(),
                "A's contribution is older than the window");
        StateChange c = play(later, p, T0 + 11_500, "C-").get(0);
        assertEquals(TransitionKind.OPENED, c.transition(), "B and C, within the window");
    }

    @Test
    void aCountWindowWithoutFailuresStartsTheScopeAgain() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 2).failureRateThreshold(50)
                .minimumNumberOfCalls(2).quorum(2).jitter(0.0).build();
        BreakerState s = last(play(null, p, T0, "A-", "A+", "A+"));
        assertEquals(0, s.window().failures(), "A's failure rolled out of the window");
        assertEquals(List.of(new Contribution("A", 0, 1, T0)), s.contributors());
        StateChange c = last2(play(s, p, T0, "B-", "B-"));
        assertNull(c.transition(), "B alone, though the window is all failures");
    }

    private static StateChange last2(List<StateChange> changes) {
        return changes.get(changes.size() - 1);
    }

    @Test
    void atMostSixteenInstancesAreHeldTheMostRecent() {
        Policy p = consecutive(1_000, 2);
        BreakerState s = null;
        for (int i = 0; i < 20; i++) {
            s = AtomicOperation.outcome(false, false, "i" + i).apply(s, p, T0 + i).state();
        }
        assertEquals(BreakerState.MAX_CONTRIBUTORS, s.contributors().size());
        assertEquals("i19", s.contributors().get(0).instance());
        assertTrue(s.contributors().stream().noneMatch(c -> c.instance().equals("i3")),
                "the least recent instances dropped out: " + s.contributors());
        assertTrue(s.contributors().stream().anyMatch(c -> c.instance().equals("i4")));
    }

    @Test
    void aFractionOfTheInstancesSeen() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 60).failureRateThreshold(40)
                .minimumNumberOfCalls(2).quorumFraction(0.5).jitter(0.0).build();
        // four instances seen, one failing: 1 of 4 < 50 %
        List<StateChange> changes = play(null, p, T0, "A+", "B+", "C+", "D-", "D-", "D-");
        assertNull(last2(changes).transition(), "the rate is met (3 of 6), the fraction is not (1 of 4)");
        assertEquals(TransitionKind.OPENED, play(last(changes), p, T0 + 1, "C-").get(0).transition(),
                "2 of 4 instances failing");
    }

    @Test
    void metricsOnlyWouldOpenOnlyAtTheQuorumAndStartsAgain() {
        Policy p = Policy.builder().failureThreshold(2).quorum(2).mode(BreakerMode.METRICS_ONLY).jitter(0.0).build();
        List<StateChange> changes = play(null, p, T0, "A-", "A-", "A-", "B-");
        assertNull(changes.get(2).transition());
        assertEquals(TransitionKind.WOULD_OPEN, changes.get(3).transition());
        assertTrue(last(changes).contributors().isEmpty(), "counting starts again");
    }

    @Test
    void aSlowCallCannotOpenBelowTheQuorum() {
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 4).slowCallRateThreshold(50)
                .failureRateThreshold(100).minimumNumberOfCalls(2).quorum(2).jitter(0.0).build();
        BreakerState s = last(play(null, p, T0, "A+"));
        StateChange c = Transitions.slowCall(s, p, T0);
        assertNull(c.transition(), "a slow call is nobody's failure: no quorum");
        assertEquals(1, c.state().window().slowCalls());
    }

    @Test
    void withoutAQuorumNothingIsKept() {
        Policy p = consecutive(2, 0);
        List<StateChange> changes = play(null, p, T0, "A-", "B-");
        assertEquals(TransitionKind.OPENED, changes.get(1).transition());
        assertTrue(last(changes).contributors().isEmpty());
        assertTrue(Transitions.quorumMet(last(changes), p));
    }

    @Test
    void theCodecCarriesContributions() {
        BreakerState s = last(play(null, consecutive(5, 2), T0, "A-", "pod-7.web:8080@host#0a1f-"));
        Map<String, String> f = StateCodec.toFields(s);
        assertEquals("pod-7.web:8080@host#0a1f,1,1," + T0 + ";A,1,1," + T0, f.get(StateCodec.CONTRIBUTORS));
        assertEquals(s, StateCodec.fromFields(f, "test"));
        assertFalse(StateCodec.toFields(BreakerState.INITIAL).containsKey(StateCodec.CONTRIBUTORS), "absent when none");
        assertThrows(dev.redeye.api.StoreException.class, () -> StateCodec.fromFields(
                withField(f, "A,1,1,5;A,1,1,6"), "test"), "an instance twice");
        assertThrows(dev.redeye.api.StoreException.class, () -> StateCodec.fromFields(
                withField(f, "A,2,1,5"), "test"), "more failures than calls");
        assertThrows(dev.redeye.api.StoreException.class, () -> StateCodec.fromFields(
                withField(f, "A,1,1"), "test"), "a field missing");
        for (String bad : List.of("A,1,1,5;", ";A,1,1,5", "A,1,1,5;;B,1,1,5", "A,1,1,5,", "A,1,1,5,6", ",1,1,5",
                "A,,1,5", "A,1,1,", "A,1,1,x", "A,1,2147483648,5", "A,1,1,5;B,1", "A;1,1,5", "A B,1,1,5",
                "x".repeat(65) + ",1,1,5")) {
            assertThrows(dev.redeye.api.StoreException.class, () -> StateCodec.fromFields(withField(f, bad),
                    "test"), bad);
        }
        assertEquals(List.of(new Contribution("A", 0, 1, -5), new Contribution("b.c", 2, 3, 7)),
                Contribution.decodeAll("A,0,1,-5;b.c,2,3,7"));
    }

    private static Map<String, String> withField(Map<String, String> f, String contributors) {
        Map<String, String> m = new java.util.LinkedHashMap<>(f);
        m.put(StateCodec.CONTRIBUTORS, contributors);
        return m;
    }

    @Test
    void badOptionsAndIdsAreRefused() {
        assertEquals("quorum", assertThrows(InvalidOptionException.class,
                () -> Policy.builder().quorum(17)).option());
        assertEquals("quorumFraction", assertThrows(InvalidOptionException.class,
                () -> Policy.builder().quorumFraction(1.5)).option());
        assertEquals("quorumFraction", assertThrows(InvalidOptionException.class,
                () -> Policy.builder().quorum(2).quorumFraction(0.5).build()).option());
        assertEquals("quorum", assertThrows(InvalidOptionException.class,
                () -> Policy.builder().strategy(Strategy.ERROR_RATE).quorum(2).build()).option());
        assertEquals("quorumFraction", assertThrows(InvalidOptionException.class,
                () -> Policy.builder().strategy(Strategy.LEAKY).quorumFraction(0.5).build()).option());
        for (String bad : new String[] {"", "a b", "a,b", "a;b", "x".repeat(65), "é"}) {
            assertThrows(IllegalArgumentException.class, () -> Contribution.requireValidInstance(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.outcome(false, false, "a;b"));
        assertEquals(2, Policy.builder().quorum(2).build().quorumRequired(10));
        assertEquals(3, Policy.builder().quorumFraction(0.25).build().quorumRequired(9));
        assertEquals(1, Policy.builder().quorumFraction(0.1).build().quorumRequired(1));
        assertFalse(Policy.builder().quorum(1).build().quorumOn(), "a quorum of one is every instance alone");
    }
}

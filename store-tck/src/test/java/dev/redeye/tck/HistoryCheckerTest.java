package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.StateChange;
import dev.redeye.tck.HistoryChecker.Event;
import dev.redeye.tck.HistoryChecker.Result;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The linearizability checker of R8.3 on hand-made histories: it accepts an order that overlapping calls
 * allow even against their invocation order, and rejects lost updates, orders that contradict real time, and
 * two winners of one permit, saying which call does not fit.
 */
class HistoryCheckerTest {
    private static final Policy P = Policy.builder().failureThreshold(5).jitter(0).build();
    private static final BreakerState F0 = BreakerState.INITIAL.toBuilder().version(5).build();
    private static final BreakerState F1 = F0.toBuilder().failures(1).lastFailureAt(TckSupport.T0).build();
    private static final BreakerState F2 = F0.toBuilder().failures(2).lastFailureAt(TckSupport.T0).build();

    /** A model whose key 0 holds {@code s}. */
    private static ReferenceModel holding(BreakerState s) {
        ReferenceModel m = ReferenceModel.empty(1);
        return m.apply(Call.put(0, s), new Observed(null, null, 0, 0)).next();
    }

    private static Event failure(int thread, int index, StateChange returned, long from, long to) {
        return new Event(thread, index, "a", Call.of(Call.Op.RECORD_FAILURE, 0, P, TckSupport.T0),
                new Observed(returned, null, from, to));
    }

    private static Event read(int thread, BreakerState s, long at) {
        return new Event(thread, 0, "b", Call.plain(Call.Op.GET, 0), new Observed(Optional.of(s), null, at, at + 1));
    }

    private static List<String> labels(Result r) {
        return r.order().stream().map(Event::label).collect(Collectors.toList());
    }

    @Test
    void overlappingCallsMayTakeEffectInEitherOrder() {
        // t1 was called first but saw the state t2 left: fine, they overlap.
        Result r = HistoryChecker.check(holding(F0), List.of(
                List.of(failure(0, 0, new StateChange(F1, F2, null), 0, 10)),
                List.of(failure(1, 0, new StateChange(F0, F1, null), 5, 15)),
                List.of(read(2, F2, 20))));
        assertTrue(r.linearizable(), r.blocked().toString());
        assertEquals(List.of("t2.1", "t1.1", "t3.1"), labels(r));
    }

    @Test
    void aLostUpdateIsNotLinearizable() {
        Result r = HistoryChecker.check(holding(F0), List.of(
                List.of(failure(0, 0, new StateChange(F0, F1, null), 0, 10)),
                List.of(failure(1, 0, new StateChange(F0, F1, null), 5, 15)),
                List.of(read(2, F1, 20))));
        assertFalse(r.linearizable());
        assertEquals(1, r.order().size(), "one of the two failures fits first: " + labels(r));
        assertTrue(r.blocked().stream().anyMatch(b -> b.contains("failures expected 1 but was 0")), r.blocked()
                .toString());
        assertTrue(r.blocked().stream().anyMatch(b -> b.startsWith("t3.1 cannot come next")), r.blocked().toString());
    }

    @Test
    void realTimeOrderIsRespected() {
        // The same results as the first test, but t1 returned before t2 was called: t1 must come first.
        Result r = HistoryChecker.check(holding(F0), List.of(
                List.of(failure(0, 0, new StateChange(F1, F2, null), 0, 10)),
                List.of(failure(1, 0, new StateChange(F0, F1, null), 20, 30))));
        assertFalse(r.linearizable());
        assertTrue(r.blocked().stream().anyMatch(b -> b.contains("t2.1 cannot come next: t1.1 returned before")),
                r.blocked().toString());
    }

    @Test
    void twoWinnersOfOnePermitAreNotLinearizable() {
        Call claim = Call.claim(0, 1, Duration.ofMinutes(5));
        Result r = HistoryChecker.check(ReferenceModel.empty(1), List.of(
                List.of(new Event(0, 0, "a", claim, new Observed(Optional.of("x"), null, 0, 10))),
                List.of(new Event(1, 0, "b", claim, new Observed(Optional.of("y"), null, 2, 12)))));
        assertFalse(r.linearizable());
        assertTrue(r.blocked().get(0).contains("returned a token although 1 live claim(s) hold the key"),
                r.blocked().toString());
    }

    @Test
    void theClaimRemovalOfAForcedCloseTakesEffectWithItsStateChange() {
        // t1's force took effect before t2's put (it returned the state the put replaced), so the claim t2 took
        // after the put came after the force and outlives it: t3's token would need the force's claim removal
        // to come later than its state change, which no store may do (one atomic step per call).
        BreakerState open = F2.toBuilder().open(true).openedAt(TckSupport.T0).version(6).build();
        BreakerState closed = dev.redeye.spi.Transitions.closedFrom(open);
        BreakerState put = F1.toBuilder().version(9).build();
        Call force = Call.force(0, dev.redeye.api.BreakerStatus.CLOSED, P, TckSupport.T0);
        Call claim = Call.claim(0, 1, Duration.ofMinutes(5));
        List<Event> forcing = List.of(new Event(0, 0, "a", force, new Observed(new StateChange(open, closed,
                dev.redeye.api.TransitionKind.FORCED_CLOSED), null, 0, 100)));
        List<Event> putThenClaim = List.of(new Event(1, 0, "b", Call.put(0, put), new Observed(null, null, 10, 15)),
                new Event(1, 1, "b", claim, new Observed(Optional.of("A"), null, 20, 25)));
        Result r = HistoryChecker.check(holding(open), List.of(forcing, putThenClaim,
                List.of(new Event(2, 0, "a", claim, new Observed(Optional.of("B"), null, 110, 120)))));
        assertFalse(r.linearizable(), "a claim removal after the state change was accepted: " + labels(r));
        assertTrue(r.blocked().stream().anyMatch(b -> b.contains("returned a token although 1 live claim(s) hold")),
                r.blocked().toString());
        Result refused = HistoryChecker.check(holding(open), List.of(forcing, putThenClaim,
                List.of(new Event(2, 0, "a", claim, new Observed(Optional.empty(), null, 110, 120)))));
        assertTrue(refused.linearizable(), "the same history with t3 refused: " + refused.blocked());
    }

    @Test
    void aNewLifeMayStartAtAnyVersionAboveTheOldOnes() {
        ReferenceModel deleted = holding(F1).apply(Call.plain(Call.Op.DELETE, 0), new Observed(null, null, 0, 0))
                .next();
        BreakerState reborn = BreakerState.initial(1_000_000_007L);
        StateChange fine = new StateChange(reborn, reborn.toBuilder().failures(1).lastFailureAt(TckSupport.T0).build(),
                null);
        assertTrue(HistoryChecker.check(deleted, List.of(List.of(failure(0, 0, fine, 0, 1)))).linearizable());
        for (long v : new long[] {4, F1.version()}) { // below the old version, and the old version itself
            BreakerState backwards = BreakerState.initial(v);
            StateChange bad = new StateChange(backwards, backwards.toBuilder().failures(1).lastFailureAt(TckSupport.T0)
                    .build(), null);
            Result r = HistoryChecker.check(deleted, List.of(List.of(failure(0, 0, bad, 0, 1))));
            assertFalse(r.linearizable(), "a new life at version " + v);
            assertTrue(r.blocked().get(0).contains("with v >= 6"), r.blocked().toString());
        }
    }
}

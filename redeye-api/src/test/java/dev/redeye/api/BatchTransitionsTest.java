package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Batches of outcomes ({@link AtomicOperation#outcomes}): applied, a batch leaves the state its outcomes one by one
 * leave, reports the first transition, and carries its outcomes exactly.
 */
class BatchTransitionsTest {
    private static final long T0 = 1_700_000_000_000L;

    /** The outcomes one by one: the state after the last, and every transition in order. */
    private static StateChange oneByOne(BreakerState s, long[] packed, Policy p, String instance,
            List<TransitionKind> transitions) {
        BreakerState cur = s;
        BreakerState previous = null;
        for (long o : packed) {
            StateChange c = Transitions.recordOutcome(cur, (o & 1) == 0, (o & 2) != 0, p, o >> 2, instance);
            previous = previous == null ? c.previous() : previous;
            if (c.transition() != null) {
                transitions.add(c.transition());
            }
            cur = c.state();
        }
        return new StateChange(previous, cur, transitions.isEmpty() ? null : transitions.get(0));
    }

    private static Policy[] policies() {
        return new Policy[] {
            Policy.builder().failureThreshold(3).jitter(0).build(),
            Policy.builder().strategy(Strategy.LEAKY).failureThreshold(3).jitter(0).build(),
            Policy.builder().failureThreshold(2).maxGapBetweenFailures(java.time.Duration.ofMillis(50)).jitter(0)
                    .build(),
            Policy.builder().strategy(Strategy.ERROR_RATE).minimumCalls(4).errorRateThreshold(0.5).jitter(0).build(),
            Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 5).failureRateThreshold(50)
                    .slowCallRateThreshold(60).minimumNumberOfCalls(3).jitter(0).build(),
            Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 2).failureRateThreshold(50)
                    .minimumNumberOfCalls(3).jitter(0).build(),
            Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 4).failureRateThreshold(50)
                    .minimumNumberOfCalls(2).mode(BreakerMode.METRICS_ONLY).jitter(0).build(),
            Policy.builder().failureThreshold(2).mode(BreakerMode.DISABLED).jitter(0).build(),
            Policy.builder().failureThreshold(3).quorum(2).jitter(0).build(),
        };
    }

    @Test
    void aBatchLeavesTheStateItsOutcomesOneByOneLeave() {
        SplittableRandom r = new SplittableRandom(27);
        int openings = 0;
        for (int round = 0; round < 3_000; round++) {
            Policy p = policies()[round % policies().length];
            String instance = p.quorumOn() ? "i" + r.nextInt(3) : null;
            BreakerState start = r.nextInt(4) == 0 ? null
                    : AtomicOperation.outcome(false).apply(null, p, T0).state().withVersion(1 + r.nextInt(9));
            int n = 1 + r.nextInt(r.nextInt(10) == 0 ? AtomicOperation.MAX_BATCH : 12);
            long[] packed = new long[n];
            long at = T0 + r.nextInt(100);
            for (int i = 0; i < n; i++) {
                at += r.nextInt(4) == 0 ? -r.nextInt(30) : r.nextInt(700); // a clock may step back
                packed[i] = AtomicOperation.packOutcome(r.nextInt(3) == 0, r.nextInt(4) == 0, at);
            }
            AtomicOperation batch = AtomicOperation.outcomes(packed, n, instance);
            List<TransitionKind> transitions = new ArrayList<>();
            StateChange expected = oneByOne(start, packed, p, instance, transitions);
            StateChange got = batch.apply(start, p, T0 + 1_000_000);
            assertEquals(expected, got, "round " + round + ": " + batch + " under " + p);
            openings += transitions.contains(TransitionKind.OPENED) ? 1 : 0;
            if (p.mode() != BreakerMode.METRICS_ONLY) {
                assertTrue(transitions.size() <= 1, "ordinary outcomes open at most once: " + transitions);
            }
        }
        assertTrue(openings > 100, "the batches crossed openings: " + openings);
    }

    @Test
    void aBatchThatOpensReportsTheOpeningAndAppliesTheRestToTheOpenState() {
        Policy p = Policy.builder().failureThreshold(2).jitter(0).build();
        long[] packed = {
            AtomicOperation.packOutcome(false, false, T0),
            AtomicOperation.packOutcome(false, false, T0 + 1), // opens here
            AtomicOperation.packOutcome(true, false, T0 + 2), // ignored while open
            AtomicOperation.packOutcome(false, false, T0 + 3), // a failure while open
        };
        StateChange ch = AtomicOperation.outcomes(packed, 4, null).apply(null, p, T0 + 10);
        assertEquals(TransitionKind.OPENED, ch.transition());
        assertEquals(BreakerState.INITIAL, ch.previous());
        assertTrue(ch.state().open());
        assertEquals(T0 + 1, ch.state().openedAt(), "opened at the outcome that opened, not at the flush");
        assertEquals(3, ch.state().failures());
        assertEquals(T0 + 3, ch.state().lastFailureAt());
        assertEquals(1, ch.state().version());
        TransitionEvent e = ch.toEvent("op", p, T0 + 10);
        assertEquals(BreakerStatus.CLOSED, e.from());
        assertEquals(ch.state(), e.state(), "the event carries the final state");
    }

    @Test
    void aMetricsOnlyBatchThatWouldOpenTwiceReportsOneWouldOpenAndBumpsTheVersionTwice() {
        Policy p = Policy.builder().failureThreshold(2).mode(BreakerMode.METRICS_ONLY).jitter(0).build();
        long[] packed = new long[5];
        for (int i = 0; i < 5; i++) {
            packed[i] = AtomicOperation.packOutcome(false, false, T0 + i);
        }
        StateChange ch = AtomicOperation.outcomes(packed, 5, null).apply(null, p, T0 + 10);
        assertEquals(TransitionKind.WOULD_OPEN, ch.transition());
        assertEquals(2, ch.state().version(), "two would-be openings (failures 2 and 4)");
        assertEquals(1, ch.state().failures(), "the fifth failure counts after the second reset");
        assertFalse(ch.state().open());
    }

    @Test
    void aBatchWithNothingToChangeChangesNothing() {
        Policy p = Policy.builder().failureThreshold(2).jitter(0).build();
        long[] packed = {AtomicOperation.packOutcome(true, false, T0), AtomicOperation.packOutcome(true, true, T0)};
        StateChange ch = AtomicOperation.outcomes(packed, 2, null).apply(null, p, T0);
        assertEquals(StateChange.unchanged(BreakerState.INITIAL), ch);
        assertFalse(ch.changed());
    }

    @Test
    void packedOutcomesRoundTripAndBatchesAreBounded() {
        long[] packed = {
            AtomicOperation.packOutcome(true, false, T0),
            AtomicOperation.packOutcome(false, true, -5),
            AtomicOperation.packOutcome(true, true, (1L << 61) - 1),
            AtomicOperation.packOutcome(false, false, -(1L << 61)),
        };
        AtomicOperation b = AtomicOperation.outcomes(packed, 4, "pod-1");
        assertEquals(AtomicOperation.Kind.OUTCOMES, b.kind());
        assertEquals(4, b.outcomeCount());
        assertEquals("pod-1", b.instance());
        assertTrue(b.outcomeSucceeded(0) && !b.outcomeSlow(0) && b.outcomeAt(0) == T0);
        assertTrue(!b.outcomeSucceeded(1) && b.outcomeSlow(1) && b.outcomeAt(1) == -5);
        assertTrue(b.outcomeSucceeded(2) && b.outcomeSlow(2) && b.outcomeAt(2) == (1L << 61) - 1);
        assertTrue(!b.outcomeSucceeded(3) && !b.outcomeSlow(3) && b.outcomeAt(3) == -(1L << 61));
        assertFalse(b.removesClaims());
        assertEquals("outcomes[4] by pod-1", b.toString());
        packed[0] = 0;
        assertEquals(T0, b.outcomeAt(0), "the batch holds a copy");
        assertEquals(b, AtomicOperation.outcomes(new long[] {AtomicOperation.packOutcome(true, false, T0),
            packed[1], packed[2], packed[3]}, 4, "pod-1"));
        assertEquals(0, AtomicOperation.success().outcomeCount());
        assertThrows(IndexOutOfBoundsException.class, () -> b.outcomeAt(4));
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.packOutcome(true, false, 1L << 61));
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.outcomes(new long[1], 0, null));
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.outcomes(new long[2], 3, null));
        assertThrows(IllegalArgumentException.class,
                () -> AtomicOperation.outcomes(new long[AtomicOperation.MAX_BATCH + 1], AtomicOperation.MAX_BATCH + 1,
                        null));
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.outcomes(new long[1], 1, "bad id!"));
        assertThrows(IllegalArgumentException.class,
                () -> AtomicOperation.of(AtomicOperation.Kind.OUTCOMES, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> AtomicOperation.of(AtomicOperation.Kind.OUTCOMES, 0));
    }

    @Test
    void theRulesKeepTheirStableCodesAndWireNames() {
        StringBuilder sb = new StringBuilder();
        for (AtomicOperation.Kind k : AtomicOperation.Kind.values()) {
            sb.append(k.code()).append('=').append(k.wireName()).append(' ');
            assertEquals(k, AtomicOperation.Kind.fromCode(k.code()));
        }
        assertEquals("1=failure 2=success 3=trial_success 4=trial_failure 5=force_open 6=force_half_open "
                + "7=force_closed 8=slow_success 9=slow_failure 10=slow_call 11=slow_call_failed 12=force_mode "
                + "13=outcomes ", sb.toString());
    }
}

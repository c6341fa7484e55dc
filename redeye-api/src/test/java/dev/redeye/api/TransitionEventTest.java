package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redeye.spi.Transitions;
import org.junit.jupiter.api.Test;

/** {@link TransitionEvent#ofPut}: what a feed-only store publishes for a put. */
class TransitionEventTest {
    private static final Policy P = Policy.builder().failureThreshold(1).jitter(0).build();

    @Test
    void aPutThatRaisesTheVersionIsATransitionWithItsKindInferred() {
        BreakerState closed = BreakerState.initial(7).toBuilder().failures(2).build();
        BreakerState opened = Transitions.recordFailure(closed, P, 10).state();
        TransitionEvent e = TransitionEvent.ofPut("op", closed, opened);
        assertEquals(TransitionKind.OPENED, e.kind());
        assertEquals(BreakerStatus.CLOSED, e.from());
        assertEquals(opened, e.state());
        assertEquals(TransitionKind.OPENED, TransitionEvent.ofPut("op", null, opened.withVersion(1)).kind(),
                "an absent key counts as version 0");

        BreakerState reopened = Transitions.trialFailed(opened, opened.version(), P, 20).state();
        assertEquals(TransitionKind.REOPENED, TransitionEvent.ofPut("op", opened, reopened).kind());
        BreakerState closedAgain = Transitions.trialSucceeded(reopened, reopened.version(), P, 30).state();
        assertEquals(TransitionKind.CLOSED, TransitionEvent.ofPut("op", reopened, closedAgain).kind());

        BreakerState forced = Transitions.force(closedAgain, BreakerStatus.FORCED_OPEN, P, 40).state();
        TransitionEvent f = TransitionEvent.ofPut("op", closedAgain, forced);
        assertEquals(TransitionKind.FORCED_OPEN, f.kind());
        assertEquals(BreakerStatus.CLOSED, f.from());
        BreakerState half = Transitions.force(forced, BreakerStatus.HALF_OPEN, P, 50).state();
        TransitionEvent h = TransitionEvent.ofPut("op", forced, half);
        assertEquals(TransitionKind.FORCED_HALF_OPEN, h.kind());
        assertEquals(BreakerStatus.FORCED_OPEN, h.from());
        assertEquals(TransitionKind.FORCED_CLOSED, TransitionEvent.ofPut("op", forced,
                Transitions.closedFrom(forced)).kind());
        assertEquals(TransitionKind.FORCED_CLOSED, TransitionEvent.ofPut("op", closedAgain,
                Transitions.closedFrom(closedAgain)).kind(), "closing a closed breaker can only be forced");
    }

    @Test
    void aPutThatKeepsOrLowersTheVersionIsNot() {
        BreakerState s = BreakerState.initial(5);
        assertNull(TransitionEvent.ofPut("op", s, s.toBuilder().failures(3).build()), "a counter write");
        assertNull(TransitionEvent.ofPut("op", s, s.toBuilder().open(true).version(4).build()), "a lower version");
        assertNull(TransitionEvent.ofPut("op", null, BreakerState.INITIAL.toBuilder().failures(1).build()),
                "a first counter write on an absent key");
        assertThrows(NullPointerException.class, () -> TransitionEvent.ofPut("op", s, null));
    }
}

package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import org.junit.jupiter.api.Test;

/** {@link StateViews} alone: which state wins, and the hold after a lost claim. */
class StateViewsTest {
    private static final long NOW = 1_000_000L;
    private final Policy policy = Policy.builder().failureThreshold(1).jitter(0).build();
    private final StateViews views = new StateViews(true, policy, 1L, 2_000, 1_000,
            new Observers(new Monotonic(Ticker.systemTicker())));

    private static BreakerState open(long version) {
        return BreakerState.builder().open(true).openedAt(NOW).failures(1).version(version).build();
    }

    /** The stamp taken before a store call lets a newer feed event that arrived during it win over its result. */
    @Test
    void aFeedEventDuringAStampedCallIsKeptOverItsOlderResult() {
        views.activateCache();
        OperationState e = new OperationState("op");
        BreakerState read = views.readNoted(e, NOW, (x, now) -> {
            views.noteFeed(x, open(7), NOW); // another instance opened it while this read was under way
            return BreakerState.INITIAL.withVersion(6);
        });
        assertEquals(6, read.version());
        assertEquals(7, e.openView.get().state().version());
        assertNull(views.cachedClosed(e, NOW));
        // without a feed event meanwhile, the read is authoritative
        views.readNoted(e, NOW, (x, now) -> BreakerState.INITIAL.withVersion(6));
        assertNull(e.openView.get());
        assertEquals(6, views.cachedClosed(e, NOW).version());
    }

    @Test
    void readsAreAuthoritativeAndFeedEventsMustBeStrictlyNewer() {
        views.activateCache();
        OperationState e = new OperationState("op");
        views.readNoted(e, NOW, (x, now) -> BreakerState.INITIAL.withVersion(10));
        assertNotNull(views.cachedClosed(e, NOW));
        views.noteFeed(e, open(10), NOW);
        assertNull(e.openView.get(), "same version: ignored");
        views.noteFeed(e, open(11), NOW);
        assertEquals(11, e.openView.get().state().version());
        views.readNoted(e, NOW, (x, now) -> BreakerState.INITIAL.withVersion(3));
        assertNull(e.openView.get(), "a read replaces whatever its version");
        assertEquals(3, views.cachedClosed(e, NOW).version());
        views.distrustAll();
        assertNull(views.cachedClosed(e, NOW), "a gap distrusts the entry");
    }

    @Test
    void aHoldSurvivesReadsOfTheSamePeriodAndEndsWithAnotherVersion() {
        OperationState e = new OperationState("op");
        BreakerState s = open(4);
        views.noteRead(e, s, NOW, 0);
        views.holdAfterLostClaim(e, s, NOW + 5_000);
        assertEquals(NOW + 5_000, e.openView.get().heldUntil());
        OperationState.OpenView held = e.openView.get();
        views.noteRead(e, s, NOW + 1, 0);
        assertEquals(NOW + 5_000, e.openView.get().heldUntil(), "the same period: still held");
        views.holdAfterLostClaim(e, open(3), NOW + 9_000);
        assertEquals(NOW + 5_000, e.openView.get().heldUntil(), "a hold for an older period is ignored");
        views.noteOwnWrite(e, open(5), NOW + 2, 0);
        assertEquals(Long.MIN_VALUE, e.openView.get().heldUntil(), "the outcome is known: the hold ends");
        assertSame(held.state(), s);
    }
}

package dev.redeye.spi.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.TransitionFeed;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FeedSubscribersTest {
    private final TransitionEvent event = new TransitionEvent("op", TransitionKind.OPENED, BreakerStatus.CLOSED,
            BreakerState.builder().open(true).version(1).build());

    @Test
    void fansOutIsolatesThrowingCallbacksAndUnsubscribesOneOnly() {
        List<String> errors = new ArrayList<>();
        FeedSubscribers subs = new FeedSubscribers((what, t) -> errors.add(what));
        List<String> seen = new ArrayList<>();
        TransitionFeed.Subscription a = subs.add(e -> seen.add("a"), () -> seen.add("gap-a"));
        subs.add(e -> {
            throw new IllegalStateException("boom");
        }, () -> {
            throw new IllegalStateException("boom");
        });
        subs.add(e -> seen.add("c"), () -> seen.add("gap-c"));
        subs.publish(event);
        subs.signalGap();
        assertEquals(List.of("a", "c", "gap-a", "gap-c"), seen);
        assertEquals(2, errors.size());
        assertTrue(errors.get(0).contains("'op'"), errors.get(0));
        a.close();
        a.close();
        seen.clear();
        subs.publish(event);
        assertEquals(List.of("c"), seen);
        assertEquals(2, subs.size());
        subs.clear();
        assertTrue(subs.isEmpty());
        assertThrows(NullPointerException.class, () -> subs.add(null, () -> { }));
    }

    private static TransitionEvent event(String op, long version) {
        return new TransitionEvent(op, TransitionKind.OPENED, BreakerStatus.CLOSED,
                BreakerState.builder().open(true).version(version).build());
    }

    @Test
    void inVersionOrderDropsDuplicatesAndLateEventsPerOperation() {
        FeedSubscribers subs = FeedSubscribers.inVersionOrder((what, t) -> { });
        List<String> seen = new ArrayList<>();
        subs.add(e -> seen.add(e.operation() + e.version()), () -> { });
        assertTrue(subs.publish(event("a", 5)));
        assertFalse(subs.publish(event("a", 4)), "a late, older event of 'a' is obsolete");
        assertFalse(subs.publish(event("a", 5)), "a duplicate");
        assertTrue(subs.publish(event("b", 1)), "another operation has its own order");
        assertTrue(subs.publish(event("a", 6)));
        assertEquals(List.of("a5", "b1", "a6"), seen);
        // Arrival order is kept by the plain fan-out.
        FeedSubscribers plain = new FeedSubscribers((what, t) -> { });
        List<Long> all = new ArrayList<>();
        plain.add(e -> all.add(e.version()), () -> { });
        plain.publish(event("a", 5));
        plain.publish(event("a", 4));
        assertEquals(List.of(5L, 4L), all);
    }

    @Test
    void inVersionOrderRemembersABoundedNumberOfOperations() {
        FeedSubscribers subs = FeedSubscribers.inVersionOrder((what, t) -> { }, 2);
        List<String> seen = new ArrayList<>();
        subs.add(e -> seen.add(e.operation() + e.version()), () -> { });
        subs.publish(event("a", 5));
        subs.publish(event("b", 5));
        subs.publish(event("c", 5)); // forgets 'a', the least recently published
        assertTrue(subs.publish(event("a", 1)), "a forgotten operation accepts its next event");
        assertFalse(subs.publish(event("c", 4)), "'c' is still remembered");
        assertThrows(IllegalArgumentException.class, () -> FeedSubscribers.inVersionOrder((w, t) -> { }, 0));
    }

    @Test
    void inVersionOrderForgetsEveryDeliveredVersionOnAGap() {
        FeedSubscribers subs = FeedSubscribers.inVersionOrder((what, t) -> { });
        List<String> seen = new ArrayList<>();
        subs.add(e -> seen.add(e.operation() + e.version()), () -> seen.add("gap"));
        subs.publish(event("a", 5));
        subs.publish(event("b", 7));
        subs.signalGap(); // e.g. a fail-over lost the write of version 5: the backend re-issues it
        assertTrue(subs.publish(event("a", 5)), "after a gap, a version delivered before it is delivered again");
        assertTrue(subs.publish(event("b", 6)), "after a gap, a lower version is the backend's current one");
        assertFalse(subs.publish(event("a", 5)), "after the gap, order is kept again");
        assertEquals(List.of("a5", "b7", "gap", "a5", "b6"), seen);
    }
}

package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}

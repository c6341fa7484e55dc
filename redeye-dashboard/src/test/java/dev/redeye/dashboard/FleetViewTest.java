package dev.redeye.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StoreOperation;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The view's own rules: a feed gap makes it read the store at once (not at the next interval), a status that
 * changes with time alone (OPEN to HALF_OPEN) is sent at the next refresh although the stored state did not
 * change, a trial's outcome is the tile's last trial, and a whole read is the store's truth even when it holds an
 * older version than the feed brought before it (a restored backup).
 */
class FleetViewTest {
    private static final Policy POLICY = Policy.builder().failureThreshold(1).resetTimeout(Duration.ofSeconds(60))
            .jitter(0.0).build();

    /** A clock the test moves. */
    static final class MovingClock extends Clock {
        final AtomicLong millis = new AtomicLong(1_800_000_000_000L);

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }
    }

    @Test
    void aFeedGapRefreshesAtOnce() throws Exception {
        try (InMemoryStore backend = new InMemoryStore()) {
            CountingStore counting = new CountingStore(backend.newClient());
            try (FleetView view = new FleetView(counting, POLICY, List.of(), Duration.ofHours(1), Clock.systemUTC())) {
                view.start();
                long pages = counting.countOf(StoreOperation.LIST_PAGE);
                backend.simulateFeedGap();
                DashboardBrowserTest.waitFor("a refresh after the gap",
                        () -> counting.countOf(StoreOperation.LIST_PAGE) > pages, 5_000);
            }
        }
    }

    @Test
    void aStatusThatChangesWithTimeAloneIsSentAtTheNextRefresh() {
        MovingClock clock = new MovingClock();
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), POLICY, List.of(), Duration.ofHours(1), clock)) {
            backend.apply("pay", AtomicOperation.failure(), POLICY, clock.millis());
            view.start();
            List<String> events = new CopyOnWriteArrayList<>();
            view.join((event, json) -> events.add(event + " " + json));
            assertTrue(events.get(0).startsWith("snapshot") && events.get(0).contains("\"status\":\"OPEN\""),
                    events.toString());
            view.refreshNow();
            assertEquals(1, events.size(), "nothing changed: nothing sent " + events);
            clock.millis.addAndGet(61_000);
            view.refreshNow();
            assertEquals(2, events.size(), events.toString());
            assertTrue(events.get(1).startsWith("tiles") && events.get(1).contains("\"status\":\"HALF_OPEN\""),
                    events.toString());
        }
    }

    @Test
    void aTrialsOutcomeIsTheTilesLastTrialAndAWholeReadIsTheStoresTruth() throws Exception {
        MovingClock clock = new MovingClock();
        try (InMemoryStore backend = new InMemoryStore();
                FleetView view = new FleetView(backend.newClient(), POLICY, List.of(), Duration.ofHours(1), clock)) {
            view.start();
            BreakerState opened = backend.apply("pay", AtomicOperation.failure(), POLICY, clock.millis()).state();
            DashboardBrowserTest.waitFor("the opening", () -> view.tiles().size() == 1, 5_000);
            backend.apply("pay", AtomicOperation.trialFailed(opened.version()), POLICY, clock.millis() + 70_000);
            DashboardBrowserTest.waitFor("the failed trial", () -> "failure".equals(view.tiles().get(0).lastTrial()),
                    5_000);
            assertEquals(BreakerStatus.OPEN.name(), view.tiles().get(0).status());
            assertEquals("reopened", view.tiles().get(0).lastKind());
            backend.put("pay", opened, Duration.ofHours(1)); // an older version written back: a restored backup
            view.refreshNow();
            assertEquals(opened.version(), view.tiles().get(0).version(), "a whole read is the store's truth");
            assertEquals("failure", view.tiles().get(0).lastTrial(), "what the feed told is kept");
            assertEquals(2, view.timeline().size(), view.timeline().toString());
        }
    }
}

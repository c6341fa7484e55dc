package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.tck.TckReport.RuleResult;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.broken.BrokenStoresTest;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A store that declares a feed and nothing atomic runs every feed rule (declared capabilities are never
 * skipped): the rules make their transitions with puts, and the store publishes each put that raises a
 * version, as the SPI requires. The engine rules run over its get-then-put fallback, and R7.5 shows the
 * engine's local cache invalidated by a put's event. Without that publication the feed rules fail.
 */
class FeedOnlyStoreTest {
    private static final Set<Rule> SKIPPED_FOR_WANT_OF_ATOMICS = EnumSet.of(Rule.R1_10, Rule.R1_11, Rule.R1_12);

    /** The TCK over one feed-only backend, every hook but the corruption one. */
    static class FeedOnlyTck extends StoreTck {
        static final FeedOnlyStore.Backend BACKEND = new FeedOnlyStore.Backend(true);

        @Override
        protected Store newClient() {
            return BACKEND.client();
        }

        @Override
        protected void interruptFeed(Store client) {
            BACKEND.gap();
        }

        /** A put is this store's raw write: a lower version is stored as given and publishes nothing. */
        @Override
        protected void rewind(Store client, String key, BreakerState state) {
            client.put(key, state, Duration.ofHours(1));
        }

        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(TransitionFeed.class);
        }
    }

    @AfterAll
    static void close() {
        FeedOnlyTck.BACKEND.close();
    }

    @Test
    void everyFeedRuleRunsAndPassesOnAStoreWhoseOnlyCapabilityIsTheFeed() {
        TckReport report = TckRunner.launch(FeedOnlyTck.class, Map.of(), EnumSet.allOf(Rule.class), "feed-only");
        assertEquals(0, report.failed(), report.format());
        for (Rule r : Rule.values()) {
            if (r.id().startsWith("R6.") || r == Rule.R7_5) {
                assertEquals(Status.PASSED, report.result(r).orElseThrow().status(), r.id() + " must run and pass\n"
                        + report.format());
            }
        }
        Set<Rule> skipped = report.results().stream().filter(r -> r.status() == Status.SKIPPED)
                .map(RuleResult::rule).collect(Collectors.toSet());
        for (Rule r : skipped) {
            String why = report.result(r).orElseThrow().message();
            boolean capability = why.startsWith("store does not declare ");
            assertTrue(capability || r == Rule.R1_7 || SKIPPED_FOR_WANT_OF_ATOMICS.contains(r),
                    r.id() + " skipped for another reason: " + why);
        }
        assertEquals(Set.of("R2", "R3", "R4", "R5", "R10", "R11", "R13", "R14", "R15"), report.skippedGroups().keySet(),
                report.format());
    }

    @Test
    void aFeedThatIsNotToldOfPutsFailsTheFeedRules() {
        try (FeedOnlyStore.Backend silent = new FeedOnlyStore.Backend(false)) {
            TckReport report = TckRunner.run(silent::client, EnumSet.of(Rule.R1_1, Rule.R1_3, Rule.R6_1,
                    Rule.R6_10, Rule.R7_5), Map.of(TckRunner.PATIENCE_PARAMETER, "1000"));
            BrokenStoresTest.assertFails(report, Rule.R6_1);
            BrokenStoresTest.assertFails(report, Rule.R6_10);
            BrokenStoresTest.assertFails(report, Rule.R7_5);
            BrokenStoresTest.assertPasses(report, Rule.R1_1);
            BrokenStoresTest.assertPasses(report, Rule.R1_3);
        }
    }
}

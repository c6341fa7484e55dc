package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.InMemoryStore;
import dev.redeye.tck.TckReport.RuleResult;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.broken.ForwardingStore;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link TckRunner} and {@link TckReport}: the entry point of {@code redeye tck}. */
class TckRunnerTest {

    @Test
    void inMemoryStorePassesEveryRuleThroughTheLauncher() {
        try (InMemoryStore backing = new InMemoryStore()) {
            TckReport report = TckRunner.run(backing::newClient);
            assertEquals(Rule.values().length, report.results().size(), "one result per rule");
            assertEquals(0, report.failed(), report.format());
            // Hooks cannot be passed through a supplier: those three rules are skipped, with the reason.
            assertEquals(Set.of(Rule.R1_7, Rule.R6_8, Rule.R6_12), Set.copyOf(report.results().stream()
                    .filter(r -> r.status() == Status.SKIPPED).map(RuleResult::rule).toList()), report.format());
            assertTrue(report.result("R1.7").message().contains("corrupt"), report.format());
            assertTrue(report.result("R6.8").message().contains("interruptFeed"), report.format());
            assertTrue(report.result("R6.12").message().contains("interruptFeed"), report.format());
            assertTrue(report.successful());
            String text = report.format();
            assertTrue(text.contains("PASSED   R2.7  8 threads over 2 clients"), text);
            assertTrue(text.contains(Rule.values().length - 3 + " passed, 0 failed, 3 skipped"), text);
        }
    }

    @Test
    void unknownSchemeFailsEveryRuleWithTheReason() {
        TckReport report = TckRunner.run("nosuch://user:hunter2@host:1/db", EnumSet.of(Rule.R1_1, Rule.R1_2));
        assertEquals(2, report.failed(), report.format());
        RuleResult r = report.result("R1.1");
        assertTrue(r.message().startsWith("R1.1 violated: unexpected java.lang.IllegalArgumentException"), r.message());
        assertFalse(report.format().contains("hunter2"), "the password must not be printed: " + report.format());
        assertTrue(report.target().contains("nosuch://user:***@host"), report.target());
    }

    @Test
    void uriStoreTckWithoutUriSkipsEveryRule() {
        TckReport report = TckRunner.launch(UriStoreTck.class, Map.of(), EnumSet.of(Rule.R1_1, Rule.R4_4), "none");
        for (RuleResult r : report.results()) {
            assertEquals(Status.SKIPPED, r.status(), report.format());
            assertTrue(r.message().contains(TckRunner.URI_PARAMETER), r.message());
        }
    }

    @Test
    void uriStoreTckOpensClientsWithStoresOpen() {
        // memory: gives each client its own store; the single-client rules still hold.
        TckReport report = TckRunner.run("memory:", EnumSet.of(Rule.R1_1, Rule.R1_8, Rule.R4_1));
        assertEquals(Status.PASSED, report.result("R1.1").status(), report.format());
        assertEquals(Status.PASSED, report.result("R1.8").status(), report.format());
    }

    @Test
    void expectedCapabilitiesAreCheckedByR0_1() {
        try (InMemoryStore backing = new InMemoryStore()) {
            TckReport all = TckRunner.run(backing::newClient, EnumSet.of(Rule.R0_1),
                    Map.of(TckRunner.EXPECT_PARAMETER, "all"));
            assertEquals(Status.PASSED, all.result("R0.1").status(), all.format());
        }
        TckReport plain = TckRunner.run("memory:", EnumSet.of(Rule.R0_1), Map.of(TckRunner.EXPECT_PARAMETER,
                "AtomicUpdates, transitionfeed"));
        assertEquals(Status.PASSED, plain.result("R0.1").status(), plain.format());
        try (InMemoryStore backing = new InMemoryStore()) {
            TckReport missing = TckRunner.run(() -> new ForwardingStore(backing.newClient()) {
                @Override
                public <C> Optional<C> capability(Class<C> type) {
                    return Optional.empty();
                }
            }, EnumSet.of(Rule.R0_1), Map.of(TckRunner.EXPECT_PARAMETER, "TrialClaims"));
            assertEquals(Status.FAILED, missing.result("R0.1").status(), missing.format());
            assertTrue(missing.result("R0.1").message().contains("does not declare TrialClaims although "
                    + TckRunner.EXPECT_PARAMETER + " (redeye tck --expect) lists it"), missing.format());
        }
        assertThrows(IllegalArgumentException.class, () -> TckRunner.run("memory:", EnumSet.of(Rule.R0_1),
                Map.of(TckRunner.EXPECT_PARAMETER, "Telepathy")));
        assertThrows(IllegalArgumentException.class, () -> TckRunner.run("memory:", EnumSet.of(Rule.R0_1),
                Map.of(TckRunner.EXPECT_PARAMETER, "none, TrialClaims")));
        assertEquals(Set.of(), TckRunner.expected(" None "));
    }

    @Test
    void badArgumentsAreRejected() {
        assertThrows(NullPointerException.class, () -> TckRunner.run((String) null));
        assertThrows(IllegalArgumentException.class, () -> TckRunner.run("no-scheme"));
        assertThrows(IllegalArgumentException.class, () -> TckRunner.run("memory:", EnumSet.noneOf(Rule.class)));
        assertThrows(IllegalArgumentException.class, () -> Rule.byId("R9.9"));
        assertEquals(Rule.R2_7, Rule.byId("r2.7"));
    }
}

package dev.redeye.tck.broken;

import static dev.redeye.tck.Rule.R0_1;
import static dev.redeye.tck.Rule.R1_1;
import static dev.redeye.tck.Rule.R1_2;
import static dev.redeye.tck.Rule.R1_8;
import static dev.redeye.tck.Rule.R2_1;
import static dev.redeye.tck.Rule.R2_2;
import static dev.redeye.tck.Rule.R2_3;
import static dev.redeye.tck.Rule.R2_5;
import static dev.redeye.tck.Rule.R2_7;
import static dev.redeye.tck.Rule.R2_8;
import static dev.redeye.tck.Rule.R2_9;
import static dev.redeye.tck.Rule.R3_1;
import static dev.redeye.tck.Rule.R3_3;
import static dev.redeye.tck.Rule.R4_1;
import static dev.redeye.tck.Rule.R4_2;
import static dev.redeye.tck.Rule.R4_3;
import static dev.redeye.tck.Rule.R4_4;
import static dev.redeye.tck.Rule.R4_5;
import static dev.redeye.tck.Rule.R4_6;
import static dev.redeye.tck.Rule.R4_7;
import static dev.redeye.tck.Rule.R4_8;
import static dev.redeye.tck.Rule.R5_1;
import static dev.redeye.tck.Rule.R5_3;
import static dev.redeye.tck.Rule.R5_6;
import static dev.redeye.tck.Rule.R7_2;
import static dev.redeye.tck.Rule.R7_5;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.InMemoryStore;
import dev.redeye.spi.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckReport.RuleResult;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.TckRunner;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The TCK tests itself: each deliberately broken store runs through the TCK (via {@link TckRunner}, that is
 * the JUnit Platform Launcher) and the rules that name its defect must FAIL with a message naming the rule and
 * what to check, while control rules the store does satisfy still pass, so each failure is attributable to
 * the defect. The broken stores forward everything else to a correct {@code InMemoryStore}.
 */
public class BrokenStoresTest {
    private InMemoryStore backing;

    @BeforeEach
    void open() {
        backing = new InMemoryStore();
    }

    @AfterEach
    void close() {
        backing.close();
    }

    private TckReport run(Function<Store, Store> broken, Set<Rule> rules) {
        return TckRunner.run(() -> broken.apply(backing.newClient()), rules);
    }

    private TckReport runPlain(Set<Rule> rules) {
        return TckRunner.run(() -> new PlainOnlyStore(backing.newClient()), rules,
                Map.of(TckRunner.EXPECT_PARAMETER, "none"));
    }

    private static Set<Rule> rules(List<Rule> fail, List<Rule> pass) {
        EnumSet<Rule> all = EnumSet.copyOf(fail);
        all.addAll(pass);
        return all;
    }

    public static void assertFails(TckReport report, Rule rule, String... fragments) {
        RuleResult r = report.result(rule).orElseThrow();
        assertEquals(Status.FAILED, r.status(), () -> rule.id() + " must fail for this broken store, but it "
                + r.status() + "\n" + report.format());
        assertTrue(r.message().startsWith(rule.id() + " violated: "), () -> "message must name the rule: "
                + r.message());
        assertTrue(r.message().contains("If this fails, check: " + rule.hint()), () -> "message must say what to "
                + "check: " + r.message());
        for (String f : fragments) {
            assertTrue(r.message().contains(f), () -> rule.id() + " message must mention '" + f + "': " + r.message());
        }
    }

    public static void assertPasses(TckReport report, Rule rule) {
        RuleResult r = report.result(rule).orElseThrow();
        assertEquals(Status.PASSED, r.status(), () -> "control rule " + rule.id() + " must pass for this store, "
                + "else the failures are not attributable to its one defect\n" + report.format());
    }

    @Test
    void nonAtomicReadModifyWriteFailsTheConcurrencyRules() {
        List<Rule> fail = List.of(R2_7, R2_8, R3_3, R5_6, Rule.R9_5, Rule.R10_5);
        List<Rule> pass = List.of(R2_1, R2_2, R2_9, R3_1, R5_1, R5_3, Rule.R9_1, Rule.R9_6, Rule.R10_1, Rule.R11_3);
        TckReport report = run(NonAtomicStore::new, rules(fail, pass));
        assertFails(report, R2_7, "4000");
        assertFails(report, R2_8);
        assertFails(report, R3_3, "samples");
        assertFails(report, R5_6);
        assertFails(report, Rule.R9_5, "lost updates");
        assertFails(report, Rule.R10_5, "lost updates");
        pass.forEach(r -> assertPasses(report, r));
    }

    @Test
    void unconditionalReleaseFailsTheTokenRules() {
        FlawedClaims claims = new FlawedClaims(FlawedClaims.Defect.UNCONDITIONAL_RELEASE);
        List<Rule> fail = List.of(R4_5, R4_6, R4_8);
        List<Rule> pass = List.of(R4_1, R4_2, R4_3, R4_4, R4_7);
        TckReport report = run(claims::client, rules(fail, pass));
        assertFails(report, R4_5, "exactly one permit");
        assertFails(report, R4_6, "freed");
        assertFails(report, R4_8, "late release");
        pass.forEach(r -> assertPasses(report, r));
    }

    /**
     * A store whose forced half-open keeps the old period's live claims (what every store did, and every rule
     * allowed, before R5.11) passes every other rule of the TCK but the model rules, whose reference model now
     * makes the same promise (ReferenceModel.removesClaims), and fails R5.11 with a message that names it.
     */
    @Test
    void forceHalfOpenKeepingClaimsFailsR5_11() {
        FlawedClaims claims = new FlawedClaims(FlawedClaims.Defect.FORCE_HALF_OPEN_KEEPS_CLAIMS);
        TckReport report = run(claims::client, EnumSet.allOf(Rule.class));
        assertFails(report, Rule.R5_11, "forcing HALF_OPEN must remove every live claim of the key");
        EnumSet<Rule> mayAgree = EnumSet.of(Rule.R5_11, Rule.R8_1, Rule.R8_3, Rule.R8_4, Rule.R8_5); // as drawn
        for (RuleResult r : report.results()) {
            assertTrue(r.status() != Status.FAILED || mayAgree.contains(r.rule()), () -> r.rule().id()
                    + " must pass for this store: its one defect is R5.11's\n" + report.format());
        }
    }

    @Test
    void lastWriterWinsClaimFailsThePermitRules() {
        FlawedClaims claims = new FlawedClaims(FlawedClaims.Defect.LAST_WRITER_WINS);
        List<Rule> fail = List.of(R4_1, R4_3, R4_4);
        List<Rule> pass = List.of(R4_2, R4_7);
        TckReport report = run(claims::client, rules(fail, pass));
        assertFails(report, R4_1, "second claim");
        assertFails(report, R4_3, "claim 4 of 3 permits");
        assertFails(report, R4_4, "winners");
        pass.forEach(r -> assertPasses(report, r));
    }

    @Test
    void ownClockFailsTheVirtualTimeRules() {
        List<Rule> fail = List.of(R2_1, R2_2, R2_5, R5_3);
        List<Rule> pass = List.of(R2_3, R2_7, R4_1, R1_2);
        TckReport report = run(OwnClockStore::new, rules(fail, pass));
        assertFails(report, R2_1, "lastFailureAt");
        assertFails(report, R2_2, "openedAt");
        assertFails(report, R2_5, "lastFailureAt = now");
        assertFails(report, R5_3, "openedAt");
        pass.forEach(r -> assertPasses(report, r));
    }

    @Test
    void undeclaredCapabilitiesAreSkippedNotPassed() {
        EnumSet<Rule> rules = EnumSet.range(R0_1, Rule.R6_8);
        rules.add(R7_2);
        rules.add(R7_5);
        TckReport report = runPlain(rules);
        for (Rule r : EnumSet.range(R2_1, Rule.R6_8)) {
            RuleResult res = report.result(r).orElseThrow();
            assertEquals(Status.SKIPPED, res.status(), () -> r.id() + " over a store without capabilities\n"
                    + report.format());
            assertTrue(res.message().startsWith("store does not declare "), () -> r.id() + " reason: "
                    + res.message());
        }
        assertEquals("store does not declare TrialClaims", report.result(R7_2).orElseThrow().message());
        assertEquals("store does not declare TransitionFeed", report.result(R7_5).orElseThrow().message());
        for (Rule r : EnumSet.of(Rule.R1_10, Rule.R1_11, Rule.R1_12)) {
            RuleResult res = report.result(r).orElseThrow();
            assertEquals(Status.SKIPPED, res.status(), report.format());
            assertTrue(res.message().contains("not AtomicUpdates"), res.message());
        }
        Set<Rule> passed = report.results().stream().filter(r -> r.status() == Status.PASSED).map(RuleResult::rule)
                .collect(Collectors.toSet());
        assertEquals(EnumSet.of(R0_1, R1_1, R1_2, Rule.R1_3, Rule.R1_4, Rule.R1_5, Rule.R1_6, R1_8, Rule.R1_9), passed,
                "only R0.1 and the plain-store rules (R1.7 needs a hook) pass\n" + report.format());
        assertEquals(0, report.failed(), report.format());
        // Loudly: the groups that did not run at all, with the reason, and the rules skipped elsewhere.
        assertEquals(List.of("R2", "R3", "R4", "R5", "R6", "R7"), List.copyOf(report.skippedGroups().keySet()),
                report.format());
        assertEquals(Set.of("store does not declare AtomicUpdates"), report.skippedGroups().get("R3"));
        String text = report.format();
        assertTrue(text.contains("WARNING: " + report.skipped() + " rule(s) SKIPPED, not passed"), text);
        assertTrue(text.contains("6 of 8 rule groups did not run at all:"), text);
        assertTrue(text.contains("    R4: store does not declare TrialClaims"), text);
        assertTrue(text.contains("skipped in groups that ran: R1.7 ("), text);
    }

    @Test
    void aStoreDeclaringNothingFailsR0_1UnlessTheImplementerSaysItIsPlain() {
        TckReport unstated = run(PlainOnlyStore::new, EnumSet.of(R0_1, R1_1));
        assertFails(unstated, R0_1, "declares no optional capability", TckRunner.EXPECT_PARAMETER + "=none");
        assertPasses(unstated, R1_1);
        assertEquals(Status.PASSED, runPlain(EnumSet.of(R0_1)).result("R0.1").status());
        assertEquals(Status.PASSED, TckRunner.run(backing::newClient, EnumSet.of(R0_1)).result("R0.1").status(),
                "a store that declares capabilities needs no stated expectation");
    }

    @Test
    void skipReasonsNameTheMissingCapability() {
        TckReport report = runPlain(EnumSet.of(R2_1, R4_1, R5_1, Rule.R6_1));
        assertEquals("store does not declare AtomicUpdates", report.result("R2.1").message());
        assertEquals("store does not declare TrialClaims", report.result("R4.1").message());
        assertEquals("store does not declare AtomicUpdates", report.result("R5.1").message());
        assertEquals("store does not declare TransitionFeed", report.result("R6.1").message());
        assertTrue(report.format().contains("SKIPPED  R4.1"), report.format());
        assertEquals(Status.PASSED, TckRunner.run(() -> new PlainOnlyStore(backing.newClient()), EnumSet.of(R1_1))
                .result("R1.1").status());
    }
}

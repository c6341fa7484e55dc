package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code store-tck/RULES.md} is generated from the {@link Rule} enum, so the rule list in the repository never
 * drifts from the rules the TCK runs: this test fails when it does. To regenerate after changing the enum:
 * {@code mvn -B -o -pl store-tck -am test -Dtest=RulesDocumentTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dredeye.rules.write=true}.
 */
class RulesDocumentTest {
    static final String WRITE_PROPERTY = "redeye.rules.write";
    private static final Path FILE = Paths.get("RULES.md");

    /** The group titles and what each group needs to run. */
    private static final Map<String, String> GROUPS = new LinkedHashMap<>();

    static {
        GROUPS.put("R0", "The TCK's own rule (every store)");
        GROUPS.put("R1", "Plain store: get, put, delete, close (every store; R1.10 to R1.12 need "
                + "AtomicUpdates)");
        GROUPS.put("R2", "Recording outcomes, consecutive strategy (needs AtomicUpdates)");
        GROUPS.put("R3", "Recording outcomes, errorRate strategy (needs AtomicUpdates)");
        GROUPS.put("R4", "TrialClaims (needs TrialClaims)");
        GROUPS.put("R5", "Trial outcomes and operator changes (needs AtomicUpdates)");
        GROUPS.put("R6", "TransitionFeed (needs TransitionFeed)");
        GROUPS.put("R7", "The engine over the store (every store; R7.2 needs TrialClaims, R7.5 TransitionFeed; "
                + "R7.11 to R7.13 run sliding windows and modes)");
        GROUPS.put("R8", "The store against a reference model (every store, with the calls it declares; R8.2 "
                + "and R8.5 need TrialClaims)");
        GROUPS.put("R9", "Recording outcomes, leaky strategy (needs AtomicUpdates; R9.7 runs the engine over every "
                + "store)");
        GROUPS.put("R10", "Sliding windows (needs AtomicUpdates)");
        GROUPS.put("R11", "Slow calls (needs AtomicUpdates)");
        GROUPS.put("R12", "Modes (needs AtomicUpdates; R12.2 also TrialClaims, R12.3 TransitionFeed; R12.4 puts a "
                + "state in a mode on every store)");
        GROUPS.put("R13", "Quorum opening (needs AtomicUpdates and QuorumState)");
        GROUPS.put("R14", "Batches of outcomes (needs AtomicUpdates and OutcomeBatches)");
        GROUPS.put("R15", "Listing operations (needs OperationListing)");
    }

    static String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("# redeye store TCK: the numbered rules\n\n");
        sb.append("<!-- Generated from dev.redeye.tck.Rule by RulesDocumentTest: do not edit by hand. After changing "
                + "the enum run\n     mvn -B -o -pl store-tck -am test -Dtest=RulesDocumentTest "
                + "-Dsurefire.failIfNoSpecifiedTests=false -Dredeye.rules.write=true -->\n\n");
        sb.append("Every store, ours and our users', is held to these ").append(Rule.values().length)
                .append(" rules by `redeye-store-tck`. Ids are stable: the test method of a rule starts with its id "
                        + "(`r2_7_...` checks R2.7), every failure message starts with `R2.7 violated:` and ends with "
                        + "the rule and what to check, and a retired id is never reused. A rule group runs when the "
                        + "store declares the capability it needs and is reported skipped, with the reason, when it "
                        + "does not; a declared capability whose rule fails is a failure. \"Two clients\" are two "
                        + "independent store instances from the implementer's factory, standing for two processes; "
                        + "`now` is virtual unless a rule says \"real time\". See README.md for how to run the TCK, "
                        + "what a store must and may do, and how to replay a failure of the model rules (R8).\n");
        String group = null;
        for (Rule r : Rule.values()) {
            String g = r.id().substring(0, r.id().indexOf('.'));
            if (!g.equals(group)) {
                group = g;
                String title = GROUPS.get(g);
                if (title == null) {
                    throw new AssertionError("no title for rule group " + g + ": add it to RulesDocumentTest.GROUPS");
                }
                sb.append("\n## ").append(g).append(' ').append(title).append("\n\n");
            }
            sb.append("- **").append(r.id()).append("** ").append(r.statement()).append("\n  *If this fails, check:* ")
                    .append(r.hint()).append(r.hint().endsWith(".") ? "" : ".").append('\n');
        }
        return sb.toString();
    }

    @Test
    void rulesMdIsGeneratedFromTheRuleEnum() throws IOException {
        String expected = render();
        if (Boolean.getBoolean(WRITE_PROPERTY)) {
            Files.writeString(FILE, expected, StandardCharsets.UTF_8);
        }
        String actual = Files.exists(FILE) ? Files.readString(FILE, StandardCharsets.UTF_8) : "(missing)";
        assertEquals(expected, actual, FILE.toAbsolutePath() + " is out of date with the Rule enum; regenerate it: "
                + "mvn -B -o -pl store-tck -am test -Dtest=RulesDocumentTest -Dsurefire.failIfNoSpecifiedTests=false "
                + "-D" + WRITE_PROPERTY + "=true");
    }
}

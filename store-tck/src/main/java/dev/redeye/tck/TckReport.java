package dev.redeye.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The outcome of one TCK run ({@link TckRunner}): one {@link RuleResult} per rule that was selected, in rule
 * order, plus a plain-text {@link #format()}. Immutable and thread-safe.
 */
public final class TckReport {
    private static final List<String> CAPABILITIES = List.of("AtomicUpdates", "TrialClaims",
            "TransitionFeed");
    private static final String UNDECLARED = "store does not declare ";

    /** What happened to one rule. */
    public enum Status {
        /** The rule held. */
        PASSED,
        /** The rule was broken (or its test could not run); the message says how. */
        FAILED,
        /** The store does not declare the capability the rule needs, or an optional hook is missing. */
        SKIPPED
    }

    /**
     * The result of one rule.
     *
     * @param rule    the rule
     * @param status  passed, failed or skipped
     * @param message why it failed or was skipped; empty when it passed
     */
    public record RuleResult(Rule rule, Status status, String message) {
        /**
         * @throws NullPointerException if any component is null
         */
        public RuleResult {
            Objects.requireNonNull(rule, "rule");
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(message, "message");
        }

        /** The rule's stable id, for example {@code "R2.7"}. */
        public String id() {
            return rule.id();
        }

        /** The rule's one-line statement. */
        public String statement() {
            return rule.statement();
        }
    }

    private final String target;
    private final List<RuleResult> results;
    private final Duration elapsed;

    /**
     * @param target  what was tested, safe to print (a redacted URI, for example)
     * @param results one result per selected rule
     * @param elapsed how long the run took
     * @throws NullPointerException if any argument is null
     */
    public TckReport(String target, List<RuleResult> results, Duration elapsed) {
        this.target = Objects.requireNonNull(target, "target");
        List<RuleResult> sorted = new ArrayList<>(Objects.requireNonNull(results, "results"));
        sorted.sort((a, b) -> a.rule().compareTo(b.rule()));
        this.results = Collections.unmodifiableList(sorted);
        this.elapsed = Objects.requireNonNull(elapsed, "elapsed");
    }

    /** What was tested (passwords redacted). */
    public String target() {
        return target;
    }

    /** Every selected rule's result, in rule order. */
    public List<RuleResult> results() {
        return results;
    }

    /** The result of {@code rule}, if it was selected. */
    public Optional<RuleResult> result(Rule rule) {
        return results.stream().filter(r -> r.rule() == rule).findFirst();
    }

    /**
     * The result of the rule with this id ({@code "R2.7"}).
     *
     * @throws IllegalArgumentException if the id is unknown or the rule was not selected
     */
    public RuleResult result(String id) {
        Rule rule = Rule.byId(id);
        return result(rule).orElseThrow(() -> new IllegalArgumentException("rule " + id + " was not run"));
    }

    /** How long the run took. */
    public Duration elapsed() {
        return elapsed;
    }

    /** Number of rules that passed. */
    public long passed() {
        return count(Status.PASSED);
    }

    /** Number of rules that failed. */
    public long failed() {
        return count(Status.FAILED);
    }

    /** Number of rules that were skipped. */
    public long skipped() {
        return count(Status.SKIPPED);
    }

    /** Whether no rule failed (skipped rules do not count against a store). */
    public boolean successful() {
        return failed() == 0;
    }

    private long count(Status s) {
        return results.stream().filter(r -> r.status() == s).count();
    }

    /**
     * The rule groups ({@code "R2"}, ...) that did not run at all: every selected rule of the group was
     * skipped. Each maps to the distinct skip reasons (typically "store does not declare AtomicUpdates"),
     * in group order. A skipped group is not a pass: the store was not tested there.
     */
    public Map<String, Set<String>> skippedGroups() {
        Map<String, List<RuleResult>> byGroup = new LinkedHashMap<>();
        for (RuleResult r : results) {
            byGroup.computeIfAbsent(group(r.rule()), g -> new ArrayList<>()).add(r);
        }
        Map<String, Set<String>> out = new LinkedHashMap<>();
        byGroup.forEach((g, rs) -> {
            if (rs.stream().allMatch(r -> r.status() == Status.SKIPPED)) {
                Set<String> reasons = new LinkedHashSet<>();
                rs.forEach(r -> reasons.add(r.message().isEmpty() ? "no reason given" : r.message()));
                out.put(g, Collections.unmodifiableSet(reasons));
            }
        });
        return Collections.unmodifiableMap(out);
    }

    private static String group(Rule r) {
        String id = r.id();
        return id.substring(0, id.indexOf('.'));
    }

    /**
     * The report as text: a header, one line per rule ({@code PASSED  R1.1  statement}), the message of every
     * failed or skipped rule indented under it, when rules were skipped a warning naming the groups that did
     * not run at all (with the reason) and the other skipped rules, and a summary line last.
     */
    public String format() {
        StringBuilder sb = new StringBuilder();
        sb.append("redeye store TCK against ").append(target).append(" (").append(results.size())
                .append(" rules, ").append(String.format(Locale.ROOT, "%.1f", elapsed.toMillis() / 1000.0))
                .append(" s)\n");
        for (RuleResult r : results) {
            sb.append(String.format(Locale.ROOT, "%-8s %-5s %s%n", r.status(), r.id(), r.statement()));
            if (r.status() != Status.PASSED && !r.message().isEmpty()) {
                for (String line : r.message().split("\n")) {
                    sb.append("               ").append(line.strip()).append('\n');
                }
            }
        }
        if (skipped() > 0) {
            appendSkipWarning(sb);
        }
        if (undeclaredCapabilities().size() == CAPABILITIES.size()) {
            if (result(Rule.R0_1).map(r -> r.status() == Status.PASSED).orElse(false)) {
                // R0.1 passes a store declaring nothing only when its implementer said it is plain
                sb.append("The store declares no capability, as its implementer expects (R0.1 passed): only the "
                        + "plain-store rules apply.\n");
            } else {
                sb.append("WARNING: THE STORE DECLARES NO CAPABILITY (").append(String.join(", ", CAPABILITIES))
                        .append("): only the plain-store rules ran. If the store is meant to be plain, say so with an "
                                + "empty expectedCapabilities() (or redeye.tck.expect=none); else check its "
                                + "capability(Class).\n");
            }
        }
        sb.append(String.format(Locale.ROOT, "%d passed, %d failed, %d skipped%n", passed(), failed(), skipped()));
        return sb.toString();
    }

    /**
     * The capabilities the store does not declare, as the skip reasons of this run name them ("store does not
     * declare TrialClaims"), in the order AtomicUpdates, TrialClaims, TransitionFeed.
     */
    public Set<String> undeclaredCapabilities() {
        Set<String> out = new LinkedHashSet<>();
        for (String c : CAPABILITIES) {
            for (RuleResult r : results) {
                if (r.status() == Status.SKIPPED && r.message().equals(UNDECLARED + c)) {
                    out.add(c);
                }
            }
        }
        return Collections.unmodifiableSet(out);
    }

    /** A loud account of what did not run: a skipped rule is not a passed one. */
    private void appendSkipWarning(StringBuilder sb) {
        Map<String, Set<String>> groups = skippedGroups();
        long ran = results.stream().map(r -> group(r.rule())).distinct().count();
        sb.append(String.format(Locale.ROOT, "WARNING: %d rule(s) SKIPPED, not passed: the store was not tested "
                + "there.%n", skipped()));
        if (!groups.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "  %d of %d rule groups did not run at all:%n", groups.size(), ran));
            groups.forEach((g, reasons) -> sb.append("    ").append(g).append(": ")
                    .append(String.join("; ", reasons)).append('\n'));
        }
        List<String> single = new ArrayList<>();
        for (RuleResult r : results) {
            if (r.status() == Status.SKIPPED && !groups.containsKey(group(r.rule()))) {
                single.add(r.id() + " (" + r.message() + ")");
            }
        }
        if (!single.isEmpty()) {
            sb.append("  skipped in groups that ran: ").append(String.join(", ", single)).append('\n');
        }
        Set<String> undeclared = undeclaredCapabilities();
        if (!undeclared.isEmpty() && undeclared.size() < CAPABILITIES.size()) {
            sb.append("  the store does not declare: ").append(String.join(", ", undeclared))
                    .append(" (the rules that need them were skipped)\n");
        }
    }

    @Override
    public String toString() {
        return "TckReport[" + target + ": " + passed() + " passed, " + failed() + " failed, " + skipped()
                + " skipped]";
    }
}

package dev.redeye.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.opentest4j.TestAbortedException;

/**
 * Collects, from the JUnit Platform's events, the result of every TCK rule whose test ran: passed, failed
 * with the rule's message, or skipped with the reason. Used by {@link TckRunner} for its report and by
 * {@link TckReportListener} for the report printed after a build's test run. Thread-safe.
 */
class RuleResults implements TestExecutionListener {
    private static final String ASSUMPTION_PREFIX = "Assumption failed: ";
    private final Map<Rule, TckReport.RuleResult> results = new EnumMap<>(Rule.class);
    private volatile String containerFailure;

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
        rule(id).ifPresent(r -> results.put(r, new TckReport.RuleResult(r, TckReport.Status.SKIPPED,
                String.valueOf(reason))));
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        Optional<Rule> rule = rule(id);
        String message = result.getThrowable().map(RuleResults::describe).orElse("");
        if (rule.isEmpty()) {
            if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                containerFailure = id.getDisplayName() + ": " + message;
            }
            return;
        }
        TckReport.Status status;
        switch (result.getStatus()) {
            case SUCCESSFUL:
                status = TckReport.Status.PASSED;
                break;
            case ABORTED:
                status = TckReport.Status.SKIPPED;
                break;
            default:
                status = TckReport.Status.FAILED;
                break;
        }
        results.put(rule.get(), new TckReport.RuleResult(rule.get(), status, message));
    }

    /** Whether any rule's result was collected. */
    synchronized boolean any() {
        return !results.isEmpty();
    }

    /**
     * The report of the {@code selected} rules; a selected rule whose test did not run is a failure (with the
     * failure of its class, if one was seen).
     */
    synchronized TckReport report(String target, Collection<Rule> selected, Duration elapsed) {
        List<TckReport.RuleResult> out = new ArrayList<>();
        for (Rule r : selected) {
            TckReport.RuleResult res = results.get(r);
            if (res == null) {
                String why = containerFailure == null ? "the rule's test did not run"
                        : "the rule's test did not run: " + containerFailure;
                res = new TckReport.RuleResult(r, TckReport.Status.FAILED, why);
            }
            out.add(res);
        }
        return new TckReport(target, out, elapsed);
    }

    /** The report of the rules that ran. */
    synchronized TckReport report(String target, Duration elapsed) {
        return report(target, results.keySet(), elapsed);
    }

    /** The rule a test belongs to: a test whose method name starts with a rule id. */
    static Optional<Rule> rule(TestIdentifier id) {
        if (!id.isTest()) {
            return Optional.empty();
        }
        Optional<TestSource> source = id.getSource();
        if (source.isPresent() && source.get() instanceof MethodSource) {
            return Rule.ofMethodName(((MethodSource) source.get()).getMethodName());
        }
        return Optional.empty();
    }

    private static String describe(Throwable t) {
        if (t instanceof TestAbortedException || t instanceof AssertionError) {
            String m = t.getMessage();
            if (m == null) {
                return t.getClass().getSimpleName();
            }
            return m.startsWith(ASSUMPTION_PREFIX) ? m.substring(ASSUMPTION_PREFIX.length()) : m;
        }
        return t.toString();
    }
}

package dev.redeye.tck;

import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints the TCK's own rule report ({@link TckReport#format()}) at the end of every JUnit Platform run that
 * ran rules of a {@link StoreTck} subclass, one report per subclass: every rule passed, failed (with its
 * message) or skipped (with the reason, and the capability each skipped group needs), and a loud warning
 * when the store declares no capability without its implementer saying it is plain (a quiet line when R0.1
 * passed with an empty {@code expectedCapabilities()}). A build tool shows only counts ("Skipped: 39"); this
 * shows why.
 *
 * <p>Registered through {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener} of the
 * TCK jar, so {@code mvn test} (Surefire), Gradle and IDEs pick it up with nothing to configure. It prints
 * to standard output when the run ends; with Surefire's {@code redirectTestOutputToFile} that output goes to
 * the class's {@code -output.txt} report instead of the console. Set the JUnit configuration parameter
 * {@value #REPORT_PARAMETER} to {@code false} to silence it ({@link TckRunner} does, since it returns the
 * report to its caller). Costs nothing measurable: it keeps one result per rule.
 */
public final class TckReportListener implements TestExecutionListener {
    /** The JUnit configuration parameter that turns the printed report off ({@code false}); default on. */
    public static final String REPORT_PARAMETER = "redeye.tck.report";

    private final Map<Class<?>, Collected> byClass = new LinkedHashMap<>();
    private final PrintStream out;
    private final boolean always;
    private volatile boolean enabled = true;

    /** The listener the JUnit Platform loads; prints to {@code System.out}. */
    public TckReportListener() {
        this(System.out, false);
    }

    /** A listener printing to {@code out}; {@code always} ignores {@value #REPORT_PARAMETER} (for tests). */
    TckReportListener(PrintStream out, boolean always) {
        this.out = out;
        this.always = always;
    }

    private static final class Collected {
        final RuleResults results = new RuleResults();
        long firstStart = Long.MAX_VALUE;
        long lastEnd = Long.MIN_VALUE;
    }

    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        enabled = always || plan.getConfigurationParameters().getBoolean(REPORT_PARAMETER).orElse(true);
    }

    @Override
    public synchronized void executionStarted(TestIdentifier id) {
        tckClass(id).ifPresent(c -> {
            Collected col = byClass.computeIfAbsent(c, k -> new Collected());
            col.firstStart = Math.min(col.firstStart, System.nanoTime());
        });
    }

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
        tckClass(id).ifPresent(c -> byClass.computeIfAbsent(c, k -> new Collected()).results.executionSkipped(id,
                reason));
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        tckClass(id).ifPresent(c -> {
            Collected col = byClass.computeIfAbsent(c, k -> new Collected());
            col.results.executionFinished(id, result);
            col.lastEnd = Math.max(col.lastEnd, System.nanoTime());
        });
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        if (!enabled) {
            return;
        }
        for (Map.Entry<Class<?>, Collected> e : byClass.entrySet()) {
            Collected col = e.getValue();
            if (!col.results.any()) {
                continue;
            }
            Duration elapsed = col.lastEnd > col.firstStart ? Duration.ofNanos(col.lastEnd - col.firstStart)
                    : Duration.ZERO;
            out.print(System.lineSeparator() + col.results.report(e.getKey().getName(), elapsed).format());
        }
        out.flush();
        byClass.clear();
    }

    /** The {@link StoreTck} subclass a rule's test belongs to, if it is one. */
    private static Optional<Class<?>> tckClass(TestIdentifier id) {
        if (!id.isTest() || RuleResults.rule(id).isEmpty()) {
            return Optional.empty();
        }
        Optional<TestSource> source = id.getSource();
        if (source.isEmpty() || !(source.get() instanceof MethodSource)) {
            return Optional.empty();
        }
        try {
            Class<?> c = ((MethodSource) source.get()).getJavaClass();
            return StoreTck.class.isAssignableFrom(c) ? Optional.of(c) : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty(); // a class the listener cannot load is not one it reports on
        }
    }
}

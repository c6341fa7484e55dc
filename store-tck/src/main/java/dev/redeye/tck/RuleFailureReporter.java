package dev.redeye.tck;

import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * Prefixes every TCK failure with the id of the rule it broke and what to check, so a failing store's test
 * report reads "R2.7 violated: ... If this fails, check ...". Skips (assumptions) pass through unchanged.
 */
final class RuleFailureReporter implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        if (throwable instanceof TestAbortedException) {
            throw throwable;
        }
        Optional<Rule> rule = context.getTestMethod().flatMap(m -> Rule.ofMethodName(m.getName()));
        if (rule.isEmpty()) {
            throw throwable;
        }
        Rule r = rule.get();
        String what = throwable instanceof AssertionError
                ? String.valueOf(throwable.getMessage())
                : "unexpected " + throwable;
        throw new AssertionFailedError(r.id() + " violated: " + what + "\n  Rule: " + r.statement()
                + "\n  If this fails, check: " + r.hint(), throwable);
    }
}

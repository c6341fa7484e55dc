package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code redeye dashboard} as a user starts it: it prints where it listens, the operator token (none when
 * read-only) and the Hystrix stream, serves until {@code --timeout}, and refuses a store that cannot list its
 * operations when none is named, and bad options, as usage errors.
 */
class DashboardCommandTest {
    private static final Pattern TOKEN = Pattern.compile("operator token: ([0-9a-f]{32}) ");

    @Test
    void itPrintsTheAddressTheTokenAndTheHystrixStream() {
        Cli.Run run = Cli.run("dashboard", "--store", "memory:", "--port", "0", "--timeout", "1s");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().matches("(?s)redeye dashboard: http://127\\.0\\.0\\.1:\\d+/  \\(store memory:\\).*"),
                run::toString);
        Matcher m = TOKEN.matcher(run.out());
        assertTrue(m.find(), run::toString);
        assertTrue(run.out().contains("/hystrix.stream"), run::toString);
        Cli.Run again = Cli.run("dashboard", "--store", "memory:", "--port", "0", "--timeout", "1s");
        Matcher m2 = TOKEN.matcher(again.out());
        assertTrue(m2.find(), again::toString);
        assertFalse(m.group(1).equals(m2.group(1)), "a new random token per start");
    }

    @Test
    void readOnlyPrintsNoToken() {
        Cli.Run run = Cli.run("dashboard", "--store", "memory:", "--port", "0", "--timeout", "1s", "--read-only",
                "--token", "ignored");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("read-only: operator actions are refused"), run::toString);
        assertFalse(run.out().contains("operator token"), run::toString);
        assertFalse(run.out().contains("ignored"), run::toString);
    }

    @Test
    void aStoreThatCannotListNeedsNamesAndBadOptionsAreUsageErrors() {
        Cli.Run run = Cli.run("dashboard", "--store", "nofeed:", "--port", "0", "--timeout", "1s");
        assertEquals(RedeyeCommand.EXIT_USAGE, run.exit(), run::toString);
        assertTrue(run.err().contains("cannot list its operations"), run::toString);
        Cli.Run named = Cli.run("dashboard", "--store", "nofeed:", "--port", "0", "--timeout", "1s", "payments");
        assertEquals(0, named.exit(), named::toString);
        assertEquals(RedeyeCommand.EXIT_USAGE, Cli.run("dashboard", "--store", "memory:", "--port", "70000").exit());
        assertEquals(RedeyeCommand.EXIT_USAGE, Cli.run("dashboard", "--store", "memory:", "--refresh", "0s").exit());
        assertEquals(RedeyeCommand.EXIT_USAGE, Cli.run("dashboard", "--store", "memory:", "--port", "0",
                "--failure-threshold", "0").exit());
    }
}

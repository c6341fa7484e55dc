package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Bad input, unreachable stores, help and version: exit codes, one-line errors, no secrets printed. */
class ErrorsAndHelpTest {
    /** Nothing listens on port 1 of the loopback interface. */
    static final String DEAD_REDIS = "redis://admin:s3cretpw@127.0.0.1:1/0";
    /** The shortest pool wait the PostgreSQL store allows, so the test does not wait 3 s per command. */
    static final String DEAD_POSTGRES = "postgresql://admin:s3cretpw@127.0.0.1:1/db?poolTimeoutMillis=250";

    @Test
    void helpListsEveryCommand() {
        Cli.Run run = Cli.run("--help");
        assertEquals(0, run.exit(), run::toString);
        for (String c : new String[] {"simulate", "status", "force-open", "force-half-open", "reset", "watch", "dashboard",
            "tck"}) {
            assertTrue(run.out().contains("  " + c + " "), () -> c + " missing in\n" + run.out());
        }
        Cli.Run status = Cli.run("status", "--help");
        assertTrue(status.out().contains("Without OP, every operation"), status::toString);
    }

    @Test
    void helpShowsEveryStoresUriWhole() {
        for (String[] args : new String[][] {{"--help"}, {"status", "--help"}, {"tck", "--help"}}) {
            Cli.Run run = Cli.run(args);
            assertEquals(0, run.exit(), run::toString);
            assertFalse(run.out().matches("(?s).*[a-z]:\\s*\\R\\s*//.*"), () -> "a URI wrapped after its scheme:\n"
                    + run.out());
        }
        Cli.Run root = Cli.run("--help");
        for (String form : new String[] {"memory:", "redis://HOST:PORT[/DB][?prefix=P]", "rediss://",
            "postgresql://USER@HOST:PORT/DB[?schema=S&table=T]", "jdbc:postgresql://",
            "dynamodb://TABLE[?region=R&endpoint=URL&createTable=true]", "hazelcast://[CLUSTER@]HOST:PORT[,HOST:PORT][?map=M]"}) {
            assertTrue(root.out().contains(form), () -> form + " missing in\n" + root.out());
        }
        Cli.Run status = Cli.run("status", "--help");
        for (String example : new String[] {"redis://127.0.0.1:6379", "postgresql://127.0.0.1:5432/db",
            "hazelcast://dev@127.0.0.1:5701"}) {
            assertTrue(status.out().contains(example), () -> example + " wrapped or missing in\n" + status.out());
        }
    }

    @Test
    void versionIsTheProjectVersion() {
        Cli.Run run = Cli.run("--version");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().matches("(?s)redeye \\d+\\.\\d+\\.\\d+.*"), run::toString);
        assertFalse(run.out().contains("unknown"), run::toString);
    }

    @Test
    void unknownSchemeIsOneLineListingTheKnownSchemes() {
        Cli.Run run = Cli.run("status", "--store", "nosuch://user:s3cretpw@host/x", "op");
        SimulateCommandTest.assertUsage(run, "no store provider");
        assertTrue(run.err().contains("redis") && run.err().contains("postgresql") && run.err().contains("memory"),
                run::toString);
        assertFalse(run.err().contains("s3cretpw"), run::toString);
    }

    @Test
    void badArgumentsAreUsageErrors() {
        SimulateCommandTest.assertUsage(Cli.run("status", "--store", "nofeed:"), "cannot list its operations");
        SimulateCommandTest.assertUsage(Cli.run("status", "op"), "--store");
        SimulateCommandTest.assertUsage(Cli.run("force-open", "--store", "memory:"), "OP");
        SimulateCommandTest.assertUsage(Cli.run("status", "--store", "memory:", "--reset-timeout", "0s", "op"),
                "--reset-timeout must be at least 1 ms");
        SimulateCommandTest.assertUsage(Cli.run("watch", "--store", "memory:", "--count", "0"), "--count");
        SimulateCommandTest.assertUsage(Cli.run("no-such-command"), "no-such-command");
        SimulateCommandTest.assertUsage(Cli.run("tck", "--store", "memory:", "--rule", "R99.9"), "R99.9");
    }

    /**
     * A breaker option the engine refuses is a usage error naming the command-line option, found from the
     * option the engine's InvalidOptionException names: in the setter, and in the rule between two options.
     */
    @Test
    void aRefusedBreakerOptionNamesTheCommandLineOption() {
        SimulateCommandTest.assertUsage(Cli.run("status", "--store", "memory:", "--backoff-multiplier", "0.5", "op"),
                "--backoff-multiplier must be a finite number >= 1, was 0.5");
        SimulateCommandTest.assertUsage(Cli.run("force-open", "--store", "memory:", "--reset-timeout", "2s",
                "--max-reset-timeout", "1s", "op"), "--max-reset-timeout must be >= resetTimeout");
        SimulateCommandTest.assertUsage(Cli.run("simulate", "--failure-threshold", "0"),
                "--failure-threshold must be >= 1, was 0");
        SimulateCommandTest.assertUsage(Cli.run("simulate", "--reset-timeout", "0s"),
                "--reset-timeout must be at least 1 ms");
        SimulateCommandTest.assertUsage(Cli.run("simulate", "--backoff-multiplier", "0.5"),
                "--backoff-multiplier must be a finite number >= 1, was 0.5");
        SimulateCommandTest.assertUsage(Cli.run("simulate", "--jitter", "1"), "--jitter must be in [0, 1), was 1.0");
        assertEquals("--max-gap-between-failures", OptionErrors.flag("maxGapBetweenFailures"));
    }

    /** Options that stand for a library option default to its declared default; simulate's window is its own. */
    @Test
    void policyOptionsDefaultToTheLibrarysOwn() {
        String status = Cli.run("status", "--help").out().replaceAll("\\s+", " ");
        assertTrue(status.contains("resetTimeout (default: "
                + DurationConverter.format(dev.redeye.api.Policy.RESET_TIMEOUT.defaultValue()) + ")"), status);
        assertTrue(status.contains("backoffMultiplier (default: "
                + dev.redeye.api.Policy.BACKOFF_MULTIPLIER.defaultValue() + ")"), status);
        String simulate = Cli.run("simulate", "--help").out().replaceAll("\\s+", " "); // the help wraps
        assertTrue(simulate.contains("(default: 2s)"), simulate);
        assertTrue(simulate.contains("open a breaker (default: "
                + dev.redeye.api.Policy.FAILURE_THRESHOLD.defaultValue() + ")")
                && simulate.contains("(default: " + dev.redeye.api.Policy.JITTER.defaultValue() + ")"), simulate);
    }

    @Test
    void unreachableStoreIsOneLineWithoutThePassword() {
        String r = DEAD_REDIS;
        String p = DEAD_POSTGRES;
        for (String[] args : new String[][] {{"status", "--store", r, "op"}, {"force-open", "--store", r, "op"},
            {"watch", "--store=" + r, "--timeout", "1s"}, {"tck", "--store", r}, {"simulate", "--store", r},
            {"status", "--store", p, "op"}, {"reset", "--store=" + p, "op"}}) {
            Cli.Run run = Cli.run(args);
            assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
            assertTrue(run.err().contains("error:"), run::toString);
            assertFalse(run.err().contains("s3cretpw"), run::toString);
            assertFalse(run.out().contains("s3cretpw"), run::toString);
            assertFalse(run.err().contains("\tat "), run::toString);
            assertTrue(run.err().strip().lines().count() <= 2, run::toString);
        }
    }

    @Test
    void passwordsWithUnencodedReservedCharactersAreNotPrinted() {
        // java.net.URI cannot parse these, so the error is about the URI itself: it must still hide them.
        for (String uri : new String[] {"redis://u:pa#ss3cret@127.0.0.1:1", "redis://:my/s3cretpw@127.0.0.1:1",
            "redis://:p@ss3cret@127.0.0.1:1", "nosuch://u:pa#ss3cret@host"}) {
            for (String[] args : new String[][] {{"status", "--store", uri, "op"},
                {"-v", "status", "--store", uri, "op"}}) {
                Cli.Run run = Cli.run(args);
                assertTrue(run.exit() != 0, run::toString);
                for (String secret : new String[] {"pa#ss3cret", "s3cretpw", "ss3cret"}) {
                    assertFalse(run.err().contains(secret), run::toString);
                    assertFalse(run.out().contains(secret), run::toString);
                }
            }
        }
    }

    @Test
    void verbosePrintsTheStackTraceStillWithoutThePassword() {
        for (String[] args : new String[][] {{"-v", "status", "--store", DEAD_REDIS, "op"},
            {"status", "--verbose", "--store", DEAD_POSTGRES, "op"}}) {
            Cli.Run run = Cli.run(args);
            assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
            assertTrue(run.err().contains("\tat "), run::toString);
            assertFalse(run.err().contains("s3cretpw"), run::toString);
        }
    }

    @Test
    void watchSaysClearlyWhenTheStoreHasNoFeed() {
        Cli.Run run = Cli.run("watch", "--store", "nofeed:test", "--timeout", "1s");
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.err().contains("has no transition feed"), run::toString);
        assertEquals("", run.out(), run::toString);
    }

    @Test
    void secretsAreScrubbedFromAnyMessage() {
        Secrets s = Secrets.fromArgs(java.util.List.of("status", "--store=redis://u:p%40ss-w0rd@h:1?token=tok3n", "x"));
        String scrubbed = s.scrub("cannot reach redis://u:p%40ss-w0rd@h:1?token=tok3n: auth p@ss-w0rd and tok3n failed");
        assertFalse(scrubbed.contains("p%40ss-w0rd"), scrubbed);
        assertFalse(scrubbed.contains("p@ss-w0rd"), scrubbed);
        assertFalse(scrubbed.contains("tok3n"), scrubbed);
        assertTrue(scrubbed.contains("redis://u:***@h:1"), scrubbed);
    }
}

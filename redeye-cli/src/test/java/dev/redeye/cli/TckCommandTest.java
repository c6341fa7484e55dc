package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** redeye tck: the real TCK through the JUnit Platform launcher. */
class TckCommandTest {

    @Test
    void inMemoryStorePassesEveryRule() {
        Cli.Run run = Cli.run("tck", "--store", "memory:");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("PASSED   R1.1"), run::toString);
        assertTrue(run.out().contains("PASSED   R7.2"), run::toString);
        assertTrue(run.out().matches("(?s).*\\d+ passed, 0 failed, \\d+ skipped\\s*"), run::toString);
        assertFalse(run.out().contains("FAILED"), run::toString);
    }

    @Test
    void aSchemeWithoutAProviderSaysHowToRegisterOne() {
        Cli.Run run = Cli.run("tck", "--store", "mystore://somewhere");
        SimulateCommandTest.assertUsage(run, "no store provider for scheme 'mystore'");
        assertTrue(run.err().contains("META-INF/services/dev.redeye.spi.StoreProvider"), run::toString);
        assertTrue(run.err().contains("--classpath"), run::toString);
        assertFalse(run.err().contains("add a store module"), run::toString);
    }

    @Test
    void selectedRulesOnly() {
        Cli.Run run = Cli.run("tck", "--store", "memory:", "--rule", "R1.1,R2.7", "--rule", "R4.4");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("3 passed, 0 failed, 0 skipped"), run::toString);
    }

    @Test
    void aFailingRuleExitsOne() {
        // A store that lacks the atomic capabilities its rules need is reported as skipped, not passed;
        // the no-feed fixture keeps counts in one map per client, so the two-client rules fail.
        Cli.Run run = Cli.run("tck", "--store", "nofeed:private", "--rule", "R1.2");
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.out().contains("FAILED   R1.2"), run::toString);
        assertTrue(run.out().contains("0 passed, 1 failed"), run::toString);
    }

    @Test
    void aStoreDeclaringNothingFailsR0_1UnlessExpectSaysItIsPlain() {
        Cli.Run unstated = Cli.run("tck", "--store", "nofeed:private", "--rule", "R0.1,R2.1");
        assertEquals(RedeyeCommand.EXIT_FAILURE, unstated.exit(), unstated::toString);
        assertTrue(unstated.out().contains("FAILED   R0.1"), unstated::toString);
        assertTrue(unstated.out().contains("declares no optional capability"), unstated::toString);
        assertTrue(unstated.out().contains("WARNING: 1 rule(s) SKIPPED"), unstated::toString);
        Cli.Run plain = Cli.run("tck", "--store", "nofeed:private", "--rule", "R0.1", "--expect", "none");
        assertEquals(0, plain.exit(), plain::toString);
        assertTrue(plain.out().contains("PASSED   R0.1"), plain::toString);
        Cli.Run all = Cli.run("tck", "--store", "memory:", "--rule", "R0.1", "--expect", "all");
        assertEquals(0, all.exit(), all::toString);
        SimulateCommandTest.assertUsage(Cli.run("tck", "--store", "memory:", "--expect", "Telepathy"), "Telepathy");
    }

    @Test
    void theModelRulesTakeTriesAndSeed() {
        Cli.Run run = Cli.run("tck", "--store", "memory:", "--rule", "R8.1,R8.3", "--tries", "20", "--seed", "42");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("PASSED   R8.1"), run::toString);
        assertTrue(run.out().contains("2 passed, 0 failed, 0 skipped"), run::toString);
        SimulateCommandTest.assertUsage(Cli.run("tck", "--store", "memory:", "--tries", "0"), "--tries");
    }

    @Test
    void aModelRuleFailurePrintsTheShrunkSequenceToReplay() {
        // Each client of nofeed:private keeps its own map: what one client writes the other never reads.
        Cli.Run run = Cli.run("tck", "--store", "nofeed:private", "--rule", "R8.1", "--seed", "7");
        assertEquals(RedeyeCommand.EXIT_FAILURE, run.exit(), run::toString);
        assertTrue(run.out().contains("FAILED   R8.1"), run::toString);
        assertTrue(run.out().contains("R8.1 violated: the store diverged from the reference model; shrunk to 1 step "),
                run::toString);
        assertTrue(run.out().contains("seed 7 (redeye.tck.seed=7 or redeye tck --seed 7 runs it again)"),
                run::toString);
        assertTrue(run.out().contains("Replay (a and b: two clients of the store"), run::toString);
        assertTrue(run.out().contains("<-- diverged: get returned empty but the key holds"), run::toString);
    }

    @Test
    void redisStorePassesTheAtomicCountingRules() {
        String uri = Cli.redisUri();
        Cli.assertReachable(uri);
        Cli.Run run = Cli.run("tck", "--store", uri, "--rule", "R2.7,R4.4,R6.3");
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.out().contains("3 passed, 0 failed, 0 skipped"), run::toString);
    }
}

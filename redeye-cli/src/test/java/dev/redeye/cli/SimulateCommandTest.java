package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The fleet simulation on {@code memory:}, through the real entry point, with short timings (3 s a run).
 * Timeline: down at 0.5 s, the first trial (about 1 s) fails, the second (about 2 s, after the x2 backoff)
 * finds the dependency back since 1.8 s and closes.
 */
class SimulateCommandTest {
    static final int INSTANCES = 8;
    static final int THREADS = 1;
    static final int THRESHOLD = 5;

    static String[] simulate(String... extra) {
        List<String> a = new ArrayList<>(List.of("simulate", "--instances", "" + INSTANCES,
                "--threads-per-instance", "" + THREADS, "--duration", "3s", "--down-at", "500ms", "--up-at", "1.8s",
                "--reset-timeout", "500ms", "--failure-threshold", "" + THRESHOLD, "--call-latency", "10ms",
                "--think-time", "15ms", "--progress", "never"));
        // An option given in extra replaces the default above (picocli refuses an option given twice).
        for (int i = 0; i < extra.length; i++) {
            int at = a.indexOf(extra[i]);
            if (extra[i].startsWith("--") && at >= 0 && i + 1 < extra.length && !extra[i + 1].startsWith("--")) {
                a.set(at + 1, extra[i + 1]);
                i++;
            } else {
                a.add(extra[i]);
            }
        }
        return a.toArray(new String[0]);
    }

    static JsonNode json(Cli.Run run) throws Exception {
        assertEquals(0, run.exit(), run::toString);
        return Json.mapper().readTree(run.out());
    }

    @Test
    void sharedModeStopsTheFleetAfterFailureThresholdAndRunsOneTrialAtATime() throws Exception {
        JsonNode r = json(Cli.run(simulate("--json")));
        int threads = INSTANCES * THREADS;
        assertEquals("shared", r.get("mode").asText());
        // One breaker for the fleet: it opens once, whichever instance sees the threshold-th failure.
        assertEquals(1, r.get("openings").asLong(), r::toPrettyString);
        long normal = r.get("reachedDeadDependencyByNormalCalls").asLong();
        assertTrue(normal >= THRESHOLD, () -> "at least failureThreshold calls must fail to open: " + r);
        // failureThreshold plus, at most, one call already in flight on each other thread.
        assertTrue(normal <= THRESHOLD + threads - 1, () -> "too many calls reached the dead dependency: " + r);
        assertTrue(r.get("inFlightAtOpening").asLong() <= threads - 1, r::toPrettyString);
        // Exactly one trial at a time across all instances (a non-exclusive claim lets several through).
        assertEquals(1, r.get("maxConcurrentTrials").asInt(), r::toPrettyString);
        assertTrue(r.get("failedTrials").asLong() >= 1, r::toPrettyString);
        assertTrue(r.get("trialCalls").asLong() >= 2, r::toPrettyString);
        assertFalse(r.get("recoveredAfterUpMs").isNull(), () -> "the breaker must close after recovery: " + r);
        assertEquals(INSTANCES, r.get("closedAtEnd").asInt(), r::toPrettyString);
        assertTrue(r.get("rejected").asLong() > 0, r::toPrettyString);
        assertEquals(0, r.get("otherErrors").asLong(), r::toPrettyString);
        double opsPerCall = r.get("storeOpsPerCall").asDouble();
        assertTrue(opsPerCall > 0 && opsPerCall < 2, r::toPrettyString);
        assertTrue(r.get("storeOpsByKind").has("claim_trial"), r::toPrettyString);
    }

    /** Four instances, the fourth failing every call, a 20 % rate over 10 s: one bad instance is 25 %. */
    private static String[] badFourth(String... extra) {
        List<String> a = new ArrayList<>(List.of("--instances", "4", "--no-outage", "--bad-instance", "4",
                "--sliding-window", "10", "--failure-rate-threshold", "20", "--minimum-number-of-calls", "20"));
        a.addAll(List.of(extra));
        return simulate(a.toArray(new String[0]));
    }

    /**
     * One instance whose every call fails while the dependency is up (issue 26): without a quorum the shared
     * breaker opens (the fleet's failure rate is the bad instance's share) and rejects the healthy instances'
     * calls; with a quorum of 2 the fleet never opens, no healthy call is rejected, and the bad instance is cut
     * off alone (an outlier).
     */
    @Test
    void aQuorumKeepsOneBadInstanceFromTrippingTheFleet() throws Exception {
        JsonNode without = json(Cli.run(badFourth("--json")));
        assertTrue(without.get("openings").asLong() >= 1, without::toPrettyString);
        assertTrue(without.get("healthyInstancesRejected").asLong() > 0, without::toPrettyString);
        assertEquals(0, without.get("reachedDeadDependency").asLong(), "the dependency never went down");
        JsonNode with = json(Cli.run(badFourth("--json", "--quorum", "2")));
        assertEquals(0, with.get("openings").asLong(), with::toPrettyString);
        assertEquals(0, with.get("healthyInstancesRejected").asLong(), with::toPrettyString);
        assertTrue(with.get("outliers").asLong() >= 1, with::toPrettyString);
        assertTrue(with.get("rejected").asLong() > 0, () -> "the bad instance rejects its own calls: " + with);
        assertEquals(2, with.get("quorum").asInt());
        assertEquals(4, with.get("badInstance").asInt());
        Cli.Run text = Cli.run(badFourth("--quorum", "2", "--duration", "1s"));
        assertEquals(0, text.exit(), text::toString);
        assertTrue(text.out().contains("quorum 2; instance 4 fails every call"), text::toString);
        assertTrue(text.out().contains("failure rate 20 % over 10 s (at least 20 calls)"), text::toString);
        assertTrue(text.out().contains("healthy instances' calls rejected (dependency up)"), text::toString);
    }

    @Test
    void quorumAndBadInstanceOptionsAreChecked() {
        Cli.Run perInstance = Cli.run(simulate("--mode", "per-instance", "--quorum", "2"));
        assertEquals(2, perInstance.exit(), perInstance::toString);
        assertTrue(perInstance.err().contains("--quorum applies to --mode shared"), perInstance::toString);
        Cli.Run tooFar = Cli.run(simulate("--bad-instance", "" + (INSTANCES + 1)));
        assertEquals(2, tooFar.exit(), tooFar::toString);
        assertTrue(tooFar.err().contains("--bad-instance must be in [0, --instances"), tooFar::toString);
        Cli.Run tooBig = Cli.run(simulate("--quorum", "17"));
        assertEquals(2, tooBig.exit(), tooBig::toString);
        assertTrue(tooBig.err().contains("quorum"), tooBig::toString);
    }

    @Test
    void perInstanceModeLetsEveryInstancePayTheThreshold() throws Exception {
        JsonNode r = json(Cli.run(simulate("--json", "--mode", "per-instance")));
        assertEquals("per-instance", r.get("mode").asText());
        assertEquals(INSTANCES, r.get("openings").asLong(), r::toPrettyString);
        assertTrue(r.get("reachedDeadDependencyByNormalCalls").asLong() >= (long) INSTANCES * THRESHOLD,
                r::toPrettyString);
        assertTrue(r.get("trialCalls").asLong() >= INSTANCES, r::toPrettyString);
        assertEquals(INSTANCES, r.get("closedAtEnd").asInt(), r::toPrettyString);
    }

    @Test
    void compareRunsBothModesAndShowsTheMultiple() throws Exception {
        JsonNode both = json(Cli.run(simulate("--json", "--compare")));
        JsonNode shared = both.get("shared");
        JsonNode per = both.get("perInstance");
        assertNotNull(shared, both::toPrettyString);
        assertNotNull(per, both::toPrettyString);
        assertTrue(shared.get("reachedDeadDependencyByNormalCalls").asLong() <= THRESHOLD + INSTANCES * THREADS - 1,
                both::toPrettyString);
        assertTrue(per.get("reachedDeadDependencyByNormalCalls").asLong() >= (long) INSTANCES * THRESHOLD,
                both::toPrettyString);
        assertTrue(per.get("reachedDeadDependency").asLong() > 2 * shared.get("reachedDeadDependency").asLong(),
                both::toPrettyString);
    }

    @Test
    void compareTextHasBothTimelinesTheSideBySideSummaryAndNoProgressNoise() {
        Cli.Run run = Cli.run(simulate("--compare"));
        assertEquals(0, run.exit(), run::toString);
        String out = run.out();
        assertTrue(out.contains("Timeline, shared (memory:)"), out);
        assertTrue(out.contains("Timeline, per-instance (memory:, one private store per instance)"), out);
        assertTrue(out.contains("---- dependency goes DOWN ----"), out);
        assertTrue(out.contains("CLOSED -> OPEN"), out);
        assertTrue(out.contains("HALF_OPEN -> CLOSED"), out);
        assertTrue(out.contains(INSTANCES + " instances (#1 #2"), () -> "per-instance openings are grouped: " + out);
        assertTrue(out.matches("(?s).*Summary:\\s+shared\\s+per-instance\\s.*"), out);
        assertTrue(out.contains("max concurrent trial calls"), out);
        assertTrue(out.contains("recorded before the breaker opened (failureThreshold " + THRESHOLD + ") and "), out);
        assertTrue(out.contains("as many calls reach the dead dependency as one shared breaker"), out);
        assertFalse(out.contains("\r"), out);
        assertFalse(run.err().contains("\r"), run.err());
    }

    @Test
    void theTrialFigureIsMeasuredNotAssumed() throws Exception {
        // Slow calls and no jitter: every instance becomes eligible for a trial at the same moment. With
        // exclusive claims (InMemoryStore) one instance runs the trial; with claims that never refuse (the
        // leaky: fixture) several trials run at once, and the figure shows it.
        String[] slow = {"--json", "--call-latency", "100ms", "--jitter", "0", "--backoff-multiplier", "1"};
        JsonNode exclusive = json(Cli.run(simulate(slow)));
        assertEquals(1, exclusive.get("maxConcurrentTrials").asInt(), exclusive::toPrettyString);
        Cli.Run leakyRun = Cli.run(simulate(with(slow, "--store", "leaky:" + UUID.randomUUID())));
        JsonNode leaky = json(leakyRun);
        assertTrue(leaky.get("maxConcurrentTrials").asInt() > 1, leaky::toPrettyString);
        assertTrue(leakyRun.err().contains("trial claims are not exclusive"), leakyRun::toString);
        // Without any claim capability a trial cannot be recognised: the figure says so instead of 0.
        JsonNode naive = json(Cli.run(simulate(with(slow, "--store", "naive:" + UUID.randomUUID()))));
        assertTrue(naive.get("maxConcurrentTrials").isNull(), naive::toPrettyString);
        assertTrue(naive.get("trialCalls").isNull(), naive::toPrettyString);
    }

    static String[] with(String[] base, String... more) {
        String[] out = Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, out, base.length, more.length);
        return out;
    }

    @Test
    void badSimulationArgumentsAreUsageErrors() {
        assertUsage(Cli.run("simulate", "--instances", "0"), "--instances");
        assertUsage(Cli.run("simulate", "--duration", "5"), "unit");
        assertUsage(Cli.run("simulate", "--mode", "sideways"), "per-instance");
        assertUsage(Cli.run("simulate", "--down-at", "5s", "--up-at", "4s"), "--up-at");
        assertUsage(Cli.run("simulate", "--jitter", "1.5"), "--jitter");
        assertUsage(Cli.run("simulate", "--no-such-option"), "no-such-option");
    }

    @Test
    void unknownStoreSchemeInSimulateIsOneClearLine() {
        Cli.Run run = Cli.run("simulate", "--store", "nosuch://somewhere", "--duration", "1s", "--down-at", "100ms",
                "--up-at", "500ms", "--progress", "never");
        assertUsage(run, "no store provider");
    }

    static void assertUsage(Cli.Run run, String expected) {
        assertEquals(RedeyeCommand.EXIT_USAGE, run.exit(), run::toString);
        assertTrue(run.err().contains(expected), run::toString);
        assertEquals(1, run.err().strip().lines().count(), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
        assertEquals("", run.out(), run::toString);
    }
}

package dev.redeye.tck;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.tck.ReferenceModel.Claim;
import dev.redeye.tck.ReferenceModel.KeyModel;
import dev.redeye.tck.ReferenceModel.Verdict;
import dev.redeye.tck.Scenario.KeySpec;
import dev.redeye.tck.Scenario.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Runs one {@link Scenario} against two clients of the store and the {@link ReferenceModel} side by side
 * (R8.1, R8.2, and the sequential prefix of R8.3): each abstract step becomes a concrete {@link Call}
 * resolved against the model, runs on its client, and is judged; after every call that can write, the other
 * client reads the key back and that is judged too. The first divergence ends the run. Not thread-safe: one
 * runner per rule.
 */
final class SequenceRunner {
    /** The ttl of claims that must not expire within a scenario. */
    static final Duration LONG_CLAIM_TTL = Duration.ofMinutes(5);
    /** The ttl of the claims of R8.2, which expire within a scenario. */
    static final Duration SHORT_CLAIM_TTL = Duration.ofMillis(200);
    /**
     * Before a claim or release, a claim within this much of its ttl is waited out until it surely expired,
     * so that a slow machine makes the rule wait longer rather than judge an uncertain claim.
     */
    static final long GUARD_NANOS = TimeUnit.MILLISECONDS.toNanos(80);

    private static final String[] CLIENT_NAMES = {"a", "b"};

    private final Store[] clients;

    /** @param clients two independent clients of the store under test */
    SequenceRunner(Store[] clients) {
        if (clients.length != 2) {
            throw new IllegalArgumentException("two clients");
        }
        this.clients = clients.clone();
    }

    /**
     * One line of a run's trace: a call with what it returned, or a wait.
     *
     * @param step     the index of the scenario step (0-based)
     * @param client   0 or 1, or -1 for a wait
     * @param call     the call, or {@code null} for a wait
     * @param seen     what it returned, or {@code null} for a wait
     * @param result   a short account of the result ("closed v3 failures=1", "token t4", "empty")
     * @param slept    ms slept before this line (waits for claims to expire)
     */
    record Line(int step, int client, Call call, Observed seen, String result, long slept) {
    }

    /** The outcome of one run of a scenario. */
    static final class Run {
        final Scenario scenario;
        final List<Line> lines = new ArrayList<>();
        final Map<String, String> tokenVars = new HashMap<>();
        /** The failing step (0-based), or -1 when the store matched the model throughout. */
        int failedStep = -1;
        /** Why the failing step diverged. */
        String mismatch;
        /** What the model expected at the failing step (for the report). */
        Object expected;
        /** The read back that diverged after the failing step's call, if it was the read back. */
        Line failedRead;
        /** Whether the failure was an exception from the store rather than a wrong result. */
        boolean threw;
        /** The model after the last step, when every step matched. */
        ReferenceModel model;
        /** How the run's steps were resolved (versions seen, tokens issued). */
        StepResolver resolver;

        Run(Scenario scenario) {
            this.scenario = scenario;
        }

        boolean failed() {
            return failedStep >= 0;
        }

        /** A failure of the same nature: a wrong result or an exception (what shrinking must preserve). */
        boolean sameNature(Run other) {
            return other.failed() && other.threw == threw;
        }

        /**
         * The replay of the run as Java a store author can paste: the keys and policies, one statement per
         * call with what it returned, and at the failing step what the model expected.
         */
        String replay() {
            Set<Integer> used = new HashSet<>();
            for (Step s : scenario.steps()) {
                used.add(s.key());
            }
            return replay(used);
        }

        /** The replay, declaring the keys in {@code used}. */
        String replay(Set<Integer> used) {
            StringBuilder sb = new StringBuilder();
            sb.append("  Keys and policies (a fresh key prefix replaces the TCK's; T0 = ").append(TckSupport.T0)
                    .append("L):\n");
            for (int k = 0; k < scenario.keys().size(); k++) {
                if (used.contains(k)) {
                    KeySpec spec = scenario.keys().get(k);
                    sb.append("    String k").append(k + 1).append(" = prefix + ").append(Call.literal(spec.name()))
                            .append(";\n    Policy p").append(k + 1).append(" = ")
                            .append(ScenarioGenerator.java(spec.policy())).append(";\n");
                }
            }
            if (scenario.skewed()) {
                sb.append("  Clock skew of each client, already in every now below: a ")
                        .append(skewText(scenario.skew(0))).append(", b ").append(skewText(scenario.skew(1)))
                        .append('\n');
            }
            sb.append("  Replay (a and b: two clients of the store; up(s), claims(s): "
                    + "s.capability(AtomicUpdates / TrialClaims .class).orElseThrow()):\n");
            for (Line l : lines) {
                if (l.call() == null && scenario.steps().get(l.step()).kind() == Scenario.Kind.WAIT) {
                    sb.append(String.format("    %3d. Thread.sleep(%d);  // wait: every short claim surely expired%n",
                            l.step() + 1, l.slept()));
                    continue;
                }
                if (l.slept() > 0) {
                    sb.append(String.format("         Thread.sleep(%d);  // until every short claim surely expired%n",
                            l.slept()));
                }
                if (l.call() == null) {
                    continue;
                }
                String stmt = l.call().java(CLIENT_NAMES[l.client()], "k" + (l.call().key() + 1),
                        "p" + (l.call().key() + 1), tokenVars::get);
                if (l.call().op() == Call.Op.CLAIM) {
                    stmt = "Optional<String> t" + (l.step() + 1) + " = " + stmt;
                }
                boolean failing = l.step() == failedStep && failedRead == null;
                sb.append(String.format("    %3d. %s;", l.step() + 1, stmt));
                sb.append(failing ? "  // <-- diverged: " + l.result() : "  // " + l.result()).append('\n');
                if (l.step() == failedStep && failedRead != null) {
                    sb.append("         ").append(failedRead.call().java(CLIENT_NAMES[failedRead.client()],
                            "k" + (failedRead.call().key() + 1), "", tokenVars::get))
                            .append(";  // <-- diverged: ").append(failedRead.result()).append('\n');
                }
            }
            if (!failed()) {
                return sb.toString();
            }
            sb.append("  Step ").append(failedStep + 1).append(failedRead != null ? " (reading the key back)" : "")
                    .append(": ").append(mismatch).append('\n');
            if (expected != null) {
                sb.append("    the model expected: ").append(expected).append('\n');
                Observed seen = failedRead != null ? failedRead.seen() : lastCallSeen();
                if (seen != null) {
                    sb.append("    the store returned: ").append(seen.error() != null ? seen.error() : seen.value())
                            .append('\n');
                }
            }
            return sb.toString();
        }

        private static String skewText(long ms) {
            return (ms > 0 ? "+" : ms < 0 ? "-" : "") + Math.abs(ms) + " ms";
        }

        private Observed lastCallSeen() {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).call() != null) {
                    return lines.get(i).seen();
                }
            }
            return null;
        }

        /** The number of steps up to and including the failing one. */
        int length() {
            return failed() ? failedStep + 1 : scenario.steps().size();
        }
    }

    /**
     * Runs {@code scenario} on keys named {@code prefix + name} (fresh for this run) and deletes them after.
     */
    Run run(Scenario scenario, String prefix) {
        try {
            return runKeeping(scenario, prefix);
        } finally {
            deleteKeys(scenario, prefix);
        }
    }

    /** Deletes the keys of a run (clean-up only: failures are ignored). */
    void deleteKeys(Scenario scenario, String prefix) {
        for (KeySpec k : scenario.keys()) {
            try {
                clients[0].delete(prefix + k.name());
            } catch (RuntimeException e) {
                // clean-up only; the run's verdict stands
            }
        }
    }

    /**
     * Runs {@code scenario} and leaves its keys in the store; {@link Run#model} and {@link Run#resolver} are
     * where a concurrent scenario goes on from.
     */
    Run runKeeping(Scenario scenario, String prefix) {
        Run run = new Run(scenario);
        StepResolver resolver = new StepResolver(scenario);
        run.resolver = resolver;
        ReferenceModel m = ReferenceModel.empty(scenario.keys().size());
        for (int i = 0; i < scenario.steps().size(); i++) {
            Step step = scenario.steps().get(i);
            long slept = 0;
            if (step.kind() == Scenario.Kind.WAIT) {
                slept = waitOut(m.keys().stream().flatMap(k -> k.claims().stream()).toList());
                m = m.expire(System.nanoTime());
                run.lines.add(new Line(i, -1, null, null, "", slept));
                continue;
            }
            if (step.kind().op == Call.Op.CLAIM || step.kind().op == Call.Op.RELEASE) {
                slept = waitOut(aging(m));
                m = m.expire(System.nanoTime());
            }
            Call call = resolver.resolve(i, step, m);
            String name = prefix + scenario.keys().get(step.key()).name();
            Observed seen = Observed.run(call, clients[step.client()], name);
            Verdict v = m.apply(call, seen);
            if (v.ok() && call.op() == Call.Op.CLAIM) {
                String duplicate = resolver.issued(i, step.key(), seen);
                if (duplicate != null) {
                    v = Verdict.mismatch(duplicate, "a new token");
                } else if (((Optional<?>) seen.value()).isPresent()) {
                    run.tokenVars.put((String) ((Optional<?>) seen.value()).get(), "t" + (i + 1) + ".get()");
                }
            }
            run.lines.add(new Line(i, step.client(), call, seen, v.ok() ? describe(call, seen, i)
                    : v.mismatch(), slept));
            if (!v.ok()) {
                fail(run, i, v, seen, null);
                return run;
            }
            m = v.next();
            if (!v.uncertain().isEmpty()) {
                long extra = waitOut(v.uncertain());
                m = m.expire(System.nanoTime());
                run.lines.add(new Line(i, -1, null, null, "", extra));
            }
            resolver.seen(step.key(), m.key(step.key()));
            if (call.op().writes()) {
                int other = 1 - step.client();
                Call read = Call.plain(Call.Op.GET, step.key());
                Observed back = Observed.run(read, clients[other], name);
                Verdict rv = m.apply(read, back);
                if (!rv.ok()) {
                    fail(run, i, rv, back, new Line(i, other, read, back, rv.mismatch(), 0));
                    return run;
                }
            }
        }
        run.model = m;
        return run;
    }

    private static void fail(Run run, int step, Verdict v, Observed seen, Line read) {
        run.failedStep = step;
        run.mismatch = v.mismatch();
        run.expected = v.expected();
        run.failedRead = read;
        run.threw = seen.error() != null;
    }

    /** Claims that a call made now could find expiring (within {@link #GUARD_NANOS} of their ttl). */
    private static List<Claim> aging(ReferenceModel m) {
        long soon = System.nanoTime() + GUARD_NANOS;
        List<Claim> out = new ArrayList<>();
        for (KeyModel k : m.keys()) {
            for (Claim c : k.claims()) {
                if (c.mayBeExpiredBy(soon)) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    /** Sleeps until every claim in {@code claims} surely expired; returns the ms slept (0 if none). */
    static long waitOut(List<Claim> claims) {
        long until = Long.MIN_VALUE;
        for (Claim c : claims) {
            if (c.ttlNanos() < LONG_CLAIM_TTL.toNanos()) { // a long claim never expires within a scenario
                until = Math.max(until, c.surelyExpiredAt());
            }
        }
        if (until == Long.MIN_VALUE) {
            return 0;
        }
        long start = System.nanoTime();
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            TckSupport.sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left) + 1));
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    /** A short account of a call's accepted result for the trace. */
    private static String describe(Call call, Observed seen, int step) {
        switch (call.op()) {
            case CLAIM:
                Optional<?> t = (Optional<?>) seen.value();
                return t.isPresent() ? "token t" + (step + 1) : "empty (every permit taken)";
            case GET:
                Optional<?> g = (Optional<?>) seen.value();
                return g.map(s -> States.brief((BreakerState) s)).orElse("empty");
            case PUT:
            case DELETE:
            case RELEASE:
                return "ok";
            default:
                StateChange c = (StateChange) seen.value();
                return (c.transition() != null ? c.transition() + ": " : c.changed() ? "" : "no change: ")
                        + States.brief(c.state());
        }
    }
}

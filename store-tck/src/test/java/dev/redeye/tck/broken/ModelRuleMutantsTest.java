package dev.redeye.tck.broken;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckReport.RuleResult;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.TckRunner;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The model rules add power: each store here has one defect that every scripted rule (R0.1 to R7.10, but the
 * rules {@link ContractV3MutantsTest} shows, which came later: R4.10 also catches the claim defect)
 * misses, and the model rules (R8) catch it, each failure shrunk to a short replay that names the rule. The defects
 * are the kind a native port of the rules or a hand-made claim table gets wrong: an EWMA in an algebraically
 * equal form that is not bit-exact, a gap check that a forced close switches off, expired claims counted
 * against several permits until a release prunes them, a force that is a read-then-write, and a WOULD_OPEN that
 * resets only some counters.
 */
class ModelRuleMutantsTest {
    private static final Pattern SHRUNK = Pattern.compile("shrunk to (\\d+) steps?");
    private static final Set<Rule> SCRIPTED = EnumSet.range(Rule.R0_1, Rule.R7_10);
    /** Every rule but those {@link ContractV3MutantsTest} shows. */
    private static final Set<Rule> RUN = EnumSet.complementOf(EnumSet.copyOf(ContractV3MutantsTest.NEW));

    /**
     * One defect.
     *
     * @param name     what is wrong
     * @param wrapper  a fresh wrapper factory per run (shared defect state lives in the factory)
     * @param mustFail the model rules that must catch it
     * @param shortest the most steps the shrunk replay of the first rule in {@code mustFail} may have
     * @param mention  a fragment the failure message must contain
     */
    record Mutant(String name, Supplier<Function<Store, Store>> wrapper, EnumSet<Rule> mustFail, int shortest,
            String mention) {
    }

    @TestFactory
    Stream<DynamicTest> eachDefectPassesEveryScriptedRuleAndFailsTheModelRules() {
        return mutants().stream().map(m -> DynamicTest.dynamicTest(m.name(), () -> check(m)));
    }

    private static void check(Mutant m) {
        try (InMemoryStore backing = new InMemoryStore()) {
            Function<Store, Store> wrap = m.wrapper().get();
            TckReport report = TckRunner.run(() -> wrap.apply(backing.newClient()), RUN,
                    Map.of(TckRunner.PATIENCE_PARAMETER, "2000"));
            for (RuleResult r : report.results()) {
                if (SCRIPTED.contains(r.rule())) {
                    assertTrue(r.status() != Status.FAILED, () -> m.name() + ": the scripted rule " + r.id()
                            + " caught the defect, so it does not show what R8 adds\n" + report.format());
                }
            }
            for (Rule r : m.mustFail()) {
                BrokenStoresTest.assertFails(report, r, m.mention());
            }
            Rule first = m.mustFail().iterator().next();
            String message = report.result(first).orElseThrow().message();
            System.out.println(m.name() + ":\n" + message + "\n"); // the replay a store author would read
            if (first != Rule.R8_3) {
                Matcher shrunk = SHRUNK.matcher(message);
                assertTrue(shrunk.find(), message);
                int steps = Integer.parseInt(shrunk.group(1));
                assertTrue(steps <= m.shortest(), "the failing sequence must shrink to at most " + m.shortest()
                        + " steps, but shrank to " + steps + ":\n" + message);
                assertTrue(message.contains("seed " + TckRunner.DEFAULT_SEED), message);
            } else {
                assertTrue(message.contains("no sequential order of the reference model explains"), message);
            }
        }
    }

    private static List<Mutant> mutants() {
        return List.of(
                new Mutant("errorRate decay applied in the incremental form rate + (1 - decay) * (x - rate)",
                        ModelRuleMutantsTest::incrementalDecay, EnumSet.of(Rule.R8_1), 4, "errorRate expected"),
                new Mutant("maxGapBetweenFailures ignored after a forced close until the breaker opens again",
                        ModelRuleMutantsTest::gapIgnoredAfterForcedClose, EnumSet.of(Rule.R8_1), 4,
                        "failures expected 1"),
                new Mutant("expired claims of several permits counted until a release prunes them",
                        () -> new FlawedClaims(FlawedClaims.Defect.EXPIRED_COUNTED_UNTIL_RELEASE)::client,
                        EnumSet.of(Rule.R8_2), 5, "returned empty although"),
                new Mutant("a success clearing failures is a read, then a put (not atomic)",
                        ModelRuleMutantsTest::clearingByPut, EnumSet.of(Rule.R8_3), 0, "thread"),
                new Mutant("METRICS_ONLY's WOULD_OPEN keeps the error rate and samples of the error-rate strategy",
                        ModelRuleMutantsTest::wouldOpenKeepsTheRate, EnumSet.of(Rule.R8_1), 8, "samples expected 0"));
    }

    /**
     * Where the error-rate strategy would open in METRICS_ONLY, the state stays closed with version + 1 and
     * WOULD_OPEN, but the rate and samples are kept (only the counters the scripted mode rule R12.5 looks at, the
     * failures and the window, are reset), so the next outcome would open again at once. The scripted rules run
     * METRICS_ONLY with a sliding window and the consecutive strategy only; R8's policies mix it with every
     * strategy.
     */
    private static Function<Store, Store> wouldOpenKeepsTheRate() {
        return inner -> new ForwardingStore(inner) {
            @Override
            StateChange written(String key, Policy policy, long now, StateChange c) {
                if (c.transition() != dev.redeye.api.TransitionKind.WOULD_OPEN
                        || policy.strategy() != Strategy.ERROR_RATE) {
                    return c;
                }
                BreakerState kept = c.state().toBuilder().errorRate(c.previous().errorRate())
                        .samples(c.previous().samples() + 1).build();
                inner.put(key, kept, policy.stateTtl());
                return new StateChange(c.previous(), kept, c.transition());
            }
        };
    }

    /**
     * Every error-rate outcome after the first computes {@code rate + (1 - decay) * (x - rate)}: equal to the
     * contract's {@code decay * rate + (1 - decay) * x} in exact arithmetic, not in IEEE doubles. R3.1 allows
     * 1e-9, so only bit-exact comparison (R1.2's promise carried through R8) sees it. Atomic across clients
     * through one lock of the factory.
     */
    private static Function<Store, Store> incrementalDecay() {
        Object lock = new Object();
        return inner -> new ForwardingStore(inner) {
            private StateChange outcome(String key, boolean success, Policy p, long now) {
                synchronized (lock) {
                    StateChange c = inner.capability(dev.redeye.spi.AtomicUpdates.class).orElseThrow()
                            .apply(key, AtomicOperation.outcome(success), p, now);
                    BreakerState prev = c.previous();
                    if (p.strategy() != Strategy.ERROR_RATE || prev.open() || prev.samples() == 0) {
                        return c;
                    }
                    double x = success ? 0.0 : 1.0;
                    double rate = prev.errorRate() + (1 - p.errorRateDecay()) * (x - prev.errorRate());
                    boolean opens = c.state().samples() >= p.minimumCalls() && rate >= p.errorRateThreshold();
                    if (opens != c.isTransition() || Double.doubleToRawLongBits(rate)
                            == Double.doubleToRawLongBits(c.state().errorRate())) {
                        return c; // keep the engine-visible opening decision; only the stored rate drifts
                    }
                    BreakerState drifted = c.state().toBuilder().errorRate(rate).build();
                    inner.put(key, drifted, p.stateTtl());
                    return new StateChange(prev, drifted, c.transition());
                }
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case FAILURE:
                    case SUCCESS:
                        return outcome(key, operation.kind() == AtomicOperation.Kind.SUCCESS, policy, now);
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }

        };
    }

    /**
     * After {@code force(CLOSED)}, failures of the key are counted without the gap check until the breaker
     * opens again (or the key is deleted): a flag a native port might keep next to the state. The scripted gap
     * rule (R2.5) never forces; the force rule (R5.5) never records after the close.
     */
    private static Function<Store, Store> gapIgnoredAfterForcedClose() {
        Set<String> forcedClosed = ConcurrentHashMap.newKeySet();
        return inner -> new ForwardingStore(inner) {
            private Policy policy(String key, Policy p) {
                return forcedClosed.contains(key) ? p.toBuilder().maxGapBetweenFailures(Duration.ZERO).build() : p;
            }

            private StateChange track(String key, StateChange c) {
                if (c.state().open()) {
                    forcedClosed.remove(key);
                }
                return c;
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case FAILURE:
                    case SUCCESS:
                        return track(key, super.apply(key, operation, policy(key, policy), now));
                    case FORCE_OPEN:
                    case FORCE_HALF_OPEN:
                    case FORCE_CLOSED: {
                        StateChange c = super.apply(key, operation, policy, now);
                        if (operation.target() == BreakerStatus.CLOSED) {
                            forcedClosed.add(key);
                        } else {
                            forcedClosed.remove(key);
                        }
                        return c;
                    }
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }

            @Override
            public void delete(String key) {
                super.delete(key);
                forcedClosed.remove(key);
            }
        };
    }

    /**
     * A success that clears sub-threshold failures (consecutive strategy) reads the state, waits a moment (a
     * round trip) and writes the cleared state with a put: "a write, not a transition" taken for "a put".
     * Right in any sequence, so every scripted rule passes (the concurrent ones race failures, error-rate
     * outcomes or transitions, never a clearing success); a failure recorded in between is lost.
     */
    private static Function<Store, Store> clearingByPut() {
        return inner -> new ForwardingStore(inner) {
            private StateChange success(String key, Policy p, long now) {
                BreakerState read = get(key).orElse(null);
                if (p.strategy() != Strategy.CONSECUTIVE || read == null || read.open() || read.failures() == 0) {
                    return super.apply(key, AtomicOperation.success(), p, now);
                }
                LockSupport.parkNanos(10_000_000L);
                BreakerState cleared = read.toBuilder().failures(0).build();
                inner.put(key, cleared, p.stateTtl());
                return new StateChange(read, cleared, null);
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case SUCCESS:
                        return success(key, policy, now);
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }

        };
    }
}

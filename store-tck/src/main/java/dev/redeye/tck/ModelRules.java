package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.CALLS_PER_THREAD;
import static dev.redeye.tck.TckSupport.MAX_EXPIRY_STEPS;
import static dev.redeye.tck.TckSupport.MAX_PREFIX_STEPS;
import static dev.redeye.tck.TckSupport.MAX_SHRINK_RUNS;
import static dev.redeye.tck.TckSupport.MAX_STEPS;
import static dev.redeye.tck.TckSupport.SHRINK_BUDGET_NANOS;
import static dev.redeye.tck.TckSupport.THREADS;
import static dev.redeye.tck.TckSupport.claims;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.spi.Store;
import dev.redeye.tck.ConcurrencyRunner.Concurrent;
import dev.redeye.tck.Scenario.Step;
import dev.redeye.tck.ScenarioGenerator.Purpose;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R8: the store against a reference model ({@link ReferenceModel}: {@code Transitions} plus a claim
 * table) on random scenarios, rather than on listed cases. R8.1 runs random sequences of every call the store
 * declares over two clients and checks every result and the state read back after every step; R8.2 does the
 * same for claims with short ttls in real time; R8.3 runs small concurrent scenarios and checks that some
 * sequential order of the model explains them (linearizability). The scenarios come from a seeded generator
 * ({@value TckRunner#SEED_PARAMETER}, {@value TckRunner#TRIES_PARAMETER}); a failing sequence of R8.1 or R8.2
 * is shrunk against the store to a short one and printed as Java a store author can replay. Extend
 * {@link StoreTck}.
 */
interface ModelRules extends TckContext {
    /**
     * R8.1 Random sequences of every call the store declares, over two clients with virtual now moving
     * forward, return and store exactly what the reference model does. If this fails, replay the printed
     * shrunk sequence: the failing step names the call and the field that diverged.
     */
    @Test
    @DisplayName("R8.1 random sequences of the store's calls over two clients match the reference model")
    default void r8_1_sequencesMatchTheReferenceModel() {
        Store[] clients = {client(), client()};
        sequences(Rule.R8_1, clients, declaredOps(clients[0]), Purpose.MODEL, 1, MAX_STEPS, tries());
    }

    /**
     * R8.2 (real time) Random sequences of claims with short and long ttls, releases with live, stale,
     * expired and wrong tokens, deletes and waits: a claim holds its permit until its ttl and frees it after,
     * as the reference claim table says. If this fails, check that claimTrial never counts an expired claim,
     * for every permits value.
     */
    @Test
    @DisplayName("R8.2 (real time) random claims with short ttls, releases and waits match the reference claim table")
    default void r8_2_claimsExpireAsTheModelSays() {
        Store[] clients = {client(), client()};
        claims(clients[0]);
        sequences(Rule.R8_2, clients, EnumSet.of(Call.Op.CLAIM, Call.Op.RELEASE, Call.Op.DELETE, Call.Op.GET),
                Purpose.EXPIRY, 4, MAX_EXPIRY_STEPS, Math.max(1, tries() / 5));
    }

    /**
     * R8.3 Small concurrent scenarios over two clients are linearizable: some sequential order of the
     * reference model that respects real-time order explains every result and the state read afterwards. If
     * this fails, the printed history shows which calls overlapped and why no order explains them.
     */
    @Test
    @DisplayName("R8.3 concurrent scenarios over two clients are linearizable against the reference model")
    default void r8_3_concurrentScenariosAreLinearizable() {
        concurrentScenarios(Rule.R8_3, new Store[] {client(), client()}, Purpose.CONCURRENT, false);
    }

    /**
     * R8.4 Random sequences as in R8.1 with each client's clock skewed by up to 10 s either way return and store
     * exactly what the reference model does. If this fails, replay the printed shrunk sequence: some now in it is
     * below a time the store holds.
     */
    @Test
    @DisplayName("R8.4 random sequences over two clients with skewed clocks match the reference model")
    default void r8_4_sequencesUnderClockSkewMatchTheReferenceModel() {
        Store[] clients = {client(), client()};
        sequences(Rule.R8_4, clients, declaredOps(clients[0]), Purpose.MODEL, 1, MAX_STEPS, tries());
    }

    /**
     * R8.5 Small concurrent scenarios weighted to claims are linearizable including the claim table read back
     * after them. If this fails, the printed history shows the calls and the claim table read back.
     */
    @Test
    @DisplayName("R8.5 concurrent scenarios of claims are linearizable, the claim table read back included")
    default void r8_5_concurrentClaimsAreLinearizableWithTheClaimTable() {
        Store[] clients = {client(), client()};
        claims(clients[0]);
        concurrentScenarios(Rule.R8_5, clients, Purpose.CONCURRENT_CLAIMS, true);
    }

    /**
     * R14.1 Random sequences as in R8.1 with batches of outcomes in place of most outcomes (1 to 200 outcomes each,
     * at their own instants, across openings and modes): every batch returns and stores what its outcomes one by
     * one give. If this fails, replay the printed shrunk sequence: the batch in it names its outcomes.
     */
    @Test
    @DisplayName("R14.1 random sequences with batches of outcomes match the outcomes one by one")
    default void r14_1_batchesMatchTheirOutcomesOneByOne() {
        Store[] clients = {client(), client()};
        TckSupport.need(clients[0], dev.redeye.spi.OutcomeBatches.class);
        TckSupport.updates(clients[0]);
        sequences(Rule.R14_1, clients, declaredOps(clients[0]), Purpose.MODEL, 1, MAX_STEPS, tries());
    }

    /** Runs {@link #tries()} concurrent scenarios of {@code rule} and fails with the first one no order explains. */
    private void concurrentScenarios(Rule rule, Store[] clients, Purpose purpose, boolean readClaims) {
        Set<Call.Op> ops = declaredOps(clients[0]);
        int n = tries();
        try (ConcurrencyRunner runner = new ConcurrencyRunner(clients, THREADS, readClaims)) {
            for (int i = 0; i < n; i++) {
                ScenarioGenerator gen = generator(seed(), rule, i, ops, purpose);
                Scenario prefix = gen.scenario(0, MAX_PREFIX_STEPS);
                long end = prefix.steps().isEmpty() ? 0 : prefix.steps().get(prefix.steps().size() - 1).at();
                List<List<Step>> threads = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    List<Step> program = new ArrayList<>();
                    long at = end;
                    for (int c = 0; c < CALLS_PER_THREAD; c++) {
                        Step s = gen.step(prefix.keys(), at);
                        program.add(s);
                        at = s.at();
                    }
                    threads.add(program);
                }
                String failure = runner.run(new Concurrent(prefix, threads), runPrefix());
                if (failure != null) {
                    fail("scenario " + (i + 1) + " of " + n + ", seed " + seed() + " (" + TckRunner.SEED_PARAMETER
                            + "=" + seed() + " draws it again; concurrent results are not shrunk: the history is "
                            + "the counterexample):\n" + failure);
                }
            }
        }
    }

    /**
     * Runs {@code n} random sequences of {@code rule} and fails with the first divergence, shrunk against
     * the store.
     */
    private void sequences(Rule rule, Store[] clients, Set<Call.Op> ops, Purpose purpose, int minSteps,
            int maxSteps, int n) {
        SequenceRunner runner = new SequenceRunner(clients);
        for (int i = 0; i < n; i++) {
            ScenarioGenerator gen = generator(seed(), rule, i, ops, purpose);
            Scenario sc = rule == Rule.R8_4 ? gen.skewedScenario(minSteps, maxSteps) : gen.scenario(minSteps, maxSteps);
            SequenceRunner.Run run = runner.run(sc, runPrefix());
            if (run.failed()) {
                fail(shrunk(run, runner, i, n));
            }
        }
    }

    /** The calls the store offers: put, get and delete, and those of every capability it declares. */
    static Set<Call.Op> declaredOps(Store s) {
        Set<Call.Op> ops = EnumSet.noneOf(Call.Op.class);
        for (Call.Op op : Call.Op.values()) {
            if (op != Call.Op.CLAIM_TABLE && (op.capability == null || s.capability(op.capability).isPresent())) {
                ops.add(op);
            }
        }
        return ops;
    }

    /**
     * The generator of scenario {@code i} of {@code rule}: a pure function of the seed, rule and index, over three
     * sources (see {@link ScenarioGenerator}): the first TCK v3 source, the strategy choice, and the sliding-window,
     * slow-call and mode additions, each from its own mix of the seed so that a source added later leaves the draws
     * of the earlier ones as they were.
     */
    static ScenarioGenerator generator(long seed, Rule rule, int i, Set<Call.Op> ops, Purpose purpose) {
        long n = stream(rule);
        return new ScenarioGenerator(new SplittableRandom(seed * 0x9E3779B97F4A7C15L + n * 1_000_003L + i),
                new SplittableRandom(~(seed * 0xBF58476D1CE4E5B9L + n * 1_000_003L + i)),
                new SplittableRandom(seed * 0xD1B54A32D192ED03L + 0x632BE59BD9B4E019L + n * 1_000_033L + i),
                new SplittableRandom(~(seed * 0x94D049BB133111EBL) + n * 1_000_037L + i),
                rule == Rule.R14_1 ? BATCH_SHARE_R14 : BATCH_SHARE, ops, purpose);
    }

    /** In percent, the drawn outcomes that become batches in R8 (for a store with OutcomeBatches). */
    int BATCH_SHARE = 15;
    /** In percent, the drawn outcomes that become batches in R14.1. */
    int BATCH_SHARE_R14 = 60;

    /**
     * The fixed stream number of a model rule's scenarios, so that a seed draws the same scenarios of a rule
     * whatever rules are added to the enum before it: R8.1 to R8.3 keep the numbers they were first drawn with
     * (their places among the rules then).
     */
    private static long stream(Rule rule) {
        switch (rule) {
            case R8_1:
                return 65;
            case R8_2:
                return 66;
            case R8_3:
                return 67;
            case R8_4:
                return 68;
            case R8_5:
                return 69;
            case R14_1:
                return 70;
            default:
                throw new IllegalArgumentException(rule.id() + " draws no scenarios");
        }
    }

    /** A key prefix no earlier run of this test used. */
    private String runPrefix() {
        return key("m" + modelRuns().incrementAndGet() + "/");
    }

    /** Shrinks a failing run against the store and describes the result with how to run it again. */
    private String shrunk(SequenceRunner.Run failing, SequenceRunner runner, int i, int n) {
        Shrinker shrinker = new Shrinker(sc -> runner.run(sc, runPrefix()), MAX_SHRINK_RUNS, SHRINK_BUDGET_NANOS);
        SequenceRunner.Run small = shrinker.shrink(failing);
        return "the store diverged from the reference model; shrunk to " + small.length()
                + (small.length() == 1 ? " step" : " steps") + " (from step "
                + failing.length() + " of " + failing.scenario.steps().size() + " generated, " + shrinker.runs()
                + " shrinking runs" + (shrinker.exhausted() ? ", shrinking budget spent" : "") + "); sequence "
                + (i + 1) + " of " + n + ", seed " + seed() + " (" + TckRunner.SEED_PARAMETER + "=" + seed()
                + " or redeye tck --seed " + seed() + " runs it again)\n" + small.replay();
    }
}

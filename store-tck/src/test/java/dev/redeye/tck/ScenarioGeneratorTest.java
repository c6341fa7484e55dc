package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.tck.Scenario.Kind;
import dev.redeye.tck.Scenario.Step;
import dev.redeye.tck.ScenarioGenerator.Purpose;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The model rules' generator draws sliding windows, slow calls and modes from a source of their own: a seed's
 * scenarios keep every step's client, key, time and argument, and every policy's other options, as they were drawn
 * before those were added; and the additions are drawn often enough to matter.
 */
class ScenarioGeneratorTest {
    private static final Set<Call.Op> ADDED = EnumSet.of(Call.Op.SLOW_OUTCOME, Call.Op.SLOW_CALL,
            Call.Op.SLOW_CALL_FAILED, Call.Op.FORCE_MODE, Call.Op.RECORD_BATCH);

    /** Every call but the claim-table read-back: a store declaring every capability. */
    private static Set<Call.Op> every() {
        Set<Call.Op> ops = EnumSet.allOf(Call.Op.class);
        ops.remove(Call.Op.CLAIM_TABLE);
        return ops;
    }

    @Test
    void theAdditionsLeaveTheEarlierDrawsAsTheyWere() {
        Set<Call.Op> before = every();
        before.removeAll(ADDED); // what the generator was given before the additions existed
        Map<Kind, Integer> added = new EnumMap<>(Kind.class);
        int windows = 0;
        int modes = 0;
        for (Rule rule : List.of(Rule.R8_1, Rule.R8_3, Rule.R8_4)) {
            for (int i = 0; i < TckRunner.DEFAULT_TRIES; i++) {
                Scenario old = ModelRules.generator(TckRunner.DEFAULT_SEED, rule, i, before, Purpose.MODEL)
                        .scenario(1, TckSupport.MAX_STEPS);
                Scenario now = ModelRules.generator(TckRunner.DEFAULT_SEED, rule, i, every(), Purpose.MODEL)
                        .scenario(1, TckSupport.MAX_STEPS);
                assertEquals(old.steps().size(), now.steps().size(), "steps of scenario " + i + " of " + rule.id());
                for (int k = 0; k < old.keys().size(); k++) {
                    Policy o = old.keys().get(k).policy();
                    Policy n = now.keys().get(k).policy();
                    assertEquals(old.keys().get(k).name(), now.keys().get(k).name());
                    if (n.strategy() == Strategy.SLIDING_WINDOW) {
                        windows++;
                    }
                    if (n.mode() != BreakerMode.NORMAL) {
                        modes++;
                    }
                    Policy unwindowed = n.toBuilder().slidingWindow(o.slidingWindowType(), o.slidingWindowSize())
                            .strategy(o.strategy()).mode(o.mode())
                            .failureRateThreshold(o.failureRateThreshold())
                            .slowCallRateThreshold(o.slowCallRateThreshold())
                            .minimumNumberOfCalls(o.minimumNumberOfCalls()).build();
                    assertEquals(o, unwindowed, "the policy of key " + k + " but for its window and mode");
                }
                for (int s = 0; s < old.steps().size(); s++) {
                    Step o = old.steps().get(s);
                    Step n = now.steps().get(s);
                    String where = rule.id() + " scenario " + i + " step " + s;
                    assertEquals(List.of(o.client(), o.key(), o.at()), List.of(n.client(), n.key(), n.at()), where);
                    if (n.kind() == o.kind()) {
                        assertEquals(o.arg(), n.arg(), where);
                    } else {
                        added.merge(n.kind(), 1, Integer::sum);
                        assertTrue(n.kind().op != null && ADDED.contains(n.kind().op), where + ": " + o + " became "
                                + n);
                    }
                }
            }
        }
        assertTrue(windows >= 100 && modes >= 50, "window policies " + windows + ", modes " + modes);
        for (Kind k : List.of(Kind.RECORD_SLOW, Kind.SLOW_CALL, Kind.SLOW_CALL_FAILED, Kind.FORCE_MODE,
                Kind.RECORD_BATCH)) {
            assertTrue(added.getOrDefault(k, 0) >= 50, k + " drawn " + added.getOrDefault(k, 0) + " times: " + added);
        }
    }

    /**
     * Batches come from a source of their own: a store that declares them gets the scenarios of one that does not,
     * step for step and policy for policy, but for some outcomes (plain or slow) drawn as batches instead; and R14.1
     * draws a batch in place of most outcomes.
     */
    @Test
    void batchesLeaveEveryOtherDrawAsItWas() {
        Set<Call.Op> without = every();
        without.remove(Call.Op.RECORD_BATCH);
        Set<Kind> outcomes = EnumSet.of(Kind.RECORD_FAILURE, Kind.RECORD_SUCCESS, Kind.RECORD_OUTCOME, Kind.RECORD_SLOW);
        Map<Rule, int[]> share = new EnumMap<>(Rule.class);
        for (Rule rule : List.of(Rule.R8_1, Rule.R8_3, Rule.R8_4, Rule.R14_1)) {
            int[] counts = share.computeIfAbsent(rule, r -> new int[2]);
            for (int i = 0; i < TckRunner.DEFAULT_TRIES; i++) {
                Scenario old = ModelRules.generator(TckRunner.DEFAULT_SEED, rule, i, without, Purpose.MODEL)
                        .scenario(1, TckSupport.MAX_STEPS);
                Scenario now = ModelRules.generator(TckRunner.DEFAULT_SEED, rule, i, every(), Purpose.MODEL)
                        .scenario(1, TckSupport.MAX_STEPS);
                assertEquals(old.keys(), now.keys(), rule.id() + " scenario " + i);
                assertEquals(old.steps().size(), now.steps().size());
                for (int s = 0; s < old.steps().size(); s++) {
                    Step o = old.steps().get(s);
                    Step n = now.steps().get(s);
                    if (n.kind() == Kind.RECORD_BATCH) {
                        assertTrue(outcomes.contains(o.kind()), o + " became a batch");
                        assertEquals(o.client(), n.client());
                        assertEquals(List.of(o.key(), o.at()), List.of(n.key(), n.at()));
                        counts[0]++;
                    } else {
                        assertEquals(o, n, rule.id() + " scenario " + i + " step " + s);
                    }
                    counts[1] += outcomes.contains(o.kind()) ? 1 : 0;
                }
            }
        }
        for (Map.Entry<Rule, int[]> e : share.entrySet()) {
            double drawn = 100.0 * e.getValue()[0] / e.getValue()[1];
            double expected = e.getKey() == Rule.R14_1 ? ModelRules.BATCH_SHARE_R14 : ModelRules.BATCH_SHARE;
            assertTrue(Math.abs(drawn - expected) < 5, e.getKey().id() + ": " + drawn + "% of outcomes are batches");
        }
    }

    @Test
    void batchStepsGiveOutcomesInOrderEndingAtTheStepsTime() {
        long now = TckSupport.T0 + 5_000;
        assertEquals(List.of(dev.redeye.spi.AtomicOperation.packOutcome(true, false, now)), StepResolver.batchOf(0, now),
                "arg 0: one success, the simplest");
        int large = 0;
        for (int arg = 1; arg < 2_000; arg++) {
            List<Long> b = StepResolver.batchOf(arg, now);
            assertTrue(!b.isEmpty() && b.size() <= 200, "arg " + arg + ": " + b.size());
            large += b.size() > 12 ? 1 : 0;
            assertEquals(now, b.get(b.size() - 1) >> 2, "the last outcome is at the step's time");
            assertEquals(b, StepResolver.batchOf(arg, now), "a pure function of the arg");
            for (long o : b) {
                assertTrue((o >> 2) >= now - 2_000 && (o >> 2) <= now + 1_000, "arg " + arg);
            }
        }
        assertTrue(large > 100, "some batches are large: " + large);
    }

    @Test
    void windowPoliciesAreSmallAndOfBothTypes() {
        Set<SlidingWindowType> types = EnumSet.noneOf(SlidingWindowType.class);
        for (int i = 0; i < TckRunner.DEFAULT_TRIES; i++) {
            for (Scenario.KeySpec k : ModelRules.generator(TckRunner.DEFAULT_SEED, Rule.R8_1, i, every(),
                    Purpose.MODEL).keys()) {
                Policy p = k.policy();
                if (p.strategy() == Strategy.SLIDING_WINDOW) {
                    types.add(p.slidingWindowType());
                    assertTrue(p.slidingWindowSize() <= 6, "a small window: " + p);
                    assertTrue(ScenarioGenerator.java(p).contains(".slidingWindow(SlidingWindowType."), "the replay "
                            + "names the window: " + ScenarioGenerator.java(p));
                }
            }
        }
        assertEquals(EnumSet.allOf(SlidingWindowType.class), types);
    }
}

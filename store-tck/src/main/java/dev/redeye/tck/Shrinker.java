package dev.redeye.tck;

import dev.redeye.tck.Scenario.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Shrinks a failing scenario of a model rule to a short one that still fails the same way, by running
 * candidates against the store: first whole runs of steps are removed (halves, quarters, ... single steps;
 * the remaining steps keep their virtual times, so the gaps between them stay what they were), then virtual
 * time is compressed (gaps closed or halved), then each step is simplified (client a, the first key, the
 * simplest choice), then clock skews are removed or halved. Each pass repeats until nothing shrinks or the
 * budget (runs, wall time) is spent; the shortest failing run found is kept. Scenario steps are relative to
 * the model, so every candidate is a valid scenario.
 */
final class Shrinker {
    private final Function<Scenario, SequenceRunner.Run> runner;
    private final int maxRuns;
    private final long deadlineNanos;
    private int runs;

    /**
     * @param runner     runs a candidate on fresh keys
     * @param maxRuns    the most candidates to run
     * @param budgetNanos the most wall time to spend
     */
    Shrinker(Function<Scenario, SequenceRunner.Run> runner, int maxRuns, long budgetNanos) {
        this.runner = runner;
        this.maxRuns = maxRuns;
        this.deadlineNanos = System.nanoTime() + budgetNanos;
    }

    /** How many candidates were run. */
    int runs() {
        return runs;
    }

    /** Whether the budget ran out before shrinking finished. */
    boolean exhausted() {
        return runs >= maxRuns || System.nanoTime() - deadlineNanos > 0;
    }

    /** The smallest failing run found, starting from {@code failing} (which failed). */
    SequenceRunner.Run shrink(SequenceRunner.Run failing) {
        SequenceRunner.Run best = truncate(failing);
        boolean progress = true;
        while (progress && !exhausted()) {
            progress = false;
            SequenceRunner.Run r = removeChunks(best);
            progress |= r != best;
            best = r;
            r = compressTime(best);
            progress |= r != best;
            best = r;
            r = simplifySteps(best);
            progress |= r != best;
            best = r;
            r = simplifySkews(best);
            progress |= r != best;
            best = r;
        }
        return best;
    }

    /** Clock skews (R8.4): each set to zero, else halved, while the run still fails the same way. */
    private SequenceRunner.Run simplifySkews(SequenceRunner.Run best) {
        for (int c = 0; c < best.scenario.skews().size() && !exhausted(); c++) {
            long skew = best.scenario.skew(c);
            for (long smaller : new long[] {0, skew / 2}) {
                if (skew == 0 || (smaller != 0 && Math.abs(skew) < 4)) {
                    continue;
                }
                List<Long> cand = new ArrayList<>(best.scenario.skews());
                cand.set(c, smaller);
                SequenceRunner.Run r = attempt(best.scenario.withSkews(cand), best);
                if (r != null) {
                    best = r;
                    break;
                }
            }
        }
        return best;
    }

    /** Steps after the failing one cannot matter: drop them first (no run needed). */
    private static SequenceRunner.Run truncate(SequenceRunner.Run r) {
        if (r.failedStep + 1 == r.scenario.steps().size()) {
            return r;
        }
        SequenceRunner.Run t = new SequenceRunner.Run(r.scenario.withSteps(r.scenario.steps().subList(0,
                r.failedStep + 1)));
        t.lines.addAll(r.lines);
        t.tokenVars.putAll(r.tokenVars);
        t.failedStep = r.failedStep;
        t.mismatch = r.mismatch;
        t.expected = r.expected;
        t.failedRead = r.failedRead;
        t.threw = r.threw;
        return t;
    }

    /** Runs a candidate; the run if it fails the same way as {@code than} and is no longer, else null. */
    private SequenceRunner.Run attempt(Scenario candidate, SequenceRunner.Run than) {
        if (exhausted() || candidate.steps().isEmpty()) {
            return null;
        }
        runs++;
        SequenceRunner.Run r = runner.apply(candidate);
        return than.sameNature(r) && r.length() <= than.length() ? truncate(r) : null;
    }

    private SequenceRunner.Run removeChunks(SequenceRunner.Run best) {
        for (int size = Math.max(1, best.scenario.steps().size() / 2); size >= 1 && !exhausted(); size /= 2) {
            int start = 0;
            while (start < best.scenario.steps().size() && !exhausted()) {
                List<Step> steps = best.scenario.steps();
                if (steps.size() <= 1) {
                    return best;
                }
                List<Step> cand = new ArrayList<>(steps.subList(0, start));
                cand.addAll(steps.subList(Math.min(steps.size(), start + size), steps.size()));
                SequenceRunner.Run r = attempt(best.scenario.withSteps(cand), best);
                if (r != null) {
                    best = r; // retry the same position: the next chunk moved into it
                } else {
                    start += size;
                }
            }
        }
        return best;
    }

    private SequenceRunner.Run compressTime(SequenceRunner.Run best) {
        for (int i = 0; i < best.scenario.steps().size() && !exhausted(); i++) {
            List<Step> steps = best.scenario.steps();
            long before = i == 0 ? 0 : steps.get(i - 1).at();
            long gap = steps.get(i).at() - before;
            for (long smaller : new long[] {0, gap / 2}) {
                if (smaller >= gap || (smaller == gap / 2 && gap < 4)) {
                    continue;
                }
                List<Step> cand = new ArrayList<>();
                for (int j = 0; j < steps.size(); j++) {
                    Step s = steps.get(j);
                    cand.add(j < i ? s : s.withAt(s.at() - (gap - smaller)));
                }
                SequenceRunner.Run r = attempt(best.scenario.withSteps(cand), best);
                if (r != null) {
                    best = r;
                    break;
                }
            }
        }
        return best;
    }

    private SequenceRunner.Run simplifySteps(SequenceRunner.Run best) {
        for (int i = 0; i < best.scenario.steps().size() && !exhausted(); i++) {
            for (int variant = 0; variant < 4 && i < best.scenario.steps().size(); variant++) {
                Step s = best.scenario.steps().get(i);
                Step simpler;
                switch (variant) {
                    case 0:
                        simpler = s.client() == 0 ? null : s.withClient(0);
                        break;
                    case 1:
                        simpler = s.key() == 0 ? null : s.withKey(0);
                        break;
                    case 2:
                        simpler = s.arg() == 0 ? null : s.withArg(0);
                        break;
                    default:
                        simpler = s.arg() < 2 ? null : s.withArg(s.arg() / 2);
                }
                if (simpler == null) {
                    continue;
                }
                List<Step> cand = new ArrayList<>(best.scenario.steps());
                cand.set(i, simpler);
                SequenceRunner.Run r = attempt(best.scenario.withSteps(cand), best);
                if (r != null) {
                    best = r;
                }
            }
        }
        return best;
    }
}

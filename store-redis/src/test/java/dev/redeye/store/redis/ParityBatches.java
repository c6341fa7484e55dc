package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;

/**
 * Batches of outcomes ({@link AtomicOperation#outcomes}) for the parity tests of the Lua library's outcomes
 * function, and what a run of them covered: batches whose outcomes' own instants matter (folded all at the last
 * instant they give another change) and batches whose outcomes after the first transition change the state (a
 * fold that stopped at the first transition, or reported the last outcome's, would give another change). A run
 * that covered neither could not tell such a fold from the right one.
 */
final class ParityBatches {
    private ParityBatches() {
    }

    /**
     * A random batch ending at {@code now}: 1 to 12 outcomes, up to 200 for one batch in eight and
     * {@value AtomicOperation#MAX_BATCH} for one in sixty; a share of failures drawn per batch (none, some, or all,
     * so that a batch opens and goes on counting), a quarter slow; instants a few ms apart going back from
     * {@code now}, sometimes equal, sometimes a step back (a clock stepped back), sometimes a second or more apart
     * (a time window's bucket edge, a gap between failures, within one batch).
     *
     * @param instance the instance they are attributed to, or null
     */
    static AtomicOperation random(Random r, long now, String instance) {
        int n = r.nextInt(60) == 0 ? AtomicOperation.MAX_BATCH
                : 1 + (r.nextInt(8) == 0 ? r.nextInt(200) : r.nextInt(12));
        int failurePercent = new int[] {0, 20, 34, 50, 80, 100}[r.nextInt(6)];
        long[] at = new long[n];
        long t = now;
        for (int i = n - 1; i >= 0; i--) {
            at[i] = t;
            int c = r.nextInt(20);
            t -= c < 6 ? 0 : c < 17 ? r.nextInt(30) : c < 19 ? -r.nextInt(5) : 300 + r.nextInt(1_500);
        }
        long[] packed = new long[n];
        for (int i = 0; i < n; i++) {
            packed[i] = AtomicOperation.packOutcome(r.nextInt(100) >= failurePercent, r.nextInt(4) == 0, at[i]);
        }
        return AtomicOperation.outcomes(packed, n, instance);
    }

    /** The outcomes of {@code batch}, all at its last outcome's instant. */
    static AtomicOperation atLastInstant(AtomicOperation batch) {
        int n = batch.outcomeCount();
        long last = batch.outcomeAt(n - 1);
        long[] packed = new long[n];
        for (int i = 0; i < n; i++) {
            packed[i] = AtomicOperation.packOutcome(batch.outcomeSucceeded(i), batch.outcomeSlow(i), last);
        }
        return AtomicOperation.outcomes(packed, n, batch.instance());
    }

    /**
     * The state right after the outcome of {@code batch} that made its first transition, folding from
     * {@code previous} as {@code AtomicOperation.apply} does; null when it made none.
     */
    static BreakerState afterFirstTransition(AtomicOperation batch, BreakerState previous, Policy policy) {
        BreakerState s = previous;
        for (int i = 0; i < batch.outcomeCount(); i++) {
            long[] one = {AtomicOperation.packOutcome(batch.outcomeSucceeded(i), batch.outcomeSlow(i),
                    batch.outcomeAt(i))};
            StateChange c = AtomicOperation.outcomes(one, 1, batch.instance()).apply(s, policy, 0);
            s = c.state();
            if (c.transition() != null) {
                return s;
            }
        }
        return null;
    }

    /** What the batches of one run covered. */
    static final class Coverage {
        private int batches;
        private int instantsMatter;
        private int afterTransition;

        /** Counts {@code batch}, applied under {@code policy} with the change {@code got}. */
        void count(AtomicOperation batch, StateChange got, Policy policy) {
            batches++;
            if (!atLastInstant(batch).apply(got.previous(), policy, 0).equals(got)) {
                instantsMatter++;
            }
            BreakerState after = afterFirstTransition(batch, got.previous(), policy);
            if (after != null && !after.equals(got.state())) {
                afterTransition++;
            }
        }

        /** Fails unless the run held batches of both kinds. */
        void assertCovered(String what) {
            String counts = what + ": " + batches + " batches, " + instantsMatter + " where the instants matter, "
                    + afterTransition + " changed after their first transition";
            assertTrue(instantsMatter > 0, "no batch whose outcomes' instants matter; " + counts);
            assertTrue(afterTransition > 0, "no batch whose outcomes after its first transition changed the state; "
                    + counts);
        }
    }
}

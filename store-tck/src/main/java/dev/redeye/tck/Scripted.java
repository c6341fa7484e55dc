package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.startOf;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A scripted sequence of atomic calls on one key over two clients, each result checked against
 * {@link Transitions} applied to the prior state, and the state stored read back by the other client: the rules
 * of sliding windows, slow calls and modes (R10 to R12) are listed sequences run through it. The expected
 * results are computed by calling {@code Transitions} directly, never through {@code AtomicOperation.apply}, which
 * the stores under test dispatch through: an oracle sharing that mapping would agree with a wrong one. Not
 * thread-safe; one per key.
 */
final class Scripted {
    private final Store[] clients;
    private final String key;
    private final String title;
    private BreakerState model; // null until the first write: the key starts from the store's initial(v)
    private int calls;
    private final Map<TransitionKind, Integer> transitions = new EnumMap<>(TransitionKind.class);

    /**
     * @param clients the two clients the calls alternate between (call 1 on the first)
     * @param key     the key
     * @param title   what the script is, for messages ("count window of 5, threshold 50 %, minimum 4")
     */
    Scripted(Store[] clients, String key, String title) {
        this.clients = clients.clone();
        this.key = key;
        this.title = title;
    }

    /** The state the model says the key holds ({@code null} before anything was written). */
    BreakerState model() {
        return model;
    }

    /** How many calls of this script reported a transition of {@code kind}. */
    int count(TransitionKind kind) {
        return transitions.getOrDefault(kind, 0);
    }

    /**
     * Plays outcomes at {@code T0 + at[i]} ({@code at == null}: {@code T0 + 10 * i}): {@code S} success,
     * {@code F} failure, {@code s} slow success, {@code f} slow failure; returns the call (1-based, counted within
     * this play) that reported {@code OPENED}, or 0 if none did.
     */
    int play(Policy p, String outcomes, long... at) {
        int opened = 0;
        for (int i = 0; i < outcomes.length(); i++) {
            char o = outcomes.charAt(i);
            boolean success = o == 'S' || o == 's';
            boolean slow = o == 's' || o == 'f';
            long now = T0 + (at.length == 0 ? 10L * i : at[i]);
            AtomicOperation op = slow ? AtomicOperation.outcome(success, true)
                    : calls % 2 == 0 ? AtomicOperation.outcome(success)
                    : success ? AtomicOperation.success() : AtomicOperation.failure();
            String what = "outcome " + (i + 1) + " ('" + o + "') of " + outcomes + " at now = T0 + " + (now - T0);
            StateChange c = step(op, p, now, what, prev -> Transitions.recordOutcome(prev, success, slow, p, now));
            if (c.transition() == TransitionKind.OPENED && opened == 0) {
                opened = i + 1;
            }
        }
        return opened;
    }

    /**
     * One atomic call, checked against {@code expected} applied to the prior state.
     *
     * @return what the store returned
     */
    StateChange step(AtomicOperation op, Policy p, long now, String what,
            Function<BreakerState, StateChange> expected) {
        Store c = clients[calls % 2];
        Store other = clients[(calls + 1) % 2];
        calls++;
        String where = title + ", call " + calls + ": " + what + " from "
                + (model == null ? "a key never written" : States.brief(model));
        StateChange actual = updates(c).apply(key, op, p, now);
        BreakerState from = model != null ? model : startOf(actual, where);
        StateChange exp = expected.apply(from);
        String diff = States.diff(exp, actual);
        if (diff != null) {
            fail(where + ": the store returned " + diff + " (as Transitions says: " + exp.transition() + ", "
                    + States.brief(exp.state()) + ")");
        }
        if (actual.transition() != null) {
            transitions.merge(actual.transition(), 1, Integer::sum);
        }
        Optional<BreakerState> stored = other.get(key);
        if (model == null && !exp.changed()) {
            assertEquals(Optional.empty(), stored, where + ": a call that changes nothing must not create the key");
            return actual;
        }
        model = exp.state();
        assertSameState(model, stored.orElseThrow(() -> new AssertionError(where + ": nothing stored")),
                where + ": the stored state read by the other client");
        return actual;
    }

    /** {@link AtomicOperation#slowCall()}, checked against {@link Transitions#slowCall}. */
    StateChange slowCall(Policy p, long now) {
        return step(AtomicOperation.slowCall(), p, now, "slow_call at now = T0 + " + (now - T0),
                prev -> Transitions.slowCall(prev, p, now));
    }

    /** {@link AtomicOperation#slowCallFailed}, checked against {@link Transitions#slowCallFailed}. */
    StateChange slowCallFailed(long slot, long version, Policy p, long now) {
        return step(AtomicOperation.slowCallFailed(slot, version), p, now, "slow_call_failed(slot " + slot
                + ", version " + version + ") at now = T0 + " + (now - T0),
                prev -> Transitions.slowCallFailed(prev, slot, version, p, now));
    }

    /** {@link AtomicOperation#forceMode}, checked against {@link Transitions#forceMode}. */
    StateChange forceMode(BreakerMode mode, Policy p, long now) {
        return step(AtomicOperation.forceMode(mode), p, now, "force_mode(" + mode + ")",
                prev -> Transitions.forceMode(prev, mode, p, now));
    }

    /** {@link AtomicOperation#force}, checked against {@link Transitions#force}. */
    StateChange force(BreakerStatus target, Policy p, long now) {
        return step(AtomicOperation.force(target), p, now, "force(" + target + ")",
                prev -> Transitions.force(prev, target, p, now));
    }

    /** {@link AtomicOperation#trialSucceeded}, checked against {@link Transitions#trialSucceeded}. */
    StateChange trialSucceeded(long version, Policy p, long now) {
        return step(AtomicOperation.trialSucceeded(version), p, now, "trialSucceeded(" + version + ")",
                prev -> Transitions.trialSucceeded(prev, version, p, now));
    }

    /** Fails unless {@code opened} (from {@link #play}) is {@code expected}, naming the rate arithmetic. */
    static void assertOpensAt(int expected, int opened, String script, String why) {
        if (opened != expected) {
            fail(script + ": the breaker must open exactly at outcome " + expected + " (" + why + "), but "
                    + (opened == 0 ? "it never opened" : "it opened at outcome " + opened));
        }
    }

    /** Fails unless the stored window holds exactly these counts. */
    static void assertCounts(BreakerState s, int calls, int failures, int slow, String what) {
        assertTrue(s.window() != null, what + ": the state holds no window: " + s);
        assertEquals(calls + " calls, " + failures + " failures, " + slow + " slow", s.window().calls() + " calls, "
                + s.window().failures() + " failures, " + s.window().slowCalls() + " slow", what + " (window "
                + s.window().encode() + ")");
    }
}

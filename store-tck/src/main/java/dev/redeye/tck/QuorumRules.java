package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.need;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R13 (AtomicUpdates and QuorumState, quorum opening): outcomes attributed to instances are counted per
 * instance, one instance alone never opens the fleet, the opening comes with the failure that makes the quorum,
 * a state holds at most 16 instances (the most recent), contributions survive every write and read, and the
 * store gives what {@code Transitions} gives. Run by {@link StoreTck}.
 */
interface QuorumRules extends TckContext {
    /** Consecutive, {@code threshold} failures, a quorum of {@code quorum} instances. */
    static Policy quorumOf(int threshold, int quorum) {
        return Policy.builder().failureThreshold(threshold).quorum(quorum).jitter(0.0).build();
    }

    /** {@code instance}'s outcome through {@code client}, at {@code now}. */
    static StateChange outcome(Store client, String key, String instance, boolean success, Policy p, long now) {
        return updates(client).apply(key, AtomicOperation.outcome(success, false, instance), p, now);
    }

    /** Both capabilities the group needs, on the TCK's clients. */
    default Store[] quorumClients() {
        Store[] clients = {client(), client()};
        for (Store c : clients) {
            updates(c);
            need(c, QuorumState.class);
        }
        return clients;
    }

    /**
     * R13.1 Outcomes are counted per instance: with a quorum of 2 (threshold 3), three failures of A through
     * one client open nothing, and B's failure through the other client opens in that write. If this fails, check
     * that the store applies the operation's instance (AtomicOperation.instance()) and keeps the contributions.
     */
    @Test
    @DisplayName("R13.1 outcomes are counted per instance: A alone opens nothing, B's failure makes the quorum")
    default void r13_1_outcomesAreCountedPerInstance() {
        Store[] c = quorumClients();
        String key = key("quorum-two");
        Policy p = quorumOf(3, 2);
        for (int i = 0; i < 3; i++) {
            assertNull(outcome(c[0], key, "A", false, p, T0 + i).transition(), "A's failure " + (i + 1) + " alone");
        }
        StateChange b = outcome(c[1], key, "B", false, p, T0 + 10);
        assertEquals(TransitionKind.OPENED, b.transition(), "B's failure makes the quorum of 2");
        BreakerState read = c[0].get(key).orElseThrow();
        assertTrue(read.open());
        assertEquals(List.of(new Contribution("B", 1, 1, T0 + 10), new Contribution("A", 3, 3, T0 + 2)),
                read.contributors(), "both contributions, the most recent first");
    }

    /**
     * R13.2 One instance failing alone never opens the fleet: 100 failures of A, through both clients, make no
     * transition; the state holds one contribution, A's, with 100 failures. If this fails, check that an instance
     * is counted once (the instance id, not the write, is what is distinct).
     */
    @Test
    @DisplayName("R13.2 one instance failing alone never opens the fleet")
    default void r13_2_oneInstanceAloneNeverOpens() {
        Store[] c = quorumClients();
        String key = key("quorum-alone");
        Policy p = quorumOf(3, 2);
        for (int i = 0; i < 100; i++) {
            assertNull(outcome(c[i % 2], key, "A", false, p, T0 + i).transition(), "failure " + (i + 1) + " of A");
        }
        BreakerState s = c[1].get(key).orElseThrow();
        assertFalse(s.open());
        assertEquals(100, s.failures());
        assertEquals(List.of(new Contribution("A", 100, 100, T0 + 99)), s.contributors());
    }

    /**
     * R13.3 The opening comes with the failure that makes the quorum: with a quorum of 3 (threshold 2), failures of
     * A, B, A, B open nothing, and C's failure opens, version + 1. If this fails, check the quorum count (distinct
     * instances with failures in the scope) and that the strategy's own count goes on below the quorum.
     */
    @Test
    @DisplayName("R13.3 the fleet opens exactly at the failure that makes the quorum")
    default void r13_3_theOpeningIsAtTheQuorumMakingFailure() {
        Store[] c = quorumClients();
        String key = key("quorum-three");
        Policy p = quorumOf(2, 3);
        String[] order = {"A", "B", "A", "B"};
        long version = 0;
        for (int i = 0; i < order.length; i++) {
            StateChange ch = outcome(c[i % 2], key, order[i], false, p, T0 + i);
            assertNull(ch.transition(), "failure of " + order[i] + " (" + (i + 1) + " of " + order.length + ")");
            version = ch.state().version();
        }
        StateChange opening = outcome(c[0], key, "C", false, p, T0 + 10);
        assertEquals(TransitionKind.OPENED, opening.transition(), "C is the third instance");
        assertEquals(version + 1, opening.state().version());
        assertEquals(5, opening.state().failures());
    }

    /**
     * R13.4 A state holds at most 16 instances, the most recent: 20 instances failing once each, one after the
     * other, leave the contributions of the last 16, the newest first. If this fails, check the bound
     * (BreakerState.MAX_CONTRIBUTORS) and which contribution drops out (the least recent).
     */
    @Test
    @DisplayName("R13.4 at most 16 instances are held: the most recent")
    default void r13_4_atMostSixteenInstancesTheMostRecent() {
        Store[] c = quorumClients();
        String key = key("quorum-bound");
        Policy p = quorumOf(1_000, 2);
        for (int i = 0; i < 20; i++) {
            outcome(c[i % 2], key, "i" + i, false, p, T0 + i);
        }
        List<Contribution> held = c[0].get(key).orElseThrow().contributors();
        assertEquals(BreakerState.MAX_CONTRIBUTORS, held.size());
        for (int i = 0; i < BreakerState.MAX_CONTRIBUTORS; i++) {
            assertEquals("i" + (19 - i), held.get(i).instance(), "position " + i);
        }
    }

    /**
     * R13.5 Contributions survive every write and read, and a time window's expire with it: the state a write
     * returns is the state both clients read; contributions older than a 10 s time window are gone from the next
     * write. If this fails, check the layout of the contributions (StateCodec's contributors field or the
     * store's own) on every path: the atomic write, get, put.
     */
    @Test
    @DisplayName("R13.5 contributions survive writes and reads; a time window's expire with the window")
    default void r13_5_contributionsRoundTripAndExpire() {
        Store[] c = quorumClients();
        String key = key("quorum-window");
        Policy p = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 10).failureRateThreshold(50)
                .minimumNumberOfCalls(2).quorum(2).jitter(0.0).build();
        StateChange a = outcome(c[0], key, "A", false, p, T0);
        outcome(c[1], key, "A", false, p, T0 + 1);
        StateChange b = outcome(c[1], key, "B", true, p, T0 + 2);
        for (Store s : c) {
            assertEquals(b.state(), s.get(key).orElseThrow(), "the written state, contributions included");
        }
        assertEquals(List.of("B", "A"), b.state().contributors().stream().map(Contribution::instance).toList());
        assertNull(a.transition());
        StateChange late = outcome(c[0], key, "C", false, p, T0 + 11_000);
        assertEquals(List.of(new Contribution("C", 1, 1, T0 + 11_000)), late.state().contributors(),
                "A's and B's are older than the window");
        c[1].put(key + "-copy", late.state(), p.stateTtl());
        assertEquals(late.state().contributors(), c[0].get(key + "-copy").orElseThrow().contributors(),
                "put and get keep them");
    }

    /**
     * R13.6 Parity: random outcomes of three instances through two clients, under a quorum of 2 (consecutive and
     * time-window policies), give after every write the state {@code Transitions} gives. If this fails, the
     * message names the step: compare the store's rule for that outcome with Transitions.recordOutcome.
     */
    @Test
    @DisplayName("R13.6 random outcomes of three instances: the store gives what Transitions gives")
    default void r13_6_parityWithTheRules() {
        Store[] c = quorumClients();
        Policy[] policies = {quorumOf(3, 2), Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 5)
                .failureRateThreshold(50).minimumNumberOfCalls(3).quorum(2).jitter(0.0).build()};
        Random r = new Random(seed());
        for (int round = 0; round < policies.length * 3; round++) {
            Policy p = policies[round % policies.length];
            String key = key("quorum-parity-" + round);
            BreakerState model = null;
            long now = T0;
            for (int step = 0; step < 40; step++) {
                now += r.nextInt(1_500);
                String instance = "i" + r.nextInt(3);
                boolean success = r.nextInt(3) == 0;
                StateChange expected = Transitions.recordOutcome(model, success, false, p, now, instance);
                StateChange got = outcome(c[step % 2], key, instance, success, p, now);
                String where = "round " + round + ", step " + step + " (" + instance + (success ? " +" : " -")
                        + " at T0+" + (now - T0) + ")";
                assertEquals(expected.transition(), got.transition(), where);
                assertEquals(expected.state().version() - expected.previous().version(),
                        got.state().version() - got.previous().version(), where + ": the version's bump");
                // a key's first version is the store's own base: the rest of the state must be the model's
                assertEquals(expected.state().withVersion(got.state().version()), got.state(), where);
                model = got.state();
                if (model.open()) {
                    break;
                }
            }
        }
    }
}

package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.FORCED_WAIT_MILLIS;
import static dev.redeye.tck.TckSupport.LONG_TTL;
import static dev.redeye.tck.TckSupport.SHORT_STATE_TTL;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.claims;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.token;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rules R5 (AtomicUpdates). Run by {@link StoreTck}. */
interface TransitionRules extends TckContext {
    /** An open, not forced state with counters in every field, as a breaker has after some failed trials. */
    static BreakerState openState(long openedAt, long version) {
        return new BreakerState(6, openedAt - 5, true, openedAt, 1, 0.75, 40, 0, false, version);
    }

    /**
     * R5.1 A trial success with successThreshold = 1 closes and resets every counter, version + 1. If this
     * fails, check that trialSucceeded applies {@code Transitions.closedFrom}.
     */
    @Test
    @DisplayName("R5.1 a trial success with successThreshold 1 closes and resets every counter")
    default void r5_1_trialSuccessCloses() {
        Store a = client();
        Store b = client();
        String k = key("close");
        Policy p = consecutive(5);
        BreakerState open = openState(T0, 3);
        a.put(k, open, STATE_TTL);
        StateChange c = updates(b).apply(k, AtomicOperation.trialSucceeded(open.version()), p, T0 + 70_000);
        BreakerState expected = Transitions.closedFrom(open);
        assertSameState(expected, c.state(), "state after a trial success");
        assertEquals(TransitionKind.CLOSED, c.transition(), "a closing trial success is a transition");
        assertEquals(4, c.state().version(), "version + 1");
        assertSameState(expected, a.get(k).orElseThrow(), "stored state after a trial success");
    }

    /**
     * R5.2 With successThreshold = 3, the first two trial successes raise trialSuccesses with no transition;
     * the third closes. If this fails, check the trialSuccesses counter and the threshold comparison.
     */
    @Test
    @DisplayName("R5.2 with successThreshold 3 two trial successes count, the third closes")
    default void r5_2_successThresholdCounts() {
        Store a = client();
        Store b = client();
        String k = key("three");
        Policy p = Policy.builder().successThreshold(3).jitter(0).build();
        a.put(k, openState(T0, 8), STATE_TTL);
        for (int i = 1; i <= 2; i++) {
            StateChange c = updates(i == 1 ? a : b).apply(k, AtomicOperation.trialSucceeded(8), p, T0 + 70_000 + i);
            assertNull(c.transition(), "trial success " + i + " of 3 is not a transition");
            assertEquals(i, c.state().trialSuccesses(), "trialSuccesses after trial success " + i);
            assertTrue(c.state().open(), "still open after trial success " + i + " of 3");
            assertEquals(8, c.state().version(), "version after trial success " + i + " of 3");
            assertEquals(i, a.get(k).orElseThrow().trialSuccesses(), "stored trialSuccesses");
        }
        StateChange third = updates(a).apply(k, AtomicOperation.trialSucceeded(8), p, T0 + 70_010);
        assertEquals(TransitionKind.CLOSED, third.transition(), "the third trial success closes");
        assertFalse(third.state().open(), "closed after 3 of 3");
        assertEquals(0, third.state().trialSuccesses(), "trialSuccesses reset on close");
        assertEquals(9, b.get(k).orElseThrow().version(), "stored version + 1");
    }

    /**
     * R5.3 A trial failure reopens: openedAt = now, openCount + 1, failures >= failureThreshold, lastFailureAt =
     * now, trialSuccesses = 0, version + 1. If this fails, check every field of trialFailed and the use of now.
     */
    @Test
    @DisplayName("R5.3 a trial failure reopens with openedAt now, openCount + 1, version + 1")
    default void r5_3_trialFailureReopens() {
        Store a = client();
        Store b = client();
        String k = key("reopen");
        Policy p = Policy.builder().failureThreshold(5).successThreshold(3).jitter(0).build();
        BreakerState open = new BreakerState(1, T0 - 5, true, T0, 1, 0.0, 0, 2, false, 12);
        a.put(k, open, STATE_TTL);
        long now = T0 + 120_000;
        StateChange c = updates(b).apply(k, AtomicOperation.trialFailed(12), p, now);
        BreakerState expected = new BreakerState(5, now, true, now, 2, 0.0, 0, 0, false, 13);
        assertSameState(expected, c.state(), "state after a trial failure at now = T0 + 120000");
        assertEquals(TransitionKind.REOPENED, c.transition(), "a trial failure is a transition");
        assertSameState(expected, a.get(k).orElseThrow(), "stored state after a trial failure");
    }

    /**
     * R5.4 openCount grows across consecutive failed trials and returns to 0 when the breaker closes. If this
     * fails, check the openCount increment and its reset (it drives backoff).
     */
    @Test
    @DisplayName("R5.4 openCount grows across failed trials and returns to 0 on close")
    default void r5_4_openCountGrowsAndResets() {
        Store a = client();
        Store b = client();
        String k = key("backoff");
        Policy p = consecutive(2);
        a.put(k, openState(T0, 1).toBuilder().openCount(0).build(), STATE_TTL);
        long now = T0;
        for (int i = 1; i <= 4; i++) {
            now += 60_000L << i;
            StateChange c = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.trialFailed(i), p, now);
            assertEquals(i, c.state().openCount(), "openCount after failed trial " + i);
            assertEquals(now, c.state().openedAt(), "openedAt after failed trial " + i);
            assertEquals(1 + i, c.state().version(), "version after failed trial " + i);
        }
        StateChange closed = updates(a).apply(k, AtomicOperation.trialSucceeded(5), p, now + 1_000_000);
        assertEquals(0, closed.state().openCount(), "openCount after the breaker closed");
        assertEquals(0, b.get(k).orElseThrow().openCount(), "stored openCount after the breaker closed");
    }

    /**
     * R5.5 Forcing OPEN (held, no trials), HALF_OPEN and CLOSED each read back with the forced status and
     * version + 1. If this fails, check the forced flag, the half-open openedAt and the full reset with claim
     * removal on CLOSED.
     */
    @Test
    @DisplayName("R5.5 forcing OPEN, HALF_OPEN and CLOSED reads back with that status and version + 1")
    default void r5_5_forceReadsBack() {
        Store a = client();
        Store b = client();
        String k = key("force");
        Policy p = consecutive(5);
        AtomicUpdates ta = updates(a);
        recordFailures(a, k, p, 2);
        long v = a.get(k).map(BreakerState::version).orElse(0L);

        StateChange open = ta.apply(k, AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, T0 + 100);
        assertEquals(TransitionKind.FORCED_OPEN, open.transition(), "force OPEN is a transition");
        BreakerState s = b.get(k).orElseThrow();
        assertSameState(Transitions.force(open.previous(), BreakerStatus.FORCED_OPEN, p, T0 + 100).state(), s,
                "stored state after force OPEN");
        assertEquals(v + 1, s.version(), "version + 1 after force OPEN");
        assertTrue(s.forced() && s.open(), "force OPEN must be held open (forced)");
        assertEquals(BreakerStatus.FORCED_OPEN, Transitions.status(s, p, T0 + 100 + 365L * 86_400_000, 1.0),
                "a forced-open breaker offers no trials, even a year later");
        StateChange trial = updates(b).apply(k, AtomicOperation.trialSucceeded(s.version()), p, T0 + 200);
        assertFalse(trial.isTransition(), "a trial success must not close a forced-open breaker");
        assertTrue(b.get(k).orElseThrow().forced(), "still forced after a stray trial success");

        StateChange half = updates(b).apply(k, AtomicOperation.force(BreakerStatus.HALF_OPEN), p, T0 + 300);
        assertEquals(TransitionKind.FORCED_HALF_OPEN, half.transition(), "force HALF_OPEN is a transition");
        s = a.get(k).orElseThrow();
        assertEquals(BreakerStatus.HALF_OPEN, Transitions.status(s, p, T0 + 300, 1.0 + p.jitter()),
                "status right after force HALF_OPEN");
        assertFalse(s.forced(), "force HALF_OPEN is not held");
        assertEquals(v + 2, s.version(), "version + 1 after force HALF_OPEN");

        Optional<TrialClaims> claims = a.capability(TrialClaims.class);
        claims.ifPresent(c -> assertTrue(c.claimTrial(k, 1, LONG_TTL).isPresent(), "a half-open trial claim"));
        StateChange closed = ta.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), p, T0 + 400);
        assertEquals(TransitionKind.FORCED_CLOSED, closed.transition(), "force CLOSED is a transition");
        s = b.get(k).orElseThrow();
        assertSameState(Transitions.closedFrom(half.state()), s, "stored state after force CLOSED");
        assertEquals(BreakerStatus.CLOSED, Transitions.status(s, p, T0 + 400, 1.0), "status after force CLOSED");
        assertEquals(v + 3, s.version(), "version + 1 after force CLOSED");
        claims.ifPresent(c -> assertTrue(c.claimTrial(k, 1, LONG_TTL).isPresent(),
                "force CLOSED must remove every trial claim of the key"));

        StateChange again = updates(b).apply(k, AtomicOperation.force(BreakerStatus.CLOSED), p, T0 + 500);
        assertEquals(TransitionKind.FORCED_CLOSED, again.transition(), "forcing an already closed breaker");
        assertEquals(v + 4, a.get(k).orElseThrow().version(), "every force bumps version, even a repeated one");
    }

    private static void recordFailures(Store s, String k, Policy p, int n) {
        Optional<AtomicUpdates> rec = s.capability(AtomicUpdates.class);
        BreakerState st = s.get(k).orElse(BreakerState.INITIAL);
        for (int i = 0; i < n; i++) {
            if (rec.isPresent()) {
                rec.get().apply(k, AtomicOperation.failure(), p, T0 + i);
            } else {
                st = Transitions.recordFailure(st, p, T0 + i).state();
                s.put(k, st, STATE_TTL);
            }
        }
    }

    /**
     * R5.7 (real time) A state forced open through force(), and written again while forced, is still forced
     * after the policy's stateTtl. If this fails, check that atomic operations store a forced state without
     * expiry and apply stateTtl again only once the state is no longer forced.
     */
    @Test
    @DisplayName("R5.7 (real time) a state forced open outlives the policy's stateTtl")
    default void r5_7_forcedOpenOutlivesStateTtl() throws InterruptedException {
        Store a = client();
        Store b = client();
        String k = key("forced-state-ttl");
        Policy p = Policy.builder().failureThreshold(2).resetTimeout(java.time.Duration.ofMillis(100))
                .maxResetTimeout(java.time.Duration.ofMillis(100)).stateTtl(SHORT_STATE_TTL).build();
        StateChange held = updates(a).apply(k, AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, T0);
        assertTrue(held.state().forced(), "force OPEN must hold the breaker open");
        Optional<AtomicUpdates> rec = b.capability(AtomicUpdates.class);
        if (rec.isPresent()) {
            assertTrue(rec.get().apply(k, AtomicOperation.failure(), p, T0 + 1).state().forced(), "a failure while forced keeps it forced");
        }
        Thread.sleep(FORCED_WAIT_MILLIS);
        Optional<BreakerState> read = b.get(k);
        assertTrue(read.isPresent(), "a state forced open was gone " + FORCED_WAIT_MILLIS
                + " ms later (stateTtl " + p.stateTtlMillis() + " ms): the breaker an operator held open closed");
        assertTrue(read.get().forced(), "the state read back is no longer forced: " + read.get());
    }

    /**
     * R5.6 Concurrent trial outcomes from 2 clients are linearizable: version rises by exactly the number of
     * transitions reported, and the results chain into one serial order ending in the stored state. If this
     * fails, trialSucceeded / trialFailed are not atomic.
     */
    @Test
    @DisplayName("R5.6 concurrent trial outcomes from 2 clients are linearizable")
    default void r5_6_concurrentTrialOutcomesAreLinearizable() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("linear");
        Policy p = Policy.builder().failureThreshold(3).successThreshold(2).jitter(0).build();
        BreakerState start = openState(T0, 20);
        clients[0].put(k, start, STATE_TTL);
        ConcurrentLinkedQueue<StateChange> results = new ConcurrentLinkedQueue<>();
        race(8, clients, (t, c) -> {
            AtomicUpdates tr = updates(c);
            for (int i = 0; i < 25; i++) {
                long now = T0 + 1_000 + i;
                long v = c.get(k).orElseThrow().version(); // the period this trial was admitted under
                results.add((i + t) % 3 == 0 ? tr.apply(k, AtomicOperation.trialFailed(v), p, now) : tr.apply(k, AtomicOperation.trialSucceeded(v), p, now));
            }
        });
        BreakerState end = clients[1].get(k).orElseThrow();
        long transitions = results.stream().filter(StateChange::isTransition).count();
        assertEquals(start.version() + transitions, end.version(), "final version must be the start version ("
                + start.version() + ") plus the " + transitions + " transitions reported");
        Set<Long> versions = new HashSet<>();
        for (StateChange c : results) {
            if (c.isTransition() && !versions.add(c.state().version())) {
                fail("two transitions reported the same version " + c.state().version()
                        + " (two calls applied to the same prior state)");
            }
        }
        // Every state-changing result must continue exactly where the previous one left: one serial chain.
        List<StateChange> changing = new ArrayList<>();
        for (StateChange c : results) {
            if (c.changed()) {
                changing.add(c);
            }
        }
        changing.sort(Comparator.comparingLong((StateChange c) -> c.state().version())
                .thenComparingInt(c -> c.state().open() ? c.state().trialSuccesses() : c.state().failures()));
        BreakerState expectedPrev = start;
        for (int i = 0; i < changing.size(); i++) {
            StateChange c = changing.get(i);
            if (!c.previous().equals(expectedPrev)) {
                fail("result " + (i + 1) + " of " + changing.size() + " in serial order started from " + c.previous()
                        + " but the previous result left " + expectedPrev + ": no serial order produces these results");
            }
            // Only the current open period's outcomes change a state (fencing): trialFailed (REOPENED) or
            // trialSucceeded. lastFailureAt carries the now of a failure.
            boolean failure = c.transition() == TransitionKind.REOPENED;
            long v = c.previous().version();
            StateChange replay = failure
                    ? Transitions.trialFailed(c.previous(), v, p, c.state().lastFailureAt())
                    : Transitions.trialSucceeded(c.previous(), v, p, T0);
            assertSameState(replay.state(), c.state(), "result " + (i + 1) + " replayed through Transitions");
            expectedPrev = c.state();
        }
        assertSameState(expectedPrev, end, "stored state must be the end of the serial order");
    }

    /**
     * R5.8 Trial fencing: an outcome carrying the version of an earlier open period is a no-op that returns
     * the current state; a late success never closes a breaker that reopened since. If this fails, check that
     * trial outcomes apply only to the open period they were admitted under.
     */
    @Test
    @DisplayName("R5.8 an outcome of an earlier open period is a no-op: a late success never closes")
    default void r5_8_lateOutcomesAreFencedOut() {
        Store a = client();
        Store b = client();
        String k = key("fenced");
        Policy p = Policy.builder().failureThreshold(3).jitter(0).build();
        a.put(k, openState(T0, 30), STATE_TTL);
        StateChange reopened = updates(b).apply(k, AtomicOperation.trialFailed(30), p, T0 + 70_000);
        assertEquals(TransitionKind.REOPENED, reopened.transition(), "a failing trial of the current period (30)");
        BreakerState current = reopened.state();
        StateChange late = updates(a).apply(k, AtomicOperation.trialSucceeded(30), p, T0 + 70_001);
        assertNull(late.transition(), "a late success of period 30 closed a breaker that reopened since (version "
                + current.version() + ")");
        assertSameState(current, late.state(), "a fenced-out success returns the current state");
        assertSameState(current, b.get(k).orElseThrow(), "stored state after a late success");
        StateChange lateFailure = updates(b).apply(k, AtomicOperation.trialFailed(30), p, T0 + 70_002);
        assertNull(lateFailure.transition(), "a late failure of period 30 reopened the breaker again");
        assertSameState(current, lateFailure.state(), "a fenced-out failure returns the current state");
        for (long other : new long[] {current.version() + 1, 0, BreakerState.UNKNOWN_VERSION}) {
            StateChange stray = updates(a).apply(k, AtomicOperation.trialSucceeded(other), p, T0 + 70_003);
            assertNull(stray.transition(), "a success carrying version " + other + ", never the current period's");
            assertSameState(current, stray.state(), "state after an outcome carrying version " + other);
        }
        assertSameState(current, a.get(k).orElseThrow(), "stored state after every fenced-out outcome");
        StateChange closed = updates(b).apply(k, AtomicOperation.trialSucceeded(current.version()), p, T0 + 70_004);
        assertEquals(TransitionKind.CLOSED, closed.transition(), "a success of the current period closes");
        StateChange afterClose = updates(a).apply(k, AtomicOperation.trialFailed(current.version()), p, T0 + 70_005);
        assertNull(afterClose.transition(), "a late failure after the breaker closed reopened it");
        assertSameState(closed.state(), b.get(k).orElseThrow(), "stored state after a failure arriving once closed");
    }

    /**
     * R5.9 With halfOpenPermits 3, three failing trials of one period reopen the breaker once: openCount + 1
     * and version + 1 in total. If this fails, check the fencing of trialFailed.
     */
    @Test
    @DisplayName("R5.9 three failing trials of one period reopen once: openCount + 1, version + 1")
    default void r5_9_failingTrialsOfOnePeriodReopenOnce() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = Policy.builder().failureThreshold(2).jitter(0).build();
        for (int round = 0; round < 4; round++) {
            String k = key("three-" + round);
            BreakerState start = openState(T0, 40).toBuilder().openCount(2).build();
            clients[0].put(k, start, STATE_TTL);
            ConcurrentLinkedQueue<StateChange> results = new ConcurrentLinkedQueue<>();
            if (round == 0) {
                for (int t = 0; t < 3; t++) { // one after another
                    results.add(updates(clients[t % 2]).apply(k, AtomicOperation.trialFailed(40), p, T0 + 90_000 + t));
                }
            } else {
                race(3, clients, (t, c) -> results.add(updates(c).apply(k, AtomicOperation.trialFailed(40), p, T0 + 90_000 + t)));
            }
            String how = round == 0 ? "one after another" : "racing over 2 clients";
            long reopenings = results.stream().filter(StateChange::isTransition).count();
            assertEquals(1, reopenings, "reopenings by 3 failing trials of the period at version 40 (" + how + ")");
            BreakerState end = clients[1].get(k).orElseThrow();
            assertEquals(start.openCount() + 1, end.openCount(), "openCount after 3 failing trials (" + how
                    + "): one more, or the backoff grows per trial instead of per period");
            assertEquals(41, end.version(), "version after 3 failing trials (" + how + ")");
        }
    }

    /**
     * R5.10 trialSuccesses restarts at 0 in every new open period. If this fails, check that every transition
     * into an open period resets trialSuccesses.
     */
    @Test
    @DisplayName("R5.10 trialSuccesses restarts at 0 in every new open period")
    default void r5_10_trialSuccessesRestartEveryPeriod() {
        Store a = client();
        Store b = client();
        String k = key("periods");
        Policy p = Policy.builder().failureThreshold(2).successThreshold(3).jitter(0).build();
        a.put(k, openState(T0, 60), STATE_TTL);
        long v = 60;
        long now = T0 + 100_000;
        for (String period : List.of("after a failed trial", "after a forced half-open",
                "after a forced open and a forced half-open")) {
            for (int i = 1; i <= 2; i++) {
                StateChange c = updates(i == 1 ? a : b).apply(k, AtomicOperation.trialSucceeded(v), p, now++);
                assertEquals(i, c.state().trialSuccesses(), "trial success " + i + " of 3 in the period at version "
                        + v);
            }
            StateChange next;
            if (period.startsWith("after a failed")) {
                next = updates(b).apply(k, AtomicOperation.trialFailed(v), p, now++);
            } else if (period.startsWith("after a forced half")) {
                next = updates(a).apply(k, AtomicOperation.force(BreakerStatus.HALF_OPEN), p, now++);
            } else {
                updates(a).apply(k, AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, now++);
                next = updates(b).apply(k, AtomicOperation.force(BreakerStatus.HALF_OPEN), p, now++);
            }
            assertEquals(0, next.state().trialSuccesses(), "trialSuccesses " + period);
            v = next.state().version();
            StateChange first = updates(a).apply(k, AtomicOperation.trialSucceeded(v), p, now++);
            assertEquals(1, first.state().trialSuccesses(), "the first trial success of the new period " + period
                    + " (version " + v + ")");
            assertNull(first.transition(), "one trial success of 3 does not close");
            updates(b).apply(k, AtomicOperation.force(BreakerStatus.HALF_OPEN), p, now++);
            v = b.get(k).orElseThrow().version();
        }
    }

    /**
     * R5.11 Forcing HALF_OPEN removes every live claim of the key, with one permit and with several, and no
     * claim of another key. If this fails, check that force HALF_OPEN deletes the key's claims in the same step
     * as force CLOSED does ({@code AtomicOperation.removesClaims()}).
     */
    @Test
    @DisplayName("R5.11 forcing HALF_OPEN removes every live claim of the key")
    default void r5_11_forceHalfOpenRemovesClaims() {
        Store a = client();
        Store b = client();
        TrialClaims ca = claims(a);
        TrialClaims cb = claims(b);
        AtomicUpdates tb = updates(b);
        Policy p = consecutive(1);
        String other = key("half-claims-other");
        token(ca.claimTrial(other, 1, LONG_TTL), "a claim of another key");
        for (int permits : new int[] {1, 2}) {
            String k = key("half-claims-" + permits);
            a.put(k, openState(T0, 5), STATE_TTL);
            for (int i = 0; i < permits; i++) {
                token((i % 2 == 0 ? ca : cb).claimTrial(k, permits, LONG_TTL), "live claim " + (i + 1) + " of "
                        + permits);
            }
            assertEquals(Optional.empty(), ca.claimTrial(k, permits, LONG_TTL), "every permit is taken");
            StateChange half = tb.apply(k, AtomicOperation.force(BreakerStatus.HALF_OPEN), p, T0 + 1_000);
            assertEquals(TransitionKind.FORCED_HALF_OPEN, half.transition(), "force HALF_OPEN is a transition");
            for (int i = 0; i < permits; i++) {
                token((i % 2 == 0 ? cb : ca).claimTrial(k, permits, LONG_TTL), "with " + permits + " permit(s), "
                        + "claim " + (i + 1) + " right after force HALF_OPEN: forcing HALF_OPEN must remove every "
                        + "live claim of the key");
            }
            assertEquals(Optional.empty(), cb.claimTrial(k, permits, LONG_TTL),
                    "the new period's permits are counted again");
        }
        assertEquals(Optional.empty(), cb.claimTrial(other, 1, LONG_TTL),
                "force HALF_OPEN of one key must leave the claims of another key");
    }
}

package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.errorRate;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.startOf;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rules R2 (AtomicUpdates, consecutive strategy) and R3 (AtomicUpdates, errorRate). Run by {@link StoreTck}. */
interface RecordingRules extends TckContext {
    /**
     * R2.1 A failure on an unknown key gives failures = 1, lastFailureAt = now, closed, and the store's
     * starting version for a new life of the key, the state a later get returns. If this fails, check that
     * recordFailure starts from {@code BreakerState.initial(base)} and uses the {@code now} argument.
     */
    @Test
    @DisplayName("R2.1 a failure on an unknown key gives failures 1, lastFailureAt now, closed, the starting version")
    default void r2_1_firstFailureOnUnknownKey() {
        Store a = client();
        Store b = client();
        String k = key("first");
        long now = T0 + 123;
        StateChange c = updates(a).apply(k, AtomicOperation.failure(), consecutive(5), now);
        BreakerState start = startOf(c, "the first failure");
        BreakerState expected = start.toBuilder().failures(1).lastFailureAt(now).build();
        assertSameState(expected, c.state(), "returned state (a first failure keeps the starting version "
                + start.version() + ")");
        assertNull(c.transition(), "a first failure under the threshold is not a transition");
        assertSameState(expected, b.get(k).orElseThrow(() -> new AssertionError("nothing stored")), "stored state");
    }

    /**
     * R2.2 Failures accumulate; the one that reaches failureThreshold opens the breaker with openedAt = now,
     * version + 1, and reports a transition. If this fails, check the {@code >=} comparison and the version bump.
     */
    @Test
    @DisplayName("R2.2 the failure reaching failureThreshold opens with openedAt now, version + 1, a transition")
    default void r2_2_thresholdFailureOpens() {
        Store a = client();
        Store b = client();
        String k = key("opens");
        Policy p = consecutive(3);
        a.put(k, BreakerState.INITIAL.toBuilder().version(4).build(), STATE_TTL);
        Store[] clients = {a, b};
        for (int i = 1; i <= 3; i++) {
            StateChange c = updates(clients[i % 2]).apply(k, AtomicOperation.failure(), p, T0 + i * 10L);
            assertEquals(i, c.state().failures(), "failures after failure " + i);
            if (i < 3) {
                assertFalse(c.state().open(), "open after " + i + " of 3 failures");
                assertNull(c.transition(), "failure " + i + " of 3 is not a transition");
                assertEquals(4, c.state().version(), "version after failure " + i + " of 3");
            } else {
                assertTrue(c.state().open(), "the third of 3 failures must open the breaker");
                assertEquals(TransitionKind.OPENED, c.transition(), "transition of the opening failure");
                assertEquals(T0 + 30, c.state().openedAt(), "openedAt = now of the opening failure");
                assertEquals(5, c.state().version(), "version + 1 on opening");
            }
        }
        BreakerState stored = a.get(k).orElseThrow();
        assertTrue(stored.open(), "stored state must be open");
        assertEquals(5, stored.version(), "stored version");
        assertEquals(T0 + 30, stored.openedAt(), "stored openedAt");
    }

    /**
     * R2.3 A sub-threshold increment does not change version and reports no transition. If this fails, check
     * that only transitions bump the version.
     */
    @Test
    @DisplayName("R2.3 a sub-threshold increment keeps version and reports no transition")
    default void r2_3_subThresholdIncrementKeepsVersion() {
        Store a = client();
        Store b = client();
        String k = key("sub");
        a.put(k, BreakerState.INITIAL.toBuilder().version(7).build(), STATE_TTL);
        for (int i = 1; i <= 4; i++) {
            StateChange c = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.failure(), consecutive(10), T0 + i);
            assertNull(c.transition(), "failure " + i + " of 10 reported a transition");
            assertEquals(7, c.state().version(), "version after failure " + i + " of 10");
            assertEquals(i, c.state().failures(), "failures");
        }
        assertEquals(7, b.get(k).orElseThrow().version(), "stored version after sub-threshold increments");
    }

    /**
     * R2.4 A failure while open adds to failures and sets lastFailureAt, but leaves openedAt and version
     * unchanged. If this fails, check the open branch of recordFailure: it must not reopen.
     */
    @Test
    @DisplayName("R2.4 a failure while open counts but keeps openedAt and version")
    default void r2_4_failureWhileOpenKeepsOpenedAtAndVersion() {
        Store a = client();
        Store b = client();
        String k = key("open");
        Policy p = consecutive(2);
        updates(a).apply(k, AtomicOperation.failure(), p, T0);
        StateChange opened = updates(b).apply(k, AtomicOperation.failure(), p, T0 + 10);
        assertTrue(opened.state().open(), "2 of 2 failures must open");
        StateChange c = updates(a).apply(k, AtomicOperation.failure(), p, T0 + 5_000);
        BreakerState expected = opened.state().toBuilder().failures(3).lastFailureAt(T0 + 5_000).build();
        assertSameState(expected, c.state(), "failure while open");
        assertNull(c.transition(), "a failure while open is not a transition");
        assertSameState(expected, b.get(k).orElseThrow(), "stored state after a failure while open");
    }

    /**
     * R2.5 With maxGapBetweenFailures, a failure later than the gap restarts the count at 1; within the gap it
     * adds. If this fails, check the comparison {@code now - lastFailureAt > gap} with the {@code now} argument.
     */
    @Test
    @DisplayName("R2.5 a failure later than maxGapBetweenFailures restarts the count at 1")
    default void r2_5_maxGapRestartsTheCount() {
        Store a = client();
        Store b = client();
        String k = key("gap");
        Policy p = Policy.builder().failureThreshold(5).maxGapBetweenFailures(Duration.ofSeconds(1)).jitter(0)
                .build();
        long[] times = {T0, T0 + 1_000, T0 + 1_500, T0 + 2_501, T0 + 3_000, T0 + 60_000, T0 + 60_999};
        int[] expected = {1, 2, 3, 1, 2, 1, 2};
        for (int i = 0; i < times.length; i++) {
            StateChange c = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.failure(), p, times[i]);
            assertEquals(expected[i], c.state().failures(), "failures after the failure at now = T0 + "
                    + (times[i] - T0) + " ms (gap 1000 ms, previous failure at T0 + "
                    + (i == 0 ? "-" : Long.toString(times[i - 1] - T0)) + " ms)");
            assertEquals(times[i], c.state().lastFailureAt(), "lastFailureAt = now");
        }
        assertEquals(2, a.get(k).orElseThrow().failures(), "stored failures");
    }

    /**
     * R2.6 A success with nothing to clear changes nothing and reports no transition, also on an unknown key,
     * which stays unknown. If this fails, check that recordSuccess with failures = 0 writes nothing.
     */
    @Test
    @DisplayName("R2.6 a success with nothing to clear changes nothing")
    default void r2_6_successWithNothingToClearChangesNothing() {
        Store a = client();
        Store b = client();
        Policy p = consecutive(5);
        String unknown = key("unknown");
        StateChange onUnknown = updates(a).apply(unknown, AtomicOperation.success(), p, T0);
        assertNull(onUnknown.transition(), "a success on an unknown key is not a transition");
        assertFalse(onUnknown.changed(), "a success on an unknown key changes nothing: " + onUnknown);
        startOf(onUnknown, "a success on an unknown key");
        assertEquals(Optional.empty(), b.get(unknown), "a success on an unknown key must not create it");
        StateChange outcomeOnUnknown = updates(b).apply(unknown, AtomicOperation.outcome(true), p, T0 + 1);
        assertFalse(outcomeOnUnknown.isTransition() || outcomeOnUnknown.changed(), "recordOutcome(success) on an "
                + "unknown key: " + outcomeOnUnknown);
        assertEquals(Optional.empty(), a.get(unknown), "recordOutcome(success) must not create an unknown key");

        String k = key("nothing");
        BreakerState stored = BreakerState.INITIAL.toBuilder().lastFailureAt(T0 - 5).version(6).build();
        a.put(k, stored, STATE_TTL);
        StateChange again = updates(b).apply(k, AtomicOperation.success(), p, T0 + 3);
        assertNull(again.transition(), "a success with nothing to clear is not a transition");
        assertSameState(stored, again.state(), "state after a no-op success");
        assertSameState(stored, a.get(k).orElseThrow(), "stored state after a no-op success");
        StateChange outcome = updates(a).apply(k, AtomicOperation.outcome(true), p, T0 + 4);
        assertNull(outcome.transition(), "recordOutcome(success) with nothing to clear");
        assertSameState(stored, b.get(k).orElseThrow(), "stored state after recordOutcome(success)");
    }

    /**
     * R2.7 8 threads over 2 clients record 4,000 failures: the stored count is exactly 4,000, and every call
     * saw a distinct count. If this fails, recordFailure is not one atomic read-modify-write.
     */
    @Test
    @DisplayName("R2.7 8 threads over 2 clients record 4,000 failures: exactly 4,000 counted")
    default void r2_7_concurrentFailuresAreCountedExactly() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("count");
        Policy p = consecutive(1_000_000);
        int threads = 8;
        int each = 500;
        ConcurrentLinkedQueue<Integer> seen = new ConcurrentLinkedQueue<>();
        race(threads, clients, (t, c) -> {
            AtomicUpdates rec = updates(c);
            for (int i = 0; i < each; i++) {
                seen.add(rec.apply(k, AtomicOperation.failure(), p, T0 + i).state().failures());
            }
        });
        int total = threads * each;
        assertEquals(total, clients[0].get(k).orElseThrow().failures(),
                "stored failures after " + total + " concurrent recordFailure calls (lost updates?)");
        assertEquals(total, seen.stream().distinct().count(),
                "each of the " + total + " calls must return a distinct count (two calls saw the same prior state)");
    }

    /**
     * R2.8 8 threads over 2 clients race past failureThreshold = 100: exactly one call reports the opening and
     * the version rises by exactly 1. If this fails, the opening is not decided inside the atomic step.
     */
    @Test
    @DisplayName("R2.8 8 threads race past failureThreshold 100: exactly one opening, version + 1")
    default void r2_8_exactlyOneCallOpens() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = consecutive(100);
        for (int round = 0; round < 3; round++) {
            String k = key("race-" + round);
            clients[0].put(k, BreakerState.INITIAL.toBuilder().failures(90).version(10).build(), STATE_TTL);
            AtomicInteger openings = new AtomicInteger();
            ConcurrentLinkedQueue<Long> versions = new ConcurrentLinkedQueue<>();
            race(8, clients, (t, c) -> {
                AtomicUpdates rec = updates(c);
                for (int i = 0; i < 5; i++) {
                    StateChange ch = rec.apply(k, AtomicOperation.failure(), p, T0 + i);
                    if (ch.isTransition()) {
                        openings.incrementAndGet();
                        assertEquals(TransitionKind.OPENED, ch.transition(), "kind of the opening transition");
                    }
                    versions.add(ch.state().version());
                }
            });
            BreakerState end = clients[1].get(k).orElseThrow();
            assertEquals(1, openings.get(), "round " + round + ": calls reporting the opening transition");
            assertEquals(11, end.version(), "round " + round + ": version must rise by exactly 1 (from 10)");
            assertTrue(end.open(), "round " + round + ": breaker must be open");
            assertEquals(130, end.failures(), "round " + round + ": failures counted (90 + 40 concurrent)");
        }
    }

    /**
     * R2.9 The result of every call equals {@link Transitions} applied to the prior state, for a scripted
     * sequence of 50 mixed calls. If this fails, check parity of the store's rules with {@code Transitions}.
     */
    @Test
    @DisplayName("R2.9 every call equals Transitions applied to the prior state (50 mixed calls)")
    default void r2_9_parityWithTransitions() {
        assertParity(Policy.builder().failureThreshold(4).maxGapBetweenFailures(Duration.ofMillis(300)).jitter(0)
                .build(), 20_26L, 50);
    }

    /**
     * R2.10 A success that clears sub-threshold failures stores failures = 0 with the same version, reports no
     * transition and publishes no event. If this fails, check that clearing is a plain write (contract v2).
     */
    @Test
    @DisplayName("R2.10 a clearing success keeps the version and publishes no event")
    default void r2_10_clearingIsAWriteNotATransition() {
        Store a = client();
        Store b = client();
        updates(a);
        FeedCollector events = null;
        if (a.capability(TransitionFeed.class).isPresent()) {
            events = FeedCollector.subscribe(a);
            awaitLive(b, events);
        }
        String k = key("clear");
        Policy p = consecutive(5);
        for (int round = 1; round <= 3; round++) {
            updates(a).apply(k, AtomicOperation.failure(), p, T0 + round * 10L);
            updates(b).apply(k, AtomicOperation.failure(), p, T0 + round * 10L + 1);
            BreakerState before = a.get(k).orElseThrow();
            StateChange c = round == 2 ? updates(b).apply(k, AtomicOperation.outcome(true), p, T0 + round * 10L + 2)
                    : updates(b).apply(k, AtomicOperation.success(), p, T0 + round * 10L + 2);
            String what = "round " + round + ": a success clearing " + before.failures() + " failures";
            assertNull(c.transition(), what + " is a write, not a transition (contract v2)");
            assertSameState(before.toBuilder().failures(0).build(), c.state(), what + ": failures 0, the same "
                    + "version " + before.version() + ", every other field kept");
            assertSameState(c.state(), a.get(k).orElseThrow(), what + ": the stored state");
        }
        if (events != null) {
            flush(b, events);
            assertEquals(List.of(), events.of(k), "events published for failures and the successes clearing them");
        }
    }

    /**
     * R3.1 A fixed sequence of 50 outcomes yields the same errorRate (within 1e-9) and samples as
     * {@link Transitions}. If this fails, check the EWMA formula and the samples increment.
     */
    @Test
    @DisplayName("R3.1 50 outcomes give the errorRate (within 1e-9) and samples of Transitions")
    default void r3_1_errorRateParity() {
        Store[] clients = {client(), client()};
        String k = key("ewma");
        Policy p = errorRate(10, 0.95, 0.9);
        String pattern = "FSSFSFFSSSFSFFFSSSSFSFSSFFSSSFSSFSFSFFSSSSFFSFSSSS";
        BreakerState model = null;
        for (int i = 0; i < pattern.length(); i++) {
            boolean success = pattern.charAt(i) == 'S';
            long now = T0 + i * 7L;
            StateChange actual = updates(clients[i % 2]).apply(k, AtomicOperation.outcome(success), p, now);
            String where = "outcome " + (i + 1) + " (" + (success ? "success" : "failure") + ")";
            StateChange expected = Transitions.recordOutcome(model != null ? model : startOf(actual, where), success,
                    p, now);
            assertEquals(expected.state().errorRate(), actual.state().errorRate(), 1e-9, where + ": errorRate");
            assertEquals(expected.state().samples(), actual.state().samples(), where + ": samples");
            assertEquals(expected.state().open(), actual.state().open(), where + ": open");
            assertEquals(expected.transition(), actual.transition(), where + ": transition");
            assertEquals(expected.state().version(), actual.state().version(), where + ": version");
            BreakerState stored = clients[(i + 1) % 2].get(k).orElseThrow();
            assertEquals(expected.state().errorRate(), stored.errorRate(), 1e-9, where + ": stored errorRate");
            assertEquals(expected.state().samples(), stored.samples(), where + ": stored samples");
            model = expected.state();
        }
    }

    /**
     * R3.2 The breaker opens only once samples >= minimumCalls and errorRate >= errorRateThreshold; the opening
     * is a transition. If this fails, check both opening conditions of the error-rate strategy.
     */
    @Test
    @DisplayName("R3.2 errorRate opens only with samples >= minimumCalls and rate >= threshold")
    default void r3_2_errorRateOpensOnBothConditions() {
        Store a = client();
        Store b = client();
        Policy p = errorRate(10, 0.5, 0.9);
        String k = key("min-calls");
        for (int i = 1; i <= 9; i++) {
            StateChange c = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.outcome(false), p, T0 + i);
            assertFalse(c.state().open(), "failure " + i + " of minimumCalls 10 opened the breaker (rate "
                    + c.state().errorRate() + ", samples " + c.state().samples() + ")");
            assertNull(c.transition(), "failure " + i + " reported a transition");
        }
        StateChange tenth = updates(a).apply(k, AtomicOperation.outcome(false), p, T0 + 10);
        assertTrue(tenth.state().open(), "the 10th failure (samples = minimumCalls, rate 1.0) must open");
        assertEquals(TransitionKind.OPENED, tenth.transition(), "the opening is a transition");
        assertEquals(tenth.previous().version() + 1, tenth.state().version(), "version + 1 on opening");
        assertEquals(T0 + 10, tenth.state().openedAt(), "openedAt = now");

        String low = key("low-rate");
        for (int i = 1; i <= 14; i++) {
            boolean success = i != 14;
            StateChange c = updates(i % 2 == 0 ? a : b).apply(low, AtomicOperation.outcome(success), p, T0 + i);
            assertFalse(c.state().open(), "outcome " + i + " opened the breaker although errorRate "
                    + c.state().errorRate() + " < 0.5");
        }
        assertEquals(14, b.get(low).orElseThrow().samples(), "samples: every closed-phase outcome is written");
    }

    /**
     * R3.3 8 threads over 2 clients record 2,000 outcomes: samples is exactly 2,000. If this fails,
     * recordOutcome is not one atomic read-modify-write.
     */
    @Test
    @DisplayName("R3.3 8 threads over 2 clients record 2,000 outcomes: samples is exactly 2,000")
    default void r3_3_concurrentOutcomesAreCountedExactly() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("samples");
        Policy p = errorRate(Integer.MAX_VALUE, 1.0, 0.9);
        ConcurrentLinkedQueue<Long> seen = new ConcurrentLinkedQueue<>();
        race(8, clients, (t, c) -> {
            AtomicUpdates rec = updates(c);
            for (int i = 0; i < 250; i++) {
                seen.add(rec.apply(k, AtomicOperation.outcome((i + t) % 3 != 0), p, T0 + i).state().samples());
            }
        });
        BreakerState end = clients[0].get(k).orElseThrow();
        assertEquals(2_000, end.samples(), "stored samples after 2,000 concurrent outcomes (lost updates?)");
        assertEquals(2_000, seen.stream().distinct().count(),
                "each of the 2,000 calls must return a distinct samples count");
        assertFalse(end.open(), "minimumCalls was never reached");
    }

    /**
     * R3.4 A repeating pattern of 4 failures in 5 calls opens the breaker under the error-rate strategy, where
     * no run of failureThreshold consecutive failures occurs. If this fails, check that the store honours
     * {@code Policy.strategy()}.
     */
    @Test
    @DisplayName("R3.4 4 failures in 5 calls open the errorRate breaker without 5 consecutive failures")
    default void r3_4_fourInFivePatternOpens() {
        Store a = client();
        Store b = client();
        String k = key("four-in-five");
        Policy p = errorRate(10, 0.5, 0.9);
        BreakerState model = BreakerState.INITIAL;
        int openedAt = -1;
        List<Boolean> outcomes = new ArrayList<>();
        for (int i = 0; i < 50 && openedAt < 0; i++) {
            boolean success = i % 5 == 4;
            outcomes.add(success);
            StateChange expected = Transitions.recordOutcome(model, success, p, T0 + i);
            StateChange c = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.outcome(success), p, T0 + i);
            assertEquals(expected.state().open(), c.state().open(), "open after call " + (i + 1)
                    + " (rate " + c.state().errorRate() + ", samples " + c.state().samples() + ")");
            model = expected.state();
            if (c.state().open()) {
                openedAt = i + 1;
                assertEquals(TransitionKind.OPENED, c.transition(), "the opening is a transition");
            }
        }
        if (openedAt < 0) {
            fail("4 failures in 5 calls never opened the errorRate breaker in 50 calls");
        }
        assertEquals(p.minimumCalls(), openedAt, "the 4-in-5 pattern opens as soon as minimumCalls is reached");
        assertTrue(b.get(k).orElseThrow().open(), "stored state must be open");
    }
}

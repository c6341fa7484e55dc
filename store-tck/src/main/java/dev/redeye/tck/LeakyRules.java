package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.Outcome;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.call;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R9 (AtomicUpdates, leaky strategy): a failure adds 1, a success subtracts 1 (floored at 0), the
 * breaker opens when the count reaches {@code failureThreshold}. Run by {@link StoreTck}.
 */
interface LeakyRules extends TckContext {
    /** A leaky-strategy policy without jitter. */
    static Policy leaky(int failureThreshold) {
        return Policy.builder().strategy(Strategy.LEAKY).failureThreshold(failureThreshold).jitter(0.0).build();
    }

    /**
     * R9.1 Under the leaky strategy a failure adds 1 and a success subtracts 1, floored at 0: after every call
     * of a scripted pattern over two clients the returned and the stored count are the bucket's level. If this
     * fails, check recordSuccess / recordOutcome with {@code Strategy.LEAKY}: {@code failures - 1}, not a clear.
     */
    @Test
    @DisplayName("R9.1 leaky: a failure adds 1, a success subtracts 1, floored at 0")
    default void r9_1_leakyCountAddsAndSubtracts() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("leaky-level");
        Policy p = leaky(100);
        String pattern = "SFFFSFSSFFFFSSSSSSFSF";
        int level = 0;
        for (int i = 0; i < pattern.length(); i++) {
            boolean success = pattern.charAt(i) == 'S';
            level = success ? Math.max(0, level - 1) : level + 1;
            AtomicUpdates rec = updates(clients[i % 2]);
            StateChange c = i % 3 == 2 ? rec.apply(k, AtomicOperation.outcome(success), p, T0 + i)
                    : success ? rec.apply(k, AtomicOperation.success(), p, T0 + i) : rec.apply(k, AtomicOperation.failure(), p, T0 + i);
            String where = "call " + (i + 1) + " (" + (success ? "success" : "failure") + ") of " + pattern;
            assertEquals(level, c.state().failures(), where + ": the leaky count returned");
            assertFalse(c.state().open(), where + ": opened under a threshold of 100");
            Optional<BreakerState> stored = clients[(i + 1) % 2].get(k);
            assertEquals(level, stored.map(BreakerState::failures).orElse(0), where + ": the leaky count stored");
        }
    }

    /**
     * R9.2 A leaky success that lowers the count is a write with the same version, no transition and no
     * event; a success at 0 writes nothing (an unknown key stays unknown). If this fails, check that the leak
     * is a plain write, never a version bump.
     */
    @Test
    @DisplayName("R9.2 leaky: a success lowering the count keeps the version and publishes no event")
    default void r9_2_leakIsAWriteNotATransition() {
        Store a = client();
        Store b = client();
        updates(a);
        Policy p = leaky(5);
        String unknown = key("leaky-unknown");
        StateChange onUnknown = updates(a).apply(unknown, AtomicOperation.success(), p, T0);
        assertFalse(onUnknown.isTransition() || onUnknown.changed(), "a leaky success on an unknown key: "
                + onUnknown);
        assertEquals(Optional.empty(), b.get(unknown), "a leaky success must not create an unknown key");
        FeedCollector events = null;
        if (a.capability(TransitionFeed.class).isPresent()) {
            events = FeedCollector.subscribe(a);
            awaitLive(b, events);
        }
        String k = key("leaky-quiet");
        a.put(k, BreakerState.INITIAL.toBuilder().version(9).build(), STATE_TTL);
        for (int i = 0; i < 3; i++) {
            updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.failure(), p, T0 + i);
        }
        for (int i = 3; i >= 1; i--) {
            BreakerState before = a.get(k).orElseThrow();
            StateChange c = i == 2 ? updates(b).apply(k, AtomicOperation.outcome(true), p, T0 + 10 + i)
                    : updates(b).apply(k, AtomicOperation.success(), p, T0 + 10 + i);
            String what = "a leaky success at a count of " + i;
            assertNull(c.transition(), what + " is a write, not a transition");
            assertSameState(before.toBuilder().failures(i - 1).build(), c.state(), what + ": failures " + (i - 1)
                    + ", the same version " + before.version() + ", every other field kept");
            assertSameState(c.state(), a.get(k).orElseThrow(), what + ": the stored state");
        }
        StateChange atZero = updates(a).apply(k, AtomicOperation.success(), p, T0 + 20);
        assertFalse(atZero.isTransition() || atZero.changed(), "a leaky success at 0 changes nothing: " + atZero);
        if (events != null) {
            flush(b, events);
            assertEquals(List.of(), events.of(k), "events published for leaky failures and successes");
        }
    }

    /**
     * R9.3 The failure that brings the leaky count to failureThreshold opens the breaker (openedAt = now,
     * version + 1, OPENED), also when successes came between the failures; while open a failure adds to the
     * count without moving openedAt or version and a success changes nothing. If this fails, check that the
     * store honours {@code Policy.strategy() = LEAKY}.
     */
    @Test
    @DisplayName("R9.3 leaky: F F S F F opens at threshold 3; while open failures count and successes do nothing")
    default void r9_3_leakyOpensAtTheThreshold() {
        Store a = client();
        Store b = client();
        String k = key("leaky-opens");
        Policy p = leaky(3);
        String pattern = "FFSFF";
        StateChange last = null;
        for (int i = 0; i < pattern.length(); i++) {
            boolean success = pattern.charAt(i) == 'S';
            last = updates(i % 2 == 0 ? a : b).apply(k, AtomicOperation.outcome(success), p, T0 + i * 10L);
            if (i < pattern.length() - 1) {
                assertFalse(last.state().open(), "open after call " + (i + 1) + " of " + pattern + " (count "
                        + last.state().failures() + " of 3)");
            }
        }
        assertTrue(last.state().open(), "the fifth call of F F S F F brings the leaky count to 3 and must open "
                + "(count " + last.state().failures() + ")");
        assertEquals(TransitionKind.OPENED, last.transition(), "the opening is a transition");
        assertEquals(T0 + 40, last.state().openedAt(), "openedAt = now of the opening failure");
        assertEquals(last.previous().version() + 1, last.state().version(), "version + 1 on opening");
        BreakerState opened = last.state();
        StateChange failure = updates(b).apply(k, AtomicOperation.failure(), p, T0 + 5_000);
        assertSameState(opened.toBuilder().failures(4).lastFailureAt(T0 + 5_000).build(), failure.state(),
                "a failure while open: failures + 1, lastFailureAt = now, openedAt and version kept");
        assertNull(failure.transition(), "a failure while open is not a transition");
        StateChange success = updates(a).apply(k, AtomicOperation.success(), p, T0 + 6_000);
        assertSameState(failure.state(), success.state(), "a success while open (not a trial) changes nothing");
        assertSameState(failure.state(), b.get(k).orElseThrow(), "stored state while open");
    }

    /**
     * R9.4 With maxGapBetweenFailures under the leaky strategy, a failure later than the gap after the
     * previous failure restarts the count at 1, successes between them included; within the gap it adds. If
     * this fails, check that the gap comparison runs for {@code LEAKY} as for {@code CONSECUTIVE}.
     */
    @Test
    @DisplayName("R9.4 leaky: a failure later than maxGapBetweenFailures restarts the count at 1")
    default void r9_4_leakyGapRestartsTheCount() {
        Store a = client();
        Store b = client();
        String k = key("leaky-gap");
        Policy p = Policy.builder().strategy(Strategy.LEAKY).failureThreshold(10)
                .maxGapBetweenFailures(Duration.ofSeconds(1)).jitter(0).build();
        // failure (F) or success (S) at T0 + ms, and the count expected after it
        String kinds = "FFFSFFSFF";
        long[] times = {0, 500, 900, 950, 1_900, 2_901, 2_950, 3_000, 9_000};
        int[] expected = {1, 2, 3, 2, 3, 1, 0, 1, 1};
        for (int i = 0; i < times.length; i++) {
            boolean success = kinds.charAt(i) == 'S';
            AtomicUpdates rec = updates(i % 2 == 0 ? a : b);
            StateChange c = success ? rec.apply(k, AtomicOperation.success(), p, T0 + times[i]) : rec.apply(k, AtomicOperation.failure(), p, T0 + times[i]);
            assertEquals(expected[i], c.state().failures(), "count after the " + (success ? "success" : "failure")
                    + " at now = T0 + " + times[i] + " ms (gap 1000 ms; pattern " + kinds + " at " + List.of(0, 500,
                    900, 950, 1_900, 2_901, 2_950, 3_000, 9_000) + ")");
        }
        assertEquals(1, a.get(k).orElseThrow().failures(), "stored count");
    }

    /**
     * R9.5 8 threads over 2 clients record two failures per success from a count of 5,000 under a threshold
     * never reached: the stored count is exactly 5,000 plus the failures minus the successes. If this fails,
     * the leaky recordSuccess / recordOutcome is not one atomic read-modify-write.
     */
    @Test
    @DisplayName("R9.5 8 threads record 2 failures per success from 5,000: the leaky count is exact")
    default void r9_5_concurrentLeakyOutcomesAreCountedExactly() throws Exception {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        String k = key("leaky-count");
        Policy p = leaky(1_000_000);
        clients[0].put(k, BreakerState.INITIAL.toBuilder().failures(5_000).version(3).build(), STATE_TTL);
        int threads = 8;
        int each = 300;
        race(threads, clients, (t, c) -> {
            AtomicUpdates rec = updates(c);
            for (int i = 0; i < each; i++) {
                boolean success = (i + t) % 3 == 0;
                if (i % 2 == 0) {
                    rec.apply(k, AtomicOperation.outcome(success), p, T0 + i);
                } else if (success) {
                    rec.apply(k, AtomicOperation.success(), p, T0 + i);
                } else {
                    rec.apply(k, AtomicOperation.failure(), p, T0 + i);
                }
            }
        });
        int successes = 0;
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < each; i++) {
                successes += (i + t) % 3 == 0 ? 1 : 0;
            }
        }
        int failures = threads * each - successes;
        BreakerState end = clients[1].get(k).orElseThrow();
        assertEquals(5_000 + failures - successes, end.failures(), "stored leaky count after " + failures
                + " failures and " + successes + " successes from 5,000 (lost updates?)");
        assertEquals(3, end.version(), "no transition happened: version");
    }

    /**
     * R9.6 The result of every call equals {@code Transitions} applied to the prior state, for a scripted
     * sequence of 60 mixed calls under a leaky policy with maxGapBetweenFailures. If this fails, check parity
     * of the store's leaky rules with {@code Transitions} (a native script must express exactly the same rules).
     */
    @Test
    @DisplayName("R9.6 leaky: every call equals Transitions applied to the prior state (60 mixed calls)")
    default void r9_6_leakyParityWithTransitions() {
        assertParity(Policy.builder().strategy(Strategy.LEAKY).failureThreshold(4)
                .maxGapBetweenFailures(Duration.ofMillis(300)).jitter(0).build(), 2_027L, 60);
    }

    /**
     * R9.7 Two breakers on two clients with the leaky strategy share one operation: the pattern F F S F S F F
     * split between them (threshold 3) opens both on its last failure, where no run of 3 consecutive failures
     * occurs. If this fails, check recordOutcome / recordSuccess with {@code Strategy.LEAKY} (R9.1 to R9.3).
     */
    @Test
    @DisplayName("R9.7 the leaky strategy across two breakers opens on F F S F S F F at threshold 3")
    default void r9_7_leakyAcrossBreakers() {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker[] both = new CircuitBreaker[2];
        for (int i = 0; i < 2; i++) {
            both[i] = build(breaker(client(), clock).strategy(Strategy.LEAKY).failureThreshold(3));
        }
        String op = key("leaky-engine");
        String pattern = "FFSFSFF";
        for (int i = 0; i < pattern.length(); i++) {
            assertEquals(Outcome.RAN, call(both[i % 2], op, pattern.charAt(i) == 'S'), "call " + (i + 1) + " of "
                    + pattern + " (leaky count below 3 before it)");
            clock.advanceMillis(10);
        }
        assertEquals(Outcome.REJECTED, call(both[0], op, true), "breaker A after " + pattern + " (leaky count 3)");
        assertEquals(Outcome.REJECTED, call(both[1], op, true), "breaker B after " + pattern + " (leaky count 3)");
    }
}

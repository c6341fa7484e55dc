package dev.redeye.tck;

import static dev.redeye.tck.Scripted.assertCounts;
import static dev.redeye.tck.Scripted.assertOpensAt;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R11 (AtomicUpdates, slow calls): slow outcomes in a sliding window, the slow-call rate, and a call still
 * running counted once as slow ({@code slow_call}) then marked failed in place ({@code slow_call_failed}), fenced
 * by the version it was counted under. Run by {@link StoreTck}.
 */
interface SlowCallRules extends TckContext {
    /** A sliding-window policy: failure rate {@code failures} %, slow-call rate {@code slow} %. */
    static Policy slowWindow(SlidingWindowType type, int size, double failures, double slow, int minimum) {
        return Policy.builder().slidingWindow(type, size).failureRateThreshold(failures).slowCallRateThreshold(slow)
                .minimumNumberOfCalls(minimum).jitter(0.0).build();
    }

    /**
     * R11.1 Slow outcomes are counted in a window as slow: a slow success toward the slow-call rate, a slow
     * failure toward both rates; the other strategies read a slow outcome as a plain one. If this fails, check
     * the slow_success and slow_failure operations (codes 8 and 9) of the store.
     */
    @Test
    @DisplayName("R11.1 a slow success counts as slow, a slow failure as failed and slow")
    default void r11_1_slowOutcomesAreCounted() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        for (SlidingWindowType type : SlidingWindowType.values()) {
            Policy p = slowWindow(type, 10, 100, 100, 10);
            Scripted s = new Scripted(clients, key("slow-" + type.wireName()), type.wireName() + " window of 10, "
                    + "minimum 10");
            s.play(p, "sfSF");
            assertCounts(s.model(), 4, 2, 2, "s f S F in a " + type.wireName() + " window");
        }
        Scripted plain = new Scripted(clients, key("slow-plain"), "consecutive strategy, threshold 3");
        plain.play(consecutive(3), "ffs");
        assertEquals(0, plain.model().failures(), "under the consecutive strategy a slow success clears the "
                + "failures, as a success does");
        assertNull(plain.model().window(), "the consecutive strategy keeps no window");
    }

    /**
     * R11.2 The slow-call rate opens the breaker: exactly at the outcome that reaches slowCallRateThreshold once
     * the minimum is met (compared with {@code >=}), in a count and in a time window. If this fails, check the
     * slow-call side of the trip rule: slowCalls * 100 >= slowCallRateThreshold * calls.
     */
    @Test
    @DisplayName("R11.2 the slow-call rate opens the breaker exactly when it is reached")
    default void r11_2_slowCallRateOpens() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Scripted c = new Scripted(clients, key("slow-rate-count"), "count window of 4, slow-call threshold 50 %");
        assertOpensAt(4, c.play(slowWindow(SlidingWindowType.COUNT_BASED, 4, 100, 50, 4), "sSSs"),
                "s S S s", "2 slow of 4 is exactly 50 %");
        Scripted t = new Scripted(clients, key("slow-rate-time"), "time window of 10 s, slow-call threshold 60 %");
        assertOpensAt(5, t.play(slowWindow(SlidingWindowType.TIME_BASED, 10, 100, 60, 5), "sSfSs", 0, 100, 200,
                300, 400), "s S f S s", "3 slow of 5 is exactly 60 %; the failure rate stays at 20 %");
    }

    /**
     * R11.3 slow_call counts a call still running once, as a slow success, and slow_call_failed marks that very
     * call failed in place (calls unchanged, failures + 1), opening the breaker if the failure rate is now
     * reached; a second slow_call_failed of the same call in a count window changes nothing; the other
     * strategies ignore slow_call. If this fails, check slow_call and slow_call_failed (codes 10 and 11): the slot
     * is the window position slow_call returned, and a call counted as slow is never counted twice.
     */
    @Test
    @DisplayName("R11.3 slow_call counts a running call once; slow_call_failed marks it failed in place")
    default void r11_3_inFlightSlowCallCountedOnce() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        for (SlidingWindowType type : SlidingWindowType.values()) {
            Policy p = slowWindow(type, 10, 100, 100, 10);
            Scripted s = new Scripted(clients, key("in-flight-" + type.wireName()), type.wireName()
                    + " window of 10");
            s.play(p, "S");
            StateChange slow = s.slowCall(p, T0 + 100);
            assertCounts(slow.state(), 2, 0, 1, "slow_call after S counts the running call as a slow success");
            s.play(p, "S", 200);
            StateChange failed = s.slowCallFailed(slow.state().window().position(), slow.state().version(), p,
                    T0 + 300);
            assertCounts(failed.state(), 3, 1, 1, "slow_call_failed marks the slow call failed, counting no new call");
            assertEquals(T0 + 300, failed.state().lastFailureAt(), "slow_call_failed: lastFailureAt = now");
            if (type == SlidingWindowType.COUNT_BASED) {
                StateChange again = s.slowCallFailed(slow.state().window().position(), slow.state().version(), p,
                        T0 + 400);
                assertFalse(again.changed(), "a second slow_call_failed of one call must change nothing: " + again);
            }
        }
        Policy p = slowWindow(SlidingWindowType.COUNT_BASED, 2, 50, 100, 2);
        Scripted s = new Scripted(clients, key("in-flight-opens"), "count window of 2, threshold 50 %");
        s.play(p, "S");
        StateChange slow = s.slowCall(p, T0 + 100);
        assertFalse(slow.state().open(), "one slow call of 2 is below a slow-call threshold of 100 %");
        StateChange failed = s.slowCallFailed(slow.state().window().position(), slow.state().version(), p, T0 + 200);
        assertEquals(TransitionKind.OPENED, failed.transition(), "the slow call marked failed makes 1 failure of 2, "
                + "50 %: the breaker opens");
        Scripted plain = new Scripted(clients, key("in-flight-plain"), "consecutive strategy");
        StateChange ignored = plain.slowCall(consecutive(1), T0);
        assertFalse(ignored.changed(), "slow_call under the consecutive strategy must change nothing: " + ignored);
        assertEquals(Optional.empty(), clients[1].get(key("in-flight-plain")), "slow_call under the consecutive "
                + "strategy must not create the key");
    }

    /**
     * R11.4 slow_call_failed is fenced by the version its slow call was counted under: after the breaker opened
     * it is a failure while open (failures + 1, the window and version kept), after it closed again it changes
     * nothing (a new slow call in the new window stays a slow success), and a slot not in the window changes
     * nothing. If this fails, check that slow_call_failed compares the state's version with the one it carries
     * before touching the window.
     */
    @Test
    @DisplayName("R11.4 slow_call_failed is fenced by version: no effect on the window once the breaker moved on")
    default void r11_4_slowCallFailedIsFenced() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = slowWindow(SlidingWindowType.COUNT_BASED, 4, 50, 100, 2);
        Scripted s = new Scripted(clients, key("fenced"), "count window of 4, threshold 50 %, minimum 2");
        StateChange a = s.slowCall(p, T0);
        long slot = a.state().window().position();
        long version = a.state().version();
        assertOpensAt(1, s.play(p, "F", 100), "slow_call then F", "1 failure of 2 is 50 %");
        BreakerState open = s.model();
        StateChange whileOpen = s.slowCallFailed(slot, version, p, T0 + 200);
        assertEquals(open.window(), whileOpen.state().window(), "slow_call_failed while open must not touch the "
                + "window");
        assertEquals(open.failures() + 1, whileOpen.state().failures(), "slow_call_failed while open is a failure "
                + "while open");
        s.force(BreakerStatus.CLOSED, p, T0 + 300);
        StateChange b = s.slowCall(p, T0 + 400);
        assertEquals(slot, b.state().window().position(), "the new window's first call takes the same slot");
        StateChange stale = s.slowCallFailed(slot, version, p, T0 + 500);
        assertFalse(stale.changed(), "slow_call_failed of a slow call counted before the breaker opened and closed "
                + "must change nothing (it would mark the new window's call failed): " + stale);
        StateChange elsewhere = s.slowCallFailed(slot + 1, b.state().version(), p, T0 + 600);
        assertFalse(elsewhere.changed(), "slow_call_failed of a slot not in the window must change nothing: "
                + elsewhere);
        StateChange own = s.slowCallFailed(slot, b.state().version(), p, T0 + 700);
        assertCounts(own.state(), 1, 1, 1, "the new slow call marked failed under its own version");
    }
}

package dev.redeye.tck;

import static dev.redeye.tck.Scripted.assertOpensAt;
import static dev.redeye.tck.TckSupport.FORCED_WAIT_MILLIS;
import static dev.redeye.tck.TckSupport.LONG_TTL;
import static dev.redeye.tck.TckSupport.SHORT_STATE_TTL;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.claims;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.feed;
import static dev.redeye.tck.TckSupport.token;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R12 (AtomicUpdates, modes): an operator's {@code force_mode} is a transition, a stored mode never
 * expires, {@link BreakerMode#METRICS_ONLY} publishes {@code WOULD_OPEN} instead of opening,
 * {@link BreakerMode#DISABLED} records nothing, and forcing a status overrides a mode as {@code Transitions} says.
 * Run by {@link StoreTck}.
 */
interface ModeRules extends TckContext {
    /** A count window of 4 at 50 %, minimum 4, in {@code mode}. */
    static Policy windowIn(BreakerMode mode) {
        return Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 4).failureRateThreshold(50)
                .minimumNumberOfCalls(4).mode(mode).jitter(0.0).build();
    }

    /**
     * R12.1 force_mode is a transition: from any state (open, closed, absent) it closes the breaker with fresh
     * counters and the mode stored, version + 1, MODE_CHANGED, also when the same mode is stored already. If this
     * fails, check the force_mode operation (code 12): Transitions.forceMode, the mode field, the version bump.
     */
    @Test
    @DisplayName("R12.1 force_mode closes with the mode stored: version + 1, MODE_CHANGED")
    default void r12_1_forceModeIsATransition() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy p = consecutive(1);
        Scripted s = new Scripted(clients, key("mode"), "consecutive strategy, threshold 1");
        s.play(p, "F");
        assertTrue(s.model().open(), "one failure opens at threshold 1");
        for (BreakerMode mode : new BreakerMode[] {BreakerMode.METRICS_ONLY, BreakerMode.METRICS_ONLY,
            BreakerMode.DISABLED, BreakerMode.NORMAL, BreakerMode.DEFAULT}) {
            BreakerState before = s.model();
            StateChange c = s.forceMode(mode, p, T0 + 100);
            assertEquals(TransitionKind.MODE_CHANGED, c.transition(), "force_mode(" + mode + ") is a transition");
            assertEquals(before.version() + 1, c.state().version(), "force_mode(" + mode + "): version + 1");
            assertEquals(mode, c.state().mode(), "force_mode(" + mode + ") stores the mode");
            assertFalse(c.state().open(), "force_mode(" + mode + ") closes the breaker");
        }
        Scripted absent = new Scripted(clients, key("mode-absent"), "a key never written");
        StateChange created = absent.forceMode(BreakerMode.DISABLED, p, T0);
        assertEquals(TransitionKind.MODE_CHANGED, created.transition(), "force_mode on a key never written is a "
                + "transition");
        assertEquals(BreakerMode.DISABLED, clients[0].get(key("mode-absent")).orElseThrow().mode(),
                "the mode stored on a key never written");
    }

    /**
     * R12.2 force_mode removes every trial claim of the key in the same step, as a forced close does: right after
     * it, every permit can be claimed again. If this fails, check that the force_mode operation removes the claims
     * (AtomicOperation.removesClaims() is true for it).
     */
    @Test
    @DisplayName("R12.2 force_mode removes every trial claim of the key")
    default void r12_2_forceModeRemovesClaims() {
        Store a = client();
        Store b = client();
        TrialClaims ca = claims(a);
        AtomicUpdates ub = updates(b);
        String k = key("mode-claims");
        a.put(k, TransitionRules.openState(T0, 5), STATE_TTL);
        token(ca.claimTrial(k, 1, LONG_TTL), "the trial claim of the open breaker");
        assertEquals(Optional.empty(), ca.claimTrial(k, 1, LONG_TTL), "the only permit is taken");
        StateChange c = ub.apply(k, AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), consecutive(1), T0 + 1_000);
        assertEquals(TransitionKind.MODE_CHANGED, c.transition(), "force_mode is a transition");
        token(claims(b).claimTrial(k, 1, LONG_TTL), "a claim right after force_mode: force_mode must remove every "
                + "live claim of the key");
    }

    /**
     * R12.3 The feed publishes force_mode's MODE_CHANGED and METRICS_ONLY's WOULD_OPEN with the state and version
     * of the change. If this fails, check that the store publishes every transition kind, the codes 8
     * (mode_changed) and 9 (would_open) included.
     */
    @Test
    @DisplayName("R12.3 MODE_CHANGED and WOULD_OPEN are published on the feed")
    default void r12_3_modeTransitionsArePublished() {
        Store a = client();
        Store b = client();
        feed(a);
        AtomicUpdates ub = updates(b);
        FeedCollector events = FeedCollector.subscribe(a);
        awaitLive(b, events);
        String k = key("mode-feed");
        Policy p = windowIn(BreakerMode.NORMAL);
        StateChange changed = ub.apply(k, AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), p, T0);
        TransitionEvent e = await(events, k, changed.state().version(), "the subscriber of force_mode");
        assertEquals(TransitionKind.MODE_CHANGED, e.kind(), "the kind of force_mode's event");
        assertSameState(changed.state(), e.state(), "the state of force_mode's event");
        StateChange would = null;
        for (int i = 0; i < 4; i++) {
            would = ub.apply(k, AtomicOperation.failure(), p, T0 + 10 + i);
        }
        assertEquals(TransitionKind.WOULD_OPEN, would.transition(), "4 failures of 4 in METRICS_ONLY would open");
        TransitionEvent w = await(events, k, would.state().version(), "the subscriber of the WOULD_OPEN transition");
        assertEquals(TransitionKind.WOULD_OPEN, w.kind(), "the kind of the WOULD_OPEN event");
        assertEquals(BreakerStatus.CLOSED, w.from(), "WOULD_OPEN is published from CLOSED");
        assertSameState(would.state(), w.state(), "the state of the WOULD_OPEN event");
    }

    /**
     * R12.4 (real time) A stored mode never expires: a state with a mode put with a 300 ms ttl, a force_mode
     * and a write in a stored mode under a stateTtl of 300 ms are all still readable, in their mode, 800 ms later
     * (a lapsed mode would silently re-enable a breaker an operator disabled). If this fails, check that the store
     * keeps a pinned state (BreakerState.pinned(): forced, or a mode other than DEFAULT) without expiry, on put and
     * on atomic writes, as it does a forced state (R1.9).
     */
    @Test
    @DisplayName("R12.4 (real time) a stored mode never expires")
    default void r12_4_storedModeNeverExpires() throws InterruptedException {
        Store a = client();
        Store b = client();
        String put = key("mode-put-ttl");
        BreakerState metrics = BreakerState.builder().mode(BreakerMode.METRICS_ONLY).failures(1).version(3).build();
        a.put(put, metrics, SHORT_STATE_TTL);
        Optional<AtomicUpdates> up = a.capability(AtomicUpdates.class);
        Policy p = PlainStoreRules.shortLived(SHORT_STATE_TTL, 3);
        String forced = key("mode-force-ttl");
        String written = key("mode-write-ttl");
        if (up.isPresent()) {
            up.get().apply(forced, AtomicOperation.forceMode(BreakerMode.DISABLED), p, T0);
            up.get().apply(written, AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), p, T0);
            up.get().apply(written, AtomicOperation.failure(), p, T0 + 1);
        }
        Thread.sleep(FORCED_WAIT_MILLIS);
        Optional<BreakerState> read = b.get(put);
        assertTrue(read.isPresent(), "a state in METRICS_ONLY put with a ttl of " + SHORT_STATE_TTL.toMillis()
                + " ms was gone " + FORCED_WAIT_MILLIS + " ms later: the operator's mode lapsed");
        assertEquals(BreakerMode.METRICS_ONLY, read.get().mode(), "the mode read back: " + read.get());
        if (up.isPresent()) {
            Optional<BreakerState> f = b.get(forced);
            assertTrue(f.isPresent() && f.get().mode() == BreakerMode.DISABLED, "force_mode(DISABLED) under a "
                    + "stateTtl of " + p.stateTtlMillis() + " ms, " + FORCED_WAIT_MILLIS + " ms later: " + f);
            Optional<BreakerState> w = b.get(written);
            assertTrue(w.isPresent() && w.get().mode() == BreakerMode.METRICS_ONLY && w.get().failures() == 1,
                    "a failure recorded in METRICS_ONLY under a stateTtl of " + p.stateTtlMillis() + " ms, "
                            + FORCED_WAIT_MILLIS + " ms later: " + w);
        }
    }

    /**
     * R12.5 In METRICS_ONLY (the policy's mode, or the stored one) the outcome where the breaker would open keeps
     * it closed: its counters and window are reset, version + 1, WOULD_OPEN; counting then starts again. If this
     * fails, check the trip rule of every strategy: in METRICS_ONLY it resets failures, errorRate, samples and the
     * window and reports WOULD_OPEN instead of opening.
     */
    @Test
    @DisplayName("R12.5 METRICS_ONLY reports WOULD_OPEN and resets the counters instead of opening")
    default void r12_5_metricsOnlyWouldOpen() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Scripted policyMode = new Scripted(clients, key("metrics-policy"), "count window of 4 at 50 %, policy mode "
                + "METRICS_ONLY");
        Policy metrics = windowIn(BreakerMode.METRICS_ONLY);
        assertOpensAt(0, policyMode.play(metrics, "FFFFSFSF"), "F F F F S F S F in METRICS_ONLY",
                "METRICS_ONLY never opens");
        assertEquals(2, policyMode.count(TransitionKind.WOULD_OPEN), "WOULD_OPEN after F F F F and again after "
                + "S F S F (the counting starts again after the first)");
        assertNull(policyMode.model().window(), "the window is reset at WOULD_OPEN");
        Scripted stored = new Scripted(clients, key("metrics-stored"), "consecutive strategy at 2, stored mode "
                + "METRICS_ONLY");
        Policy p = consecutive(2);
        stored.forceMode(BreakerMode.METRICS_ONLY, p, T0);
        assertOpensAt(0, stored.play(p, "FF", 10, 20), "F F in a stored METRICS_ONLY", "METRICS_ONLY never opens");
        assertEquals(1, stored.count(TransitionKind.WOULD_OPEN), "the second failure would open");
        assertEquals(0, stored.model().failures(), "WOULD_OPEN resets the failures");
    }

    /**
     * R12.6 In DISABLED (the policy's mode, or the stored one) no outcome changes anything: failures, slow
     * outcomes and slow calls write nothing (a key never written stays absent) and never open the breaker. If this
     * fails, check that every outcome rule returns the state unchanged when the mode in force is DISABLED.
     */
    @Test
    @DisplayName("R12.6 DISABLED records nothing")
    default void r12_6_disabledRecordsNothing() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy disabled = windowIn(BreakerMode.DISABLED);
        Scripted absent = new Scripted(clients, key("disabled-policy"), "policy mode DISABLED");
        absent.play(disabled, "FFFFsf");
        absent.slowCall(disabled, T0 + 100);
        assertEquals(Optional.empty(), clients[0].get(key("disabled-policy")), "outcomes in DISABLED must not "
                + "create the key");
        Policy p = consecutive(1);
        Scripted stored = new Scripted(clients, key("disabled-stored"), "stored mode DISABLED");
        BreakerState off = stored.forceMode(BreakerMode.DISABLED, p, T0).state();
        stored.play(p, "FFsfS", 10, 20, 30, 40, 50);
        stored.play(windowIn(BreakerMode.NORMAL), "FFFF", 60, 70, 80, 90);
        assertSameState(off, clients[1].get(key("disabled-stored")).orElseThrow(), "the state in DISABLED after "
                + "failures and slow outcomes");
    }

    /**
     * R12.7 Forcing a status overrides a mode as Transitions says: force OPEN or HALF_OPEN makes NORMAL the mode in
     * force (stored as DEFAULT when the policy's mode is NORMAL, as NORMAL otherwise), force CLOSED stores DEFAULT
     * (the policy's mode applies again). If this fails, check the mode written by the force operations (codes 5 to
     * 7).
     */
    @Test
    @DisplayName("R12.7 forcing OPEN, HALF_OPEN or CLOSED sets the stored mode as Transitions says")
    default void r12_7_forceOverridesModes() {
        Store[] clients = {client(), client()};
        updates(clients[0]);
        Policy normal = consecutive(1);
        Scripted s = new Scripted(clients, key("force-modes"), "policy mode NORMAL");
        s.forceMode(BreakerMode.DISABLED, normal, T0);
        assertEquals(BreakerMode.DEFAULT, s.force(BreakerStatus.FORCED_OPEN, normal, T0 + 10).state().mode(),
                "force OPEN over a stored DISABLED, policy mode NORMAL: the stored mode becomes DEFAULT");
        s.forceMode(BreakerMode.METRICS_ONLY, normal, T0 + 20);
        assertEquals(BreakerMode.DEFAULT, s.force(BreakerStatus.CLOSED, normal, T0 + 30).state().mode(),
                "force CLOSED over a stored METRICS_ONLY: DEFAULT");
        Policy off = Policy.builder().failureThreshold(1).mode(BreakerMode.DISABLED).jitter(0).build();
        Scripted d = new Scripted(clients, key("force-modes-disabled"), "policy mode DISABLED");
        assertEquals(BreakerMode.NORMAL, d.force(BreakerStatus.FORCED_OPEN, off, T0).state().mode(),
                "force OPEN under a policy in DISABLED stores NORMAL (an operator's opening is obeyed)");
        assertEquals(BreakerMode.NORMAL, d.force(BreakerStatus.HALF_OPEN, off, T0 + 10).state().mode(),
                "force HALF_OPEN under a policy in DISABLED stores NORMAL");
        StateChange closed = d.force(BreakerStatus.CLOSED, off, T0 + 20);
        assertEquals(BreakerMode.DEFAULT, closed.state().mode(), "force CLOSED stores DEFAULT: the policy's "
                + "DISABLED applies again");
        d.play(off, "FF", 30, 40);
        assertSameState(closed.state(), clients[0].get(key("force-modes-disabled")).orElseThrow(), "failures after "
                + "force CLOSED under a policy in DISABLED");
    }
}

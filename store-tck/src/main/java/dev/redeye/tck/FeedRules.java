package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.EVERY_KIND;
import static dev.redeye.tck.TckSupport.ONE;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.describe;
import static dev.redeye.tck.TckSupport.hostileNames;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.sleep;
import static dev.redeye.tck.TckSupport.subscribe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R6 (TransitionFeed). Transitions are made with whatever the store offers (see
 * {@link TckContext#transition}), puts included, so a store that declares a feed and nothing atomic
 * still runs every rule. Run by {@link StoreTck}.
 */
interface FeedRules extends TckContext {
    /**
     * R6.1 A transition produces one event carrying the operation name, the new state and its version. If this
     * fails, check that every transition is published with the full state.
     */
    @Test
    @DisplayName("R6.1 a transition produces one event with the operation, the new state and its version")
    default void r6_1_transitionProducesOneEvent() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("op");
        StateChange change = transition(b, k);
        TransitionEvent e = await(c, k, change.state().version(), "the subscriber");
        assertEquals(k, e.operation(), "event operation");
        assertEquals(change.transition(), e.kind(), "event kind");
        assertSameState(change.state(), e.state(), "event state");
        assertEquals(BreakerStatus.CLOSED, e.from(), "event from");
        flush(b, c);
        assertEquals(1, c.of(k).size(), "events for one transition: " + c.of(k));
        if (b.capability(AtomicUpdates.class).isEmpty()) {
            // The engine writes what the store cannot do atomically with get-then-put: such a put is published.
            String kp = key("put");
            StateChange put = putTransition(b, kp);
            TransitionEvent pe = await(c, kp, put.state().version(), "the subscriber (a put raising the version, "
                    + "which a store without both atomic capabilities must publish)");
            assertSameState(put.state(), pe.state(), "event state of a put");
        }
    }

    /**
     * R6.2 Sub-threshold increments and no-op successes produce no event. If this fails, check that only
     * transitions are published.
     */
    @Test
    @DisplayName("R6.2 sub-threshold increments and no-op successes produce no event")
    default void r6_2_nonTransitionsProduceNoEvent() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("quiet");
        Policy p = consecutive(10);
        Optional<AtomicUpdates> rec = b.capability(AtomicUpdates.class);
        if (rec.isPresent()) {
            rec.get().apply(k, AtomicOperation.success(), p, now()); // unknown key: nothing to clear
            b.put(k, BreakerState.INITIAL, STATE_TTL);
            rec.get().apply(k, AtomicOperation.success(), p, now()); // stored, nothing to clear
            for (int i = 0; i < 5; i++) {
                rec.get().apply(k, AtomicOperation.failure(), p, now()); // sub-threshold
            }
        } else {
            // The engine's fallback writes counters with puts that keep the version: no event.
            BreakerState s = BreakerState.INITIAL;
            b.put(k, s, STATE_TTL);
            for (int i = 0; i < 5; i++) {
                s = Transitions.recordFailure(s, p, now()).state(); // sub-threshold
                b.put(k, s, STATE_TTL);
            }
            b.put(k, Transitions.recordSuccess(s, p, now()).state(), STATE_TTL); // a clearing write
        }
        flush(b, c);
        assertEquals(List.of(), c.of(k), "events for non-transitions");
    }

    /**
     * R6.3 Three subscribers on one client and one on the other client each receive the event. If this fails,
     * check the fan-out to every subscriber of every store instance.
     */
    @Test
    @DisplayName("R6.3 three subscribers on one client and one on the other each receive the event")
    default void r6_3_everySubscriberReceives() {
        Store a = client();
        Store b = client();
        FeedCollector[] cs = {subscribe(a), subscribe(a), subscribe(a), subscribe(b)};
        awaitLive(b, cs);
        String k = key("fan-out");
        for (Store writer : new Store[] {a, b}) {
            long v = transition(writer, k).state().version();
            for (int i = 0; i < cs.length; i++) {
                await(cs[i], k, v, "subscriber " + (i + 1) + (i < 3 ? " (client A)" : " (client B)"));
            }
        }
    }

    /** R6.4 Unsubscribing stops delivery to that subscriber only. If this fails, check Subscription.close. */
    @Test
    @DisplayName("R6.4 unsubscribing stops delivery to that subscriber only")
    default void r6_4_unsubscribeStopsOnlyThatSubscriber() {
        Store a = client();
        Store b = client();
        FeedCollector gone = subscribe(a);
        FeedCollector stays = subscribe(a);
        awaitLive(b, gone, stays);
        gone.subscription.close();
        gone.subscription.close();
        gone.events.clear();
        String k = key("unsub");
        long v = transition(b, k).state().version();
        await(stays, k, v, "the remaining subscriber");
        flush(b, stays);
        assertEquals(List.of(), gone.of(k), "events delivered after unsubscribing");
    }

    /** R6.5 Events name hostile operation names exactly. If this fails, check the event payload encoding. */
    @Test
    @DisplayName("R6.5 events name hostile operation names exactly")
    default void r6_5_hostileNamesInEvents() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        for (String name : hostileNames()) {
            String k = key(name);
            long v = transition(b, k).state().version();
            if (!eventually(() -> c.has(k, v))) {
                Set<String> seen = c.events.stream().map(e -> describe(e.operation())).collect(Collectors.toSet());
                fail("no event named exactly " + describe(k) + "; events seen: " + seen);
            }
        }
    }

    /**
     * R6.6 The event's version equals the stored version after the transition. If this fails, check that the
     * event carries the state written, not a pre-image.
     */
    @Test
    @DisplayName("R6.6 the event's version equals the stored version after the transition")
    default void r6_6_eventVersionEqualsStoredVersion() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("versions");
        for (int i = 0; i < 4; i++) {
            StateChange ch = transition(i % 2 == 0 ? b : a, k);
            long stored = b.get(k).orElseThrow().version();
            assertEquals(stored, ch.state().version(), "returned version vs stored version");
            TransitionEvent e = await(c, k, stored, "the subscriber");
            assertSameState(b.get(k).orElseThrow(), e.state(), "event state vs stored state");
        }
    }

    /**
     * R6.7 {@code close()} ends every subscription and frees its threads and connections. If this fails, check
     * that close stops the feed threads and ends the feed connection.
     */
    @Test
    @DisplayName("R6.7 close ends every subscription and frees its threads")
    default void r6_7_closeEndsSubscriptions() {
        Store writer = client();
        FeedCollector witness = subscribe(writer);
        awaitLive(writer, witness);
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        Store closing = client();
        FeedCollector c1 = subscribe(closing);
        FeedCollector c2 = subscribe(closing);
        awaitLive(writer, c1, c2, witness);
        closing.close();
        c1.events.clear();
        c2.events.clear();
        String k = key("after-close");
        long v = transition(writer, k).state().version();
        await(witness, k, v, "the live subscriber of the other client");
        flush(writer, witness);
        assertEquals(List.of(), c1.of(k), "events delivered to subscriber 1 after close()");
        assertEquals(List.of(), c2.of(k), "events delivered to subscriber 2 after close()");
        AtomicReference<Set<String>> leaked = new AtomicReference<>(Set.of());
        boolean freed = eventually(() -> {
            leaked.set(Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t) && t.isAlive() && !jvmShared(t) && !hooks().backendThread(t))
                    .map(Thread::getName).collect(Collectors.toSet()));
            return leaked.get().isEmpty();
        });
        assertTrue(freed, "threads started by the closed store are still alive " + patience().toMillis()
                + " ms after close(): " + leaked.get());
    }

    /**
     * Cuts {@code a}'s feed connection with the {@code interruptFeed} hook (the rule is skipped without it) and
     * waits until {@code c}, subscribed on {@code a}, is told of a gap.
     */
    private void cutFeedAndAwaitGap(Store a, FeedCollector c) throws Exception {
        int gapsBefore = c.gaps.get();
        try {
            hooks().interruptFeed(a);
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("the interruptFeed(Store) hook is not provided");
        }
        if (!eventually(() -> c.gaps.get() > gapsBefore)) {
            fail("onGap was not called within " + patience().toMillis() + " ms after the feed connection was cut");
        }
    }

    private static boolean jvmShared(Thread t) {
        String n = t.getName();
        return n.startsWith("ForkJoinPool.commonPool") || n.equals("Attach Listener") || n.startsWith("JFR")
                || n.equals("Common-Cleaner") || n.startsWith("process reaper") || n.startsWith("surefire");
    }

    /**
     * R6.8 After the {@code interruptFeed} hook cuts the feed connection, onGap fires and later transitions are
     * delivered again. If this fails, check reconnection with backoff and the onGap callback. Skipped when the
     * hook is not provided.
     */
    @Test
    @DisplayName("R6.8 after the feed connection is cut, onGap fires and delivery resumes")
    default void r6_8_feedRecoversAfterInterruption() throws Exception {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        cutFeedAndAwaitGap(a, c);
        String k = key("after-gap");
        long deadline = System.nanoTime() + 2 * patience().toNanos();
        while (true) {
            long v = transition(b, k).state().version();
            for (int i = 0; i < 25; i++) {
                if (c.has(k, v)) {
                    return;
                }
                sleep(20);
            }
            if (System.nanoTime() > deadline) {
                fail("no transition was delivered within " + 2 * patience().toMillis() + " ms after the cut");
            }
        }
    }

    /**
     * R6.9 Events of one key reach each subscriber in version order, also while two clients make transitions
     * of the key concurrently (with AtomicUpdates; a store without it gets its transitions by turns, since
     * racing get-then-put writers lose updates). If this fails, check the publication order (publish inside
     * the atomic step, or drop late, older events with {@code FeedSubscribers.inVersionOrder}).
     */
    @Test
    @DisplayName("R6.9 events of one key reach each subscriber in version order")
    default void r6_9_eventsOfOneKeyArriveInVersionOrder() throws Exception {
        Store a = client();
        Store b = client();
        FeedCollector[] cs = {subscribe(a), subscribe(b)};
        awaitLive(b, cs);
        String k = key("ordered");
        // Without AtomicUpdates some transitions are get-then-put, and two such writers racing lose
        // updates and move the stored version backwards, which no feed can order: they take turns instead.
        Object turns = a.capability(AtomicUpdates.class).isPresent() ? null : new Object();
        race(2, new Store[] {a, b}, (t, c) -> {
            for (int i = 0; i < 40; i++) {
                if (turns == null) {
                    concurrentTransition(c, k, i);
                } else {
                    synchronized (turns) {
                        concurrentTransition(c, k, i);
                    }
                }
            }
        });
        long last = a.get(k).orElseThrow().version();
        for (int i = 0; i < cs.length; i++) {
            String who = "the subscriber on client " + (i == 0 ? "A" : "B");
            await(cs[i], k, last, who);
            long previous = Long.MIN_VALUE;
            List<Long> versions = cs[i].of(k).stream().map(TransitionEvent::version).collect(Collectors.toList());
            for (long v : versions) {
                if (v <= previous) {
                    fail(who + " received version " + v + " of " + describe(k) + " after version " + previous
                            + ": events of one key must arrive in version order; received " + versions);
                }
                previous = v;
            }
        }
    }

    /** A transition of {@code k} if it still is one when it lands (two clients race): never asserted. */
    private void concurrentTransition(Store c, String k, int i) {
        Optional<AtomicUpdates> tr = c.capability(AtomicUpdates.class);
        Optional<AtomicUpdates> rec = c.capability(AtomicUpdates.class);
        if (tr.isPresent()) {
            tr.get().apply(k, AtomicOperation.force(i % 2 == 0 ? BreakerStatus.HALF_OPEN : BreakerStatus.CLOSED), ONE, now());
        } else if (rec.isPresent()) {
            BreakerState cur = c.get(k).orElse(null);
            if (cur != null && cur.open()) {
                c.put(k, Transitions.closedFrom(cur), STATE_TTL);
            } else {
                rec.get().apply(k, AtomicOperation.failure(), ONE, now());
            }
        } else {
            putTransition(c, k);
        }
    }

    /**
     * R6.10 (real time) After a subscription is live, every transition made through the other client is
     * delivered within 1 s: a silent or slow feed fails. If this fails, check that the feed delivers at all
     * (connection, reader thread, publication of every transition).
     */
    @Test
    @DisplayName("R6.10 (real time) every transition through the other client is delivered within 1 s")
    default void r6_10_transitionsAreDeliveredPromptly() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("prompt");
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            long v = transition(b, k).state().version();
            long deadline = start + TimeUnit.SECONDS.toNanos(1);
            while (!c.has(k, v) && System.nanoTime() < deadline) {
                sleep(5);
            }
            if (!c.has(k, v)) {
                fail("transition " + (i + 1) + " of " + describe(k) + " (version " + v + "), made through the other "
                        + "client, was not delivered within 1 s: the feed is silent or slow (" + c.events.size()
                        + " event(s) received in all)");
            }
        }
    }

    /**
     * R6.11 Every TransitionKind produces exactly one event with its kind, version and state. If this fails,
     * check the publication of the kind the message names.
     */
    @Test
    @DisplayName("R6.11 every transition kind (opened, reopened, closed, forced) produces exactly one event")
    default void r6_11_everyTransitionKindProducesOneEvent() {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("kinds");
        for (int i = 0; i < EVERY_KIND.length; i++) {
            TransitionKind kind = EVERY_KIND[i];
            Store writer = i % 2 == 0 ? b : a;
            StateChange change = make(writer, k, kind, now());
            assertEquals(kind, change.transition(), "the TCK's " + kind + " transition of " + describe(k)
                    + " returned another kind: " + change);
            String what = "the " + kind + " transition (" + how(writer, kind) + ", through client "
                    + (writer == a ? "A" : "B") + ")";
            TransitionEvent e = await(c, k, change.state().version(), "the subscriber of client A, for " + what + ",");
            assertEquals(kind, e.kind(), "the kind of the event of " + what);
            assertSameState(change.state(), e.state(), "the state of the event of " + what);
            if (!kind.isForced()) {
                assertEquals(kind.from(), e.from(), "the status the event of " + what + " comes from");
            }
        }
        flush(b, c);
        List<String> got = c.of(k).stream().map(e -> e.kind() + " v" + e.version()).collect(Collectors.toList());
        assertEquals(EVERY_KIND.length, got.size(), "events of " + EVERY_KIND.length + " transitions, one each: "
                + got);
    }

    /**
     * One transition of {@code kind} on {@code k} with the store's own call for it, or the put the engine writes
     * when the store lacks that call (its get-then-put fallback).
     */
    private static StateChange make(Store s, String k, TransitionKind kind, long now) {
        Optional<AtomicUpdates> rec = s.capability(AtomicUpdates.class);
        Optional<AtomicUpdates> tr = s.capability(AtomicUpdates.class);
        BreakerState cur = s.get(k).orElse(null);
        long v = cur == null ? 0 : cur.version();
        StateChange c;
        switch (kind) {
            case OPENED:
                if (rec.isPresent()) {
                    return rec.get().apply(k, AtomicOperation.failure(), ONE, now);
                }
                c = Transitions.recordFailure(cur, ONE, now);
                break;
            case REOPENED:
                if (tr.isPresent()) {
                    return tr.get().apply(k, AtomicOperation.trialFailed(v), ONE, now);
                }
                c = Transitions.trialFailed(cur, v, ONE, now);
                break;
            case CLOSED:
                if (tr.isPresent()) {
                    return tr.get().apply(k, AtomicOperation.trialSucceeded(v), ONE, now);
                }
                c = Transitions.trialSucceeded(cur, v, ONE, now);
                break;
            default:
                if (tr.isPresent()) {
                    return tr.get().apply(k, AtomicOperation.force(kind.to()), ONE, now);
                }
                c = Transitions.force(cur, kind.to(), ONE, now);
        }
        s.put(k, c.state(), STATE_TTL);
        return c;
    }

    private static String how(Store s, TransitionKind kind) {
        boolean recording = kind == TransitionKind.OPENED;
        Class<?> cap = AtomicUpdates.class;
        if (s.capability(cap).isEmpty()) {
            return "a put of the state, as the engine writes it without " + cap.getSimpleName();
        }
        switch (kind) {
            case OPENED:
                return "recordFailure";
            case REOPENED:
                return "trialFailed";
            case CLOSED:
                return "trialSucceeded";
            default:
                return "force(" + kind.to() + ")";
        }
    }

    /**
     * R6.12 After the feed connection is cut and a write is lost (the rewind hook), the next transition, which
     * re-issues a version delivered before the gap, is delivered. If this fails, check that the feed forgets
     * the versions it delivered on every gap. Skipped when a hook is not provided.
     */
    @Test
    @DisplayName("R6.12 after a gap and a lost write, a re-issued version is delivered again")
    default void r6_12_reissuedVersionsAreDeliveredAfterAGap() throws Exception {
        Store a = client();
        Store b = client();
        FeedCollector c = subscribe(a);
        awaitLive(b, c);
        String k = key("rewound");
        StateChange earlier = transition(b, k);
        StateChange lost = transition(b, k);
        long v = lost.state().version();
        await(c, k, v, "the subscriber");
        cutFeedAndAwaitGap(a, c);
        try {
            hooks().rewind(b, k, earlier.state());
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("the rewind(Store, String, BreakerState) hook is not provided");
        }
        BreakerState back = b.get(k).orElse(null);
        String diff = back == null ? "the key reads as absent" : States.diff(earlier.state(), back);
        if (diff != null) {
            fail("the rewind hook did not write the earlier state back (" + diff + "): check the test's rewind "
                    + "implementation");
        }
        awaitLive(b, c);
        // A feed may resume a little after it first delivers again (a listener registered member by member):
        // like R6.8, lose the write and re-issue the version every 500 ms until one arrives.
        long deadline = System.nanoTime() + 2 * patience().toNanos();
        while (true) {
            long before = c.of(k).stream().filter(e -> e.version() == v).count();
            StateChange again = transition(b, k);
            if (again.state().version() != v) {
                fail("after the rewind to version " + earlier.state().version() + ", the next transition has version "
                        + again.state().version() + ", not " + v + ": the rewind hook must leave the store as a lost "
                        + "write does, so that the next transition re-issues the lost version");
            }
            for (int i = 0; i < 25; i++) {
                if (c.of(k).stream().filter(e -> e.version() == v).count() > before) {
                    return;
                }
                sleep(20);
            }
            if (System.nanoTime() > deadline) {
                fail("no transition of " + describe(k) + " to version " + v + " made after the gap was delivered "
                        + "within " + 2 * patience().toMillis() + " ms: version " + v + " was delivered before the gap "
                        + "(then lost by the backend), and the feed still drops it as a duplicate; events: "
                        + c.of(k).stream().map(e -> e.kind() + " v" + e.version()).collect(Collectors.toList()));
            }
            hooks().rewind(b, k, earlier.state());
        }
    }
}

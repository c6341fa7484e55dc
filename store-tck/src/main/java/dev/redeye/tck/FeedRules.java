package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.Transitions;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rules R6 (TransitionFeed). Extend {@link StoreTck}. */
abstract class FeedRules extends TransitionRules {
    private static final Policy ONE = consecutive(1);
    private final AtomicLong clock = new AtomicLong(T0);

    /** Collects what one subscriber receives. */
    static final class Collector implements Consumer<TransitionEvent> {
        final ConcurrentLinkedQueue<TransitionEvent> events = new ConcurrentLinkedQueue<>();
        final AtomicInteger gaps = new AtomicInteger();
        TransitionFeed.Subscription subscription;

        @Override
        public void accept(TransitionEvent e) {
            events.add(e);
        }

        List<TransitionEvent> of(String operation) {
            return events.stream().filter(e -> e.operation().equals(operation)).collect(Collectors.toList());
        }

        boolean has(String operation, long version) {
            return events.stream().anyMatch(e -> e.operation().equals(operation) && e.version() == version);
        }
    }

    static Collector subscribe(Store s) {
        Collector c = new Collector();
        c.subscription = feed(s).subscribe(c, c.gaps::incrementAndGet);
        if (c.subscription == null) {
            fail("subscribe returned null instead of a Subscription");
        }
        return c;
    }

    private long now() {
        return clock.addAndGet(1_000);
    }

    /**
     * Makes one transition of {@code k} through {@code writer}: an opening failure when closed, a forced close
     * when open (or a put of the closed state and an opening failure when the store only records).
     */
    StateChange transition(Store writer, String k) {
        Optional<AtomicRecording> rec = writer.capability(AtomicRecording.class);
        Optional<AtomicTransitions> tr = writer.capability(AtomicTransitions.class);
        Assumptions.assumeTrue(rec.isPresent() || tr.isPresent(),
                "TransitionFeed rules need AtomicRecording or AtomicTransitions to make a transition");
        BreakerState cur = writer.get(k).orElse(BreakerState.INITIAL);
        StateChange c;
        if (cur.open() && tr.isPresent()) {
            c = tr.get().force(k, BreakerStatus.CLOSED, ONE, now());
        } else if (rec.isPresent()) {
            if (cur.open()) {
                writer.put(k, Transitions.closedFrom(cur), STATE_TTL);
            }
            c = rec.get().recordFailure(k, ONE, now());
        } else {
            c = tr.get().force(k, BreakerStatus.FORCED_OPEN, ONE, now());
        }
        assertTrue(c.isTransition(), "the TCK's transition of " + describe(k) + " was not a transition: " + c);
        return c;
    }

    /**
     * Waits until every collector receives a transition made by {@code writer} (repeated every 200 ms), so
     * that subscriptions the store starts asynchronously are live before a rule relies on them.
     */
    void awaitLive(Store writer, Collector... collectors) {
        String warm = key("warm-up");
        long deadline = System.nanoTime() + patience().toNanos();
        while (true) {
            StateChange c = transition(writer, warm);
            for (int i = 0; i < 10; i++) {
                boolean all = true;
                for (Collector col : collectors) {
                    all &= col.has(warm, c.state().version());
                }
                if (all) {
                    return;
                }
                sleep(20);
            }
            if (System.nanoTime() > deadline) {
                fail("a new subscription received no transition within " + patience().toMillis() + " ms");
            }
        }
    }

    /** Makes a transition of a marker key and waits until {@code c} has it: everything sent before has arrived. */
    void flush(Store writer, Collector c) {
        String marker = key("marker");
        long v = transition(writer, marker).state().version();
        if (!eventually(() -> c.has(marker, v))) {
            fail("the marker transition was not delivered within " + patience().toMillis() + " ms");
        }
    }

    TransitionEvent await(Collector c, String op, long version, String who) {
        if (!eventually(() -> c.has(op, version))) {
            fail(who + " did not receive the transition of " + describe(op) + " to version " + version + " within "
                    + patience().toMillis() + " ms; it received " + c.events.size() + " event(s)");
        }
        return c.of(op).stream().filter(e -> e.version() == version).findFirst().orElseThrow();
    }

    /**
     * R6.1 A transition produces one event carrying the operation name, the new state and its version. If this
     * fails, check that every transition is published with the full state.
     */
    @Test
    @DisplayName("R6.1 a transition produces one event with the operation, the new state and its version")
    void r6_1_transitionProducesOneEvent() {
        Store a = client();
        Store b = client();
        Collector c = subscribe(a);
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
    }

    /**
     * R6.2 Sub-threshold increments and no-op successes produce no event. If this fails, check that only
     * transitions are published.
     */
    @Test
    @DisplayName("R6.2 sub-threshold increments and no-op successes produce no event")
    void r6_2_nonTransitionsProduceNoEvent() {
        Store a = client();
        Store b = client();
        AtomicRecording rec = recording(b);
        Collector c = subscribe(a);
        awaitLive(b, c);
        String k = key("quiet");
        Policy p = consecutive(10);
        rec.recordSuccess(k, p, now()); // unknown key: nothing to clear
        b.put(k, BreakerState.INITIAL, STATE_TTL);
        rec.recordSuccess(k, p, now()); // stored, nothing to clear
        for (int i = 0; i < 5; i++) {
            rec.recordFailure(k, p, now()); // sub-threshold
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
    void r6_3_everySubscriberReceives() {
        Store a = client();
        Store b = client();
        Collector[] cs = {subscribe(a), subscribe(a), subscribe(a), subscribe(b)};
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
    void r6_4_unsubscribeStopsOnlyThatSubscriber() {
        Store a = client();
        Store b = client();
        Collector gone = subscribe(a);
        Collector stays = subscribe(a);
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
    void r6_5_hostileNamesInEvents() {
        Store a = client();
        Store b = client();
        Collector c = subscribe(a);
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
    void r6_6_eventVersionEqualsStoredVersion() {
        Store a = client();
        Store b = client();
        Collector c = subscribe(a);
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
    void r6_7_closeEndsSubscriptions() {
        Store writer = client();
        Collector witness = subscribe(writer);
        awaitLive(writer, witness);
        Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        Store closing = client();
        Collector c1 = subscribe(closing);
        Collector c2 = subscribe(closing);
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
                    .filter(t -> !before.contains(t) && t.isAlive() && !jvmShared(t))
                    .map(Thread::getName).collect(Collectors.toSet()));
            return leaked.get().isEmpty();
        });
        assertTrue(freed, "threads started by the closed store are still alive " + patience().toMillis()
                + " ms after close(): " + leaked.get());
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
    void r6_8_feedRecoversAfterInterruption() throws Exception {
        Store a = client();
        Store b = client();
        Collector c = subscribe(a);
        awaitLive(b, c);
        int gapsBefore = c.gaps.get();
        try {
            interruptFeed(a);
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("the interruptFeed(Store) hook is not provided");
        }
        if (!eventually(() -> c.gaps.get() > gapsBefore)) {
            fail("onGap was not called within " + patience().toMillis() + " ms after the feed connection was cut");
        }
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
}

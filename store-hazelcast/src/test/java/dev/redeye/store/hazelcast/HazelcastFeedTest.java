package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.MapService;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.TransitionFeed;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The feed beyond the TCK: a version gap signals onGap and stragglers are dropped (order per key), a client
 * reconnect signals onGap and delivery resumes, and close removes the store's listener from every member.
 */
@ExtendWith(SharedClusters.class)
class HazelcastFeedTest {
    private static final Policy ONE = Policy.builder().failureThreshold(1).jitter(0).build();

    static final class Collector {
        final List<TransitionEvent> events = new CopyOnWriteArrayList<>();
        final AtomicInteger gaps = new AtomicInteger();
        TransitionFeed.Subscription sub;

        static Collector on(HazelcastStore s) {
            Collector c = new Collector();
            c.sub = s.subscribe(c.events::add, c.gaps::incrementAndGet);
            return c;
        }

        List<Long> versions(String op) {
            return events.stream().filter(e -> e.operation().equals(op)).map(TransitionEvent::version).toList();
        }
    }

    static boolean eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    private static String map() {
        return "feed-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A value as a transition to {@code version} writes it, put in the map directly. */
    private static String transitionValue(long version) {
        BreakerState prev = BreakerState.INITIAL.withVersion(version - 1);
        BreakerState next = prev.toBuilder().open(true).failures(1).version(version).build();
        StateChange c = new StateChange(prev, next, TransitionKind.OPENED);
        return StateValues.encode(StoredValue.of(next, c.toEvent("k", ONE, 1), 0L, 0L, java.util.Map.of()));
    }

    /** On a member (whose listener registration is cluster-wide at once, so no settling gap) for exact gap counts. */
    @Test
    void aVersionGapSignalsOnGapAndStragglersAreDropped() throws Exception {
        HazelcastInstance member = SharedClusters.embedded().cluster().members().get(0);
        HazelcastStore s = HazelcastStore.builder(member).map(map()).build();
        try {
            Collector c = Collector.on(s);
            IMap<String, Object> raw = SharedClusters.embedded().clientB().getMap(s.mapName());
            raw.set("k", transitionValue(10));
            assertTrue(eventually(() -> c.versions("k").equals(List.of(10L))), "first event: " + c.events);
            assertEquals(0, c.gaps.get(), "the first event of a key is no gap");
            raw.set("k", transitionValue(9)); // a straggler
            raw.set("k", transitionValue(10)); // a duplicate
            raw.set("k", transitionValue(11));
            assertTrue(eventually(() -> c.versions("k").contains(11L)));
            assertEquals(List.of(10L, 11L), c.versions("k"), "older and duplicate versions are dropped");
            assertEquals(0, c.gaps.get());
            raw.set("k", transitionValue(13)); // 12 never arrived
            assertTrue(eventually(() -> c.versions("k").contains(13L)));
            assertEquals(1, c.gaps.get(), "a version jump of 2 is a gap");
            raw.set("k", "redeye-state/2 failures=1&open=0"); // no kind: a plain write, filtered on the members
            raw.set("other", "garbage");
            s.apply("marker", AtomicOperation.force(BreakerStatus.FORCED_OPEN), ONE, 1);
            assertTrue(eventually(() -> !c.versions("marker").isEmpty()));
            assertEquals(List.of(10L, 11L, 13L), c.versions("k"));
        } finally {
            s.close();
        }
    }

    /**
     * Transitions of states with a sliding window or a stored mode are written in value format 3: the feed's
     * filter on the members lets them through like format 2's, and their events carry the window and the mode.
     */
    @Test
    void transitionsOfStatesWithAWindowOrAModeAreDeliveredWithThem() throws Exception {
        Policy window = Policy.builder().slidingWindow(dev.redeye.api.SlidingWindowType.COUNT_BASED, 3)
                .minimumNumberOfCalls(2).failureRateThreshold(50).jitter(0).build();
        HazelcastStore s = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map()).build();
        try {
            Collector c = Collector.on(s);
            s.apply("w", AtomicOperation.success(), window, 1);
            StateChange opened = s.apply("w", AtomicOperation.failure(), window, 2);
            assertEquals(TransitionKind.OPENED, opened.transition());
            StateChange mode = s.apply("m", AtomicOperation.forceMode(dev.redeye.api.BreakerMode.METRICS_ONLY), ONE, 3);
            assertTrue(eventually(() -> c.events.size() >= 2), "events: " + c.events);
            List<TransitionEvent> w = c.events.stream().filter(e -> e.operation().equals("w")).toList();
            List<TransitionEvent> m = c.events.stream().filter(e -> e.operation().equals("m")).toList();
            assertEquals(List.of(opened.toEvent("w", window, 2)), w);
            assertEquals(List.of(mode.toEvent("m", ONE, 3)), m);
            assertEquals(2, w.get(0).state().window().calls(), "the event carries the window");
            assertEquals(dev.redeye.api.BreakerMode.METRICS_ONLY, m.get(0).state().mode());
            assertEquals(0, c.gaps.get());
        } finally {
            s.close();
        }
    }

    /**
     * A quorum's opening is written in value format 4 (the state has contributions): the feed's filter on the
     * members lets it through like the other formats', in both modes, and its event carries the contributions.
     */
    @Test
    void aQuorumOpeningIsDeliveredWithItsContributions() throws Exception {
        Policy quorum = Policy.builder().failureThreshold(2).quorum(2).jitter(0).build();
        for (HazelcastStore.Mode mode : new HazelcastStore.Mode[] {HazelcastStore.Mode.NATIVE, HazelcastStore.Mode.CAS}) {
            HazelcastStore s = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map()).mode(mode)
                    .build();
            try {
                Collector c = Collector.on(s);
                s.apply("q", AtomicOperation.outcome(false, false, "pod-a"), quorum, 1);
                StateChange opened = s.apply("q", AtomicOperation.outcome(false, false, "pod-b"), quorum, 2);
                assertEquals(TransitionKind.OPENED, opened.transition(), mode.toString());
                assertTrue(eventually(() -> !c.events.isEmpty()), mode + ": no event");
                assertEquals(List.of(opened.toEvent("q", quorum, 2)), c.events, mode.toString());
                assertEquals(List.of("pod-b", "pod-a"), c.events.get(0).state().contributors().stream()
                        .map(dev.redeye.api.Contribution::instance).toList(), "the event carries the contributions");
                assertEquals(0, c.gaps.get());
            } finally {
                s.close();
            }
        }
    }

    @Test
    void aClientReconnectSignalsOnGapAndDeliveryResumes() throws Exception {
        String m = map();
        HazelcastInstance own = SharedClusters.embedded().cluster().newClient();
        HazelcastStore reader = HazelcastStore.builder(own).map(m).build();
        HazelcastStore writer = HazelcastStore.builder(SharedClusters.embedded().clientB()).map(m).build();
        try {
            Collector c = Collector.on(reader);
            long v1 = writer.apply("before", AtomicOperation.failure(), ONE, 1).state().version();
            assertTrue(eventually(() -> c.versions("before").contains(v1)));

            Hooks.cutConnections(own);
            assertTrue(eventually(() -> c.gaps.get() > 0), "onGap after the client lost its connections");
            // calls fail fast while the client is offline, and work again once it reconnected
            assertTrue(eventually(() -> {
                try {
                    reader.get("before");
                    return true;
                } catch (StoreException offline) {
                    return false;
                }
            }), "the client reconnects");
            int gapsAfterReconnect = c.gaps.get();
            assertTrue(gapsAfterReconnect >= 2, "onGap at the disconnect and at the reconnect: " + gapsAfterReconnect);
            long cut = System.nanoTime();
            long deadline = cut + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                long v = writer.apply("after", AtomicOperation.force(BreakerStatus.FORCED_OPEN), ONE, 2).state().version();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                while (System.nanoTime() < end && !c.versions("after").contains(v)) {
                    Thread.sleep(20);
                }
                if (c.versions("after").contains(v)) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "no event delivered within 30 s of the reconnect");
            }
            System.out.println("delivery resumed " + (System.nanoTime() - cut) / 1_000_000 + " ms after the reconnect");
        } finally {
            reader.close();
            writer.close();
            own.shutdown();
        }
    }

    @Test
    void closeRemovesTheListenerFromEveryMemberAndStopsTheThread() throws Exception {
        HazelcastStore s = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map()).build();
        List<HazelcastInstance> members = SharedClusters.embedded().cluster().members();
        assertEquals(0, registrations(members, s.mapName()), "no listener before the first subscribe");
        Collector a = Collector.on(s);
        Collector b = Collector.on(s);
        int one = registrations(members, s.mapName());
        assertTrue(one > 0, "the first subscribe registers the listener");
        Collector.on(s);
        assertEquals(one, registrations(members, s.mapName()), "one listener per store, whatever the subscribers");
        assertTrue(s.isFeedAlive());
        a.sub.close();
        b.sub.close();
        s.close();
        assertTrue(eventually(() -> registrations(members, s.mapName()) == 0),
                "close removes the listener from every member");
        assertFalse(s.isFeedAlive(), "close stops the feed thread");
    }

    /** How many event registrations (entry listener, partition-lost listener) the members hold for a map. */
    private static int registrations(List<HazelcastInstance> members, String map) {
        int n = 0;
        for (HazelcastInstance m : members) {
            n += ((HazelcastInstanceProxy) m).getOriginal().node.getNodeEngine().getEventService()
                    .getRegistrations(MapService.SERVICE_NAME, map).size();
        }
        return n;
    }
}

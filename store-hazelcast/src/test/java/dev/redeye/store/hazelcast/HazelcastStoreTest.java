package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The store on real members beyond the TCK: exact counts under 16 threads over two clients in both modes (and a
 * get-then-put variant that loses counts on the same load, so the test can fail), native and CAS clients
 * sharing one map, mode detection and the fall-back of a call, malformed values, names, versions across a
 * key's lives.
 */
@ExtendWith(SharedClusters.class)
class HazelcastStoreTest {
    private static final Policy NEVER_OPENS = Policy.builder().failureThreshold(Integer.MAX_VALUE).jitter(0).build();
    private static final int THREADS = 16;
    private static final int PER_THREAD = 100;

    /** Two stores on the two clients of the named cluster, in a fresh map, in the given mode. */
    static Store[] twoClients(String cluster, String map, HazelcastStore.Mode mode) {
        HazelcastInstance a;
        HazelcastInstance b;
        if (cluster.equals("embedded")) {
            a = SharedClusters.embedded().clientA();
            b = SharedClusters.embedded().clientB();
        } else {
            a = SharedClusters.bare().clientA();
            b = SharedClusters.bare().clientB();
        }
        return new Store[] {HazelcastStore.builder(a).map(map).mode(mode).build(),
                HazelcastStore.builder(b).map(map).mode(mode).build()};
    }

    static String map(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static Stream<Arguments> modes() {
        return Stream.of(Arguments.of("embedded", HazelcastStore.Mode.AUTO, HazelcastStore.Mode.NATIVE),
                Arguments.of("bare", HazelcastStore.Mode.AUTO, HazelcastStore.Mode.CAS),
                Arguments.of("embedded", HazelcastStore.Mode.CAS, HazelcastStore.Mode.CAS));
    }

    @ParameterizedTest(name = "{0} members, {1} -> {2}")
    @MethodSource("modes")
    void sixteenThreadsOverTwoClientsCountExactly(String cluster, HazelcastStore.Mode asked, HazelcastStore.Mode runs)
            throws Exception {
        Store[] s = twoClients(cluster, map("count"), asked);
        try {
            for (Store store : s) {
                assertEquals(runs, ((HazelcastStore) store).mode(), store::toString);
            }
            String k = "hot";
            Race.run(THREADS, Duration.ofSeconds(120), i -> {
                HazelcastStore store = (HazelcastStore) s[i % 2];
                for (int n = 0; n < PER_THREAD; n++) {
                    store.apply(k, AtomicOperation.failure(), NEVER_OPENS, 1_000 + n);
                }
            });
            assertEquals(THREADS * PER_THREAD, s[0].get(k).orElseThrow().failures(),
                    "failures recorded by " + THREADS + " threads over 2 clients in " + runs + " mode");
        } finally {
            for (Store store : s) {
                store.close();
            }
        }
    }

    /**
     * The same load through a get-then-put (what the engine would fall back to without AtomicUpdates) loses
     * counts: the exact-count test above is one a non-atomic implementation fails.
     */
    @Test
    void aGetThenPutVariantLosesCountsUnderTheSameLoad() throws Exception {
        Store[] s = twoClients("embedded", map("lossy"), HazelcastStore.Mode.AUTO);
        try {
            String k = "hot";
            s[0].put(k, BreakerState.INITIAL, Duration.ofMinutes(5));
            Race.run(THREADS, Duration.ofSeconds(120), i -> {
                Store store = s[i % 2];
                for (int n = 0; n < PER_THREAD; n++) {
                    BreakerState cur = store.get(k).orElseThrow();
                    store.put(k, cur.toBuilder().failures(cur.failures() + 1).build(), Duration.ofMinutes(5));
                }
            });
            int stored = s[0].get(k).orElseThrow().failures();
            assertTrue(stored < THREADS * PER_THREAD, "a get-then-put should lose updates under " + THREADS
                    + " threads, but stored " + stored);
        } finally {
            for (Store store : s) {
                store.close();
            }
        }
    }

    /** A native client and a CAS client count on one map at once: the same values, exact counts. */
    @Test
    void nativeAndCasClientsShareOneMap() throws Exception {
        String m = map("mixed");
        HazelcastStore nat = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(m).build();
        HazelcastStore cas = HazelcastStore.builder(SharedClusters.embedded().clientB()).map(m)
                .mode(HazelcastStore.Mode.CAS).build();
        try {
            assertEquals(HazelcastStore.Mode.NATIVE, nat.mode());
            assertEquals(HazelcastStore.Mode.CAS, cas.mode());
            Race.run(8, Duration.ofSeconds(120), i -> {
                HazelcastStore store = i % 2 == 0 ? nat : cas;
                for (int n = 0; n < PER_THREAD; n++) {
                    store.apply("shared", AtomicOperation.failure(), NEVER_OPENS, 1_000 + n);
                }
            });
            assertEquals(8 * PER_THREAD, cas.get("shared").orElseThrow().failures());
            Policy three = Policy.builder().failureThreshold(3).jitter(0).build();
            nat.apply("t", AtomicOperation.failure(), three, 1);
            cas.apply("t", AtomicOperation.failure(), three, 2);
            StateChange opened = nat.apply("t", AtomicOperation.failure(), three, 3);
            assertTrue(opened.isTransition());
            StateChange closed = cas.apply("t", AtomicOperation.trialSucceeded(opened.state().version()), three, 4);
            assertEquals(opened.state().version() + 1, closed.state().version());
            assertFalse(nat.get("t").orElseThrow().open());
        } finally {
            nat.close();
            cas.close();
        }
    }

    /** OBJECT in-memory format: members compare with String.equals instead of bytes; CAS still exact. */
    @Test
    void casModeIsExactOnAMapInObjectFormat() throws Exception {
        String m = SharedClusters.OBJECT_MAPS.replace("*", "") + UUID.randomUUID().toString().substring(0, 8);
        Store[] s = twoClients("embedded", m, HazelcastStore.Mode.CAS);
        try {
            Race.run(8, Duration.ofSeconds(120), i -> {
                for (int n = 0; n < PER_THREAD; n++) {
                    ((HazelcastStore) s[i % 2]).apply("k", AtomicOperation.failure(), NEVER_OPENS, n);
                }
            });
            assertEquals(8 * PER_THREAD, s[1].get("k").orElseThrow().failures());
        } finally {
            for (Store store : s) {
                store.close();
            }
        }
    }

    @Test
    void modeIsDetectedAtOpenAndReported() {
        HazelcastStore nat = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map("mode")).build();
        HazelcastStore cas = HazelcastStore.builder(SharedClusters.bare().clientA()).map(map("mode")).build();
        try {
            assertEquals(HazelcastStore.Mode.NATIVE, nat.mode());
            assertTrue(nat.toString().contains("mode=native (every data member runs redeye's entry processors)"),
                    nat::toString);
            assertEquals(HazelcastStore.Mode.CAS, cas.mode());
            assertTrue(cas.toString().contains("mode=cas (") && cas.toString().contains("has no "
                    + RedeyeSerializableFactory.class.getName() + " registered"), cas::toString);
        } finally {
            nat.close();
            cas.close();
        }
    }

    /**
     * A store told to use native mode over a bare member (no probe at open) must not fail a call: the first
     * one meets the missing classes, the store switches to CAS mode and the call is applied exactly once.
     */
    @Test
    void aCallNeverFailsBecauseMembersLackTheClasses() {
        HazelcastStore s = HazelcastStore.builder(SharedClusters.bare().clientA()).map(map("fallback"))
                .mode(HazelcastStore.Mode.NATIVE).build();
        try {
            assertEquals(HazelcastStore.Mode.NATIVE, s.mode());
            StateChange c = s.apply("k", AtomicOperation.failure(), NEVER_OPENS, 10);
            assertEquals(1, c.state().failures());
            assertEquals(HazelcastStore.Mode.CAS, s.mode());
            assertTrue(s.toString().contains("mode=cas (a member has no " + RedeyeSerializableFactory.class.getName()),
                    s::toString);
            assertEquals(1, s.get("k").orElseThrow().failures(), "applied exactly once");
            Optional<String> token = s.claimTrial("k", 1, Duration.ofSeconds(30));
            assertTrue(token.isPresent());
            s.releaseTrial("k", token.get());
        } finally {
            s.close();
        }
    }

    static Stream<String> clusters() {
        return Stream.of("embedded", "bare");
    }

    /** R1.7 beyond the TCK's hook: other types, other format versions, malformed claims; delete cleans up. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("clusters")
    void malformedValuesAreStoreExceptions(String cluster) {
        Store[] s = twoClients(cluster, map("malformed"), HazelcastStore.Mode.AUTO);
        HazelcastStore store = (HazelcastStore) s[0];
        IMap<String, Object> raw = store.instance().getMap(store.mapName());
        try {
            raw.set("number", 42);
            StoreException e = assertThrows(StoreException.class, () -> store.get("number"));
            assertTrue(e.getMessage().contains("java.lang.Integer"), e.getMessage());
            assertThrows(StoreException.class, () -> store.apply("number", AtomicOperation.failure(), NEVER_OPENS, 1));

            raw.set("future", "redeye-state/5 something=new");
            e = assertThrows(StoreException.class, () -> store.get("future"));
            assertTrue(e.getMessage().contains("redeye-state/5 format") && e.getMessage().contains("another redeye"
                    + " version"), e.getMessage());
            e = assertThrows(StoreException.class, () -> store.apply("future", AtomicOperation.failure(), NEVER_OPENS, 1));
            assertTrue(e.getMessage().contains("another redeye version"), e.getMessage());
            e = assertThrows(StoreException.class, () -> store.claimTrial("future", 1, Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("another redeye version"), e.getMessage());
            assertEquals("redeye-state/5 something=new", raw.get("future"), "malformed data is never reset");

            raw.set("fields", "redeye-state/2 failures=x&open=1");
            assertThrows(StoreException.class, () -> store.get("fields"));

            raw.set("claims", "redeye-tombstone/2 claim.token-without-expiry=soon");
            assertThrows(StoreException.class, () -> store.claimTrial("claims", 1, Duration.ofSeconds(5)));
            assertThrows(StoreException.class, () -> store.releaseTrial("claims", "token-without-expiry"));

            store.delete("number");
            store.delete("claims");
            assertEquals(Optional.empty(), store.get("number"), "delete removes malformed data");
            assertTrue(store.claimTrial("claims", 1, Duration.ofSeconds(5)).isPresent(),
                    "delete removes malformed claims");
            store.put("future", BreakerState.INITIAL, Duration.ofMinutes(1));
            assertEquals(Optional.of(BreakerState.INITIAL), store.get("future"), "put overwrites malformed data");
        } finally {
            for (Store x : s) {
                x.close();
            }
        }
    }

    /** Hazelcast encodes keys as UTF-8: an unpaired surrogate would merge two names, so it is refused. */
    @Test
    void namesThatAreNotWellFormedUtf16AreRefused() {
        HazelcastStore s = HazelcastStore.builder(SharedClusters.embedded().clientA()).map(map("names")).build();
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.get("a\uD800"));
            assertTrue(e.getMessage().contains("unpaired high surrogate U+D800 at index 1"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.apply("\uDC00", AtomicOperation.failure(), NEVER_OPENS, 1));
            assertThrows(IllegalArgumentException.class, () -> s.claimTrial("x\uD800y", 1, Duration.ofSeconds(1)));
            s.apply("emoji \uD83D\uDE00 \u0000", AtomicOperation.failure(), NEVER_OPENS, 1);
            assertEquals(1, s.get("emoji \uD83D\uDE00 \u0000").orElseThrow().failures());
        } finally {
            s.close();
        }
    }

    /**
     * Versions never go backwards across a delete (the tombstone) and across a put of a version above the
     * clock (the tombstone again); a key never seen starts at the clock in microseconds.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("clusters")
    void versionsNeverGoBackwardsAcrossDelete(String cluster) {
        Store[] s = twoClients(cluster, map("lives"), HazelcastStore.Mode.AUTO);
        HazelcastStore a = (HazelcastStore) s[0];
        HazelcastStore b = (HazelcastStore) s[1];
        Policy one = Policy.builder().failureThreshold(1).jitter(0).build();
        try {
            // Native mode reads the cluster clock on the member, which may run a few ms behind this JVM's
            // clock: compare with a second of slack (the point is the µs scale, not the exact instant).
            long before = (System.currentTimeMillis() - 1_000) * 1000;
            StateChange first = a.apply("k", AtomicOperation.failure(), one, 1);
            assertTrue(first.previous().version() >= before, "a new key starts at the clock in µs: " + first);
            long v = first.state().version();
            b.delete("k");
            assertEquals(Optional.empty(), a.get("k"));
            StateChange again = a.apply("k", AtomicOperation.failure(), one, 2);
            assertTrue(again.state().version() > v, "after delete: " + again.state().version() + " <= " + v);

            long far = Long.MAX_VALUE / 2;
            a.put("k", BreakerState.builder().open(true).openedAt(1).version(far).build(), Duration.ofMinutes(1));
            b.delete("k");
            StateChange third = b.apply("k", AtomicOperation.force(BreakerStatus.FORCED_OPEN), one, 3);
            assertEquals(far + 2, third.state().version(), "the new life starts above the tombstone");
        } finally {
            a.close();
            b.close();
        }
    }
}

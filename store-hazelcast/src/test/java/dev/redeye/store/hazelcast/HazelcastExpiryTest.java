package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.AtomicOperation;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Expiry as the contract wants it: atomic writes set and refresh the state's expiry (contract v2), which lives in
 * the value in both modes; pinned states (forced, or a stored mode) never expire; Hazelcast's own entry ttl, read back from its entry views,
 * only collects garbage (set with every native write, at creation only in CAS mode, never on a forced state).
 * A processor that calls plain {@code setValue} resets the entry's ttl (shown), which is why the processors always
 * pass it.
 */
@ExtendWith(SharedClusters.class)
class HazelcastExpiryTest {
    private static final Policy POLICY = Policy.builder().failureThreshold(3).jitter(0)
            .stateTtl(Duration.ofMinutes(20)).build();
    private static final long STATE_TTL = POLICY.stateTtlMillis();
    private static final long NEVER = Long.MAX_VALUE;

    private static HazelcastStore store(HazelcastInstance hz, HazelcastStore.Mode mode) {
        return HazelcastStore.builder(hz).map("expiry-" + UUID.randomUUID().toString().substring(0, 8)).mode(mode)
                .build();
    }

    private static EntryView<String, Object> entry(HazelcastStore s, String key) {
        return s.instance().<String, Object>getMap(s.mapName()).getEntryView(key);
    }

    private static StoredValue value(HazelcastStore s, String key) {
        return StateValues.decode(s.instance().getMap(s.mapName()).get(key), key);
    }

    @Test
    void nativeWritesSetAndRefreshTheStateTtlAndForcedStatesNeverExpire() throws Exception {
        checkStateTtl(store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO), true);
    }

    @Test
    void casWritesSetAndRefreshTheStateTtlAndForcedStatesNeverExpire() throws Exception {
        checkStateTtl(store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO), false);
    }

    private static void checkStateTtl(HazelcastStore s, boolean nativeMode) throws InterruptedException {
        try {
            long before = System.currentTimeMillis();
            s.apply("k", AtomicOperation.failure(), POLICY, 1);
            long after = System.currentTimeMillis();
            StoredValue first = value(s, "k");
            assertTrue(first.expiresAt >= before - 1_000 + STATE_TTL && first.expiresAt <= after + 1_000 + STATE_TTL,
                    s + ": the value expires stateTtl after the write: " + first);
            EntryView<String, Object> created = entry(s, "k");
            assertEquals(STATE_TTL + MemberProcessor.EXPIRY_MARGIN_MILLIS, created.getTtl(),
                    s + ": a new entry's clean-up ttl covers the value's expiry");
            Thread.sleep(nativeMode ? 1_100 : 20); // Hazelcast keeps expiry times in whole seconds
            s.apply("k", AtomicOperation.failure(), POLICY, 2); // a sub-threshold increment: a write, not a transition
            assertTrue(value(s, "k").expiresAt > first.expiresAt, s + ": a later write refreshes the expiry");
            if (nativeMode) {
                assertTrue(entry(s, "k").getExpirationTime() >= created.getExpirationTime() + 1_000,
                        s + ": and the entry's clean-up ttl with it");
            } else {
                assertEquals(NEVER, entry(s, "k").getExpirationTime(),
                        s + ": replace cannot carry a ttl, so a rewritten entry has none (and no second step sets one)");
            }

            s.apply("k", AtomicOperation.force(BreakerStatus.FORCED_OPEN), POLICY, 3);
            assertEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": forced open never expires");
            assertEquals(NEVER, entry(s, "k").getExpirationTime(), s + ": nor is its entry collected");
            s.apply("k", AtomicOperation.failure(), POLICY, 4); // counted while forced: still forced, still no expiry
            assertTrue(s.get("k").orElseThrow().forced());
            assertEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": a write while forced keeps no expiry");
            assertEquals(NEVER, entry(s, "k").getExpirationTime());
            s.apply("k", AtomicOperation.force(BreakerStatus.CLOSED), POLICY, 5);
            assertNotEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": the ttl applies again after reset");
            if (nativeMode) {
                assertNotEquals(NEVER, entry(s, "k").getExpirationTime());
            }

            s.put("p", dev.redeye.api.BreakerState.builder().open(true).forced(true).build(), Duration.ofSeconds(1));
            assertEquals(StoredValue.NEVER, value(s, "p").expiresAt, s + ": a forced put ignores its ttl");
            assertEquals(NEVER, entry(s, "p").getExpirationTime());
        } finally {
            s.close();
        }
    }

    @Test
    void nativeStoredModesArePinnedAndNeverExpire() {
        checkPinnedModes(store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO), true);
    }

    @Test
    void casStoredModesArePinnedAndNeverExpire() {
        checkPinnedModes(store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO), false);
    }

    /**
     * A mode an operator stored pins the state as forcing does ({@code BreakerState.pinned()}): no expiry in the
     * value, none on the entry (native mode; CAS mode never sets one on a rewritten entry), and every write while
     * it is stored keeps none; storing the default mode again gives the state its ttl back. Forcing open under a
     * metrics-only policy stores the normal mode with the forced state, pinned twice over; a put of a state with a
     * stored mode ignores its ttl.
     */
    private static void checkPinnedModes(HazelcastStore s, boolean nativeMode) {
        Policy window = POLICY.toBuilder().slidingWindow(SlidingWindowType.COUNT_BASED, 5).minimumNumberOfCalls(5)
                .build();
        try {
            s.apply("k", AtomicOperation.failure(), window, 1);
            assertNotEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": a window alone does not pin a state");
            if (nativeMode) {
                assertNotEquals(NEVER, entry(s, "k").getExpirationTime());
            }
            for (BreakerMode m : new BreakerMode[] {BreakerMode.METRICS_ONLY, BreakerMode.DISABLED, BreakerMode.NORMAL}) {
                s.apply("k", AtomicOperation.forceMode(m), window, 2);
                assertEquals(m, s.get("k").orElseThrow().mode());
                assertEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": a stored " + m + " never expires");
                assertEquals(NEVER, entry(s, "k").getExpirationTime(), s + ": nor is its entry collected");
            }
            s.apply("k", AtomicOperation.failure(), window, 3); // counted in the window, in the stored normal mode
            assertEquals(1, s.get("k").orElseThrow().window().calls());
            assertEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": a write while a mode is stored keeps none");
            assertEquals(NEVER, entry(s, "k").getExpirationTime());
            s.apply("k", AtomicOperation.forceMode(BreakerMode.DEFAULT), window, 4);
            assertNotEquals(StoredValue.NEVER, value(s, "k").expiresAt, s + ": the ttl applies again");
            if (nativeMode) {
                assertNotEquals(NEVER, entry(s, "k").getExpirationTime());
            }

            Policy metrics = window.toBuilder().mode(BreakerMode.METRICS_ONLY).build();
            s.apply("o", AtomicOperation.force(BreakerStatus.FORCED_OPEN), metrics, 5);
            assertEquals(BreakerMode.NORMAL, s.get("o").orElseThrow().mode());
            assertEquals(StoredValue.NEVER, value(s, "o").expiresAt);
            s.apply("o", AtomicOperation.force(BreakerStatus.CLOSED), metrics, 6);
            assertNotEquals(StoredValue.NEVER, value(s, "o").expiresAt, s + ": closed in the policy's mode again");

            s.put("p", BreakerState.builder().mode(BreakerMode.DISABLED).version(3).build(), Duration.ofSeconds(1));
            assertEquals(StoredValue.NEVER, value(s, "p").expiresAt, s + ": a put of a stored mode ignores its ttl");
            assertEquals(NEVER, entry(s, "p").getExpirationTime());
        } finally {
            s.close();
        }
    }

    /**
     * (Real time) A stored mode outlives the state ttl in both modes: once a state written at the same time without
     * a mode has expired (and, in native mode, its entry was collected), the moded state is still there.
     */
    @Test
    void aStoredModeOutlivesTheStateTtl() throws Exception {
        Policy shortTtl = Policy.builder().slidingWindow(SlidingWindowType.TIME_BASED, 10).jitter(0)
                .resetTimeout(Duration.ofMillis(100)).maxResetTimeout(Duration.ofMillis(200))
                .stateTtl(Duration.ofMillis(1_200)).build();
        HazelcastStore nat = store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO);
        HazelcastStore cas = store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO);
        try {
            for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                s.apply("moded", AtomicOperation.forceMode(BreakerMode.METRICS_ONLY), shortTtl, 1);
                s.apply("moded", AtomicOperation.failure(), shortTtl, 2);
                s.apply("plain", AtomicOperation.failure(), shortTtl, 2);
            }
            for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                boolean nativeMode = s == nat;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                while (s.get("plain").isPresent() || (nativeMode && entry(s, "plain") != null)) {
                    assertTrue(System.nanoTime() < deadline, s + ": the state without a mode did not expire");
                    Thread.sleep(100);
                }
                BreakerState moded = s.get("moded").orElseThrow(() -> new AssertionError(s + ": the moded state expired"));
                assertEquals(BreakerMode.METRICS_ONLY, moded.mode());
                assertEquals(1, moded.window().failures());
                assertTrue(entry(s, "moded") != null, s + ": its entry is kept");
            }
        } finally {
            nat.close();
            cas.close();
        }
    }

    /**
     * Native mode: the entry's clean-up ttl covers its longest claim, and after a release the claims that remain
     * (each claim's liveness is its own expiry); a processor that calls plain {@code setValue} instead resets the
     * entry's ttl to "never", the pitfall the processors avoid by always passing it.
     */
    @Test
    void nativeEntryTtlCoversTheClaimsWherePlainSetValueWouldResetIt() {
        HazelcastStore s = store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO);
        try {
            String longer = s.claimTrial("k", 2, Duration.ofSeconds(60)).orElseThrow();
            String shorter = s.claimTrial("k", 2, Duration.ofSeconds(20)).orElseThrow();
            long expiry = entry(s, "k").getExpirationTime();
            assertTrue(expiry >= System.currentTimeMillis() + 55_000, "the entry lives as long as its longest claim");
            s.releaseTrial("k", longer);
            long after = entry(s, "k").getExpirationTime();
            assertTrue(after <= System.currentTimeMillis() + 22_000, "then as long as the claim that remains: " + after);
            assertEquals(Optional.empty(), s.claimTrial("k", 1, Duration.ofSeconds(1)), "the other claim is live");

            IMap<String, Object> raw = s.instance().getMap(s.mapName());
            raw.executeOnKey("k", new PlainSetValue());
            assertEquals(NEVER, entry(s, "k").getExpirationTime(),
                    "plain setValue in an entry processor resets the expiry (the pitfall)");
            s.releaseTrial("k", shorter);
            assertEquals(null, entry(s, "k"), "the last release of a key without a state removes the entry");
        } finally {
            s.close();
        }
    }

    /** CAS mode: each claim keeps its own expiry in the value, whatever the entry's ttl. */
    @Test
    void casClaimsKeepTheirOwnExpiryInTheValue() {
        HazelcastStore s = store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO);
        try {
            String longer = s.claimTrial("k", 2, Duration.ofSeconds(60)).orElseThrow();
            String shorter = s.claimTrial("k", 2, Duration.ofSeconds(20)).orElseThrow();
            s.releaseTrial("k", longer);
            StoredValue v = value(s, "k");
            assertEquals(java.util.Set.of(shorter), v.claims.keySet());
            assertTrue(v.claims.get(shorter) <= System.currentTimeMillis() + 20_000, "the claim's own expiry: " + v);
            assertEquals(Optional.empty(), s.claimTrial("k", 1, Duration.ofSeconds(1)), "the other claim is live");
            s.releaseTrial("k", shorter);
            assertEquals(null, entry(s, "k"), "the last release of a key without a state removes the entry");
        } finally {
            s.close();
        }
    }

    /**
     * (Real time) Contract v2: a state written again and again outlives its short ttl; once the writes stop it
     * expires, and the key's next life starts at a higher version. Both modes on the same timeline.
     */
    @Test
    void aStateKeptWrittenLivesAndExpiresOnceLeftAlone() throws Exception {
        Policy shortTtl = Policy.builder().failureThreshold(1_000).jitter(0).resetTimeout(Duration.ofMillis(100))
                .maxResetTimeout(Duration.ofMillis(200)).stateTtl(Duration.ofMillis(1_200)).build();
        HazelcastStore nat = store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO);
        HazelcastStore cas = store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO);
        try {
            long before = 0;
            for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                before = Math.max(before, s.apply("k", AtomicOperation.failure(), shortTtl, 0).state().version());
            }
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_000);
            int n = 1;
            while (System.nanoTime() < end) {
                Thread.sleep(400);
                for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                    s.apply("k", AtomicOperation.failure(), shortTtl, n);
                    assertTrue(s.get("k").isPresent(), s + ": a state written every 400 ms expired (ttl 1.2 s)");
                }
                n++;
            }
            for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (s.get("k").isPresent()) {
                    assertTrue(System.nanoTime() < deadline, s + ": the state did not expire once left alone");
                    Thread.sleep(100);
                }
                long next = s.apply("k", AtomicOperation.force(BreakerStatus.FORCED_OPEN), shortTtl, n).state().version();
                assertTrue(next > before, s + ": the next life's version " + next + " <= " + before);
            }
        } finally {
            nat.close();
            cas.close();
        }
    }

    /** The pitfall: what a processor that forgets the expiry does. Test code only. */
    static final class PlainSetValue implements EntryProcessor<String, Object, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String process(Map.Entry<String, Object> entry) {
            entry.setValue(entry.getValue());
            return null;
        }
    }
}

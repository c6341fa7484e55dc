package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Entry expiry as the contract wants it, read back from Hazelcast's own entry views: atomic writes set and
 * refresh the state's ttl (contract v2), forced states never expire, a release keeps the claims entry's expiry
 * (where plain {@code setValue} would reset it: shown by a processor doing just that), and CAS mode's
 * replace + setTtl gives the same result as the processors.
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

    private static EntryView<String, Object> state(HazelcastStore s, String key) {
        return s.instance().<String, Object>getMap(s.mapName()).getEntryView(key);
    }

    private static EntryView<String, Object> claims(HazelcastStore s, String key) {
        return s.instance().<String, Object>getMap(s.claimsMapName()).getEntryView(key);
    }

    @Test
    void nativeWritesSetAndRefreshTheStateTtlAndForcedStatesNeverExpire() throws Exception {
        checkStateTtl(store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO));
    }

    @Test
    void casWritesSetAndRefreshTheStateTtlAndForcedStatesNeverExpire() throws Exception {
        checkStateTtl(store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO));
    }

    private static void checkStateTtl(HazelcastStore s) throws InterruptedException {
        try {
            s.recordFailure("k", POLICY, 1);
            EntryView<String, Object> first = state(s, "k");
            assertEquals(STATE_TTL + MemberProcessor.EXPIRY_MARGIN_MILLIS, first.getTtl(), s + ": ttl of a new state");
            assertNotEquals(NEVER, first.getExpirationTime());
            Thread.sleep(1_100); // Hazelcast keeps expiry times in whole seconds
            s.recordFailure("k", POLICY, 2); // a sub-threshold increment: a write, not a transition
            EntryView<String, Object> second = state(s, "k");
            assertTrue(second.getExpirationTime() >= first.getExpirationTime() + 1_000,
                    s + ": a later write refreshes the expiry: " + first.getExpirationTime() + " -> "
                            + second.getExpirationTime());

            s.force("k", BreakerStatus.FORCED_OPEN, POLICY, 3);
            assertEquals(NEVER, state(s, "k").getExpirationTime(), s + ": forced open never expires");
            s.recordFailure("k", POLICY, 4); // counted while forced: still forced, still no expiry
            assertTrue(s.get("k").orElseThrow().forced());
            assertEquals(NEVER, state(s, "k").getExpirationTime(), s + ": a write while forced keeps no expiry");
            s.force("k", BreakerStatus.CLOSED, POLICY, 5);
            assertNotEquals(NEVER, state(s, "k").getExpirationTime(), s + ": the ttl applies again after reset");

            s.put("p", dev.redeye.api.BreakerState.builder().open(true).forced(true).build(), Duration.ofSeconds(1));
            assertEquals(NEVER, state(s, "p").getExpirationTime(), s + ": a forced put ignores its ttl");
        } finally {
            s.close();
        }
    }

    /**
     * A release that leaves claims keeps the entry's expiry ({@code setValueWithoutChangingExpiryTime}); a
     * processor that calls plain {@code setValue} instead resets it to "never", the pitfall this avoids.
     */
    @Test
    void aReleaseKeepsTheClaimsExpiryWherePlainSetValueWouldResetIt() {
        HazelcastStore s = store(SharedClusters.embedded().clientA(), HazelcastStore.Mode.AUTO);
        try {
            String longer = s.claimTrial("k", 2, Duration.ofSeconds(60)).orElseThrow();
            String shorter = s.claimTrial("k", 2, Duration.ofSeconds(20)).orElseThrow();
            long expiry = claims(s, "k").getExpirationTime();
            assertNotEquals(NEVER, expiry);
            assertTrue(expiry >= System.currentTimeMillis() + 55_000, "the entry lives as long as its longest claim");
            s.releaseTrial("k", longer);
            assertEquals(expiry, claims(s, "k").getExpirationTime(), "a release keeps the entry's expiry");
            assertEquals(Optional.empty(), s.claimTrial("k", 1, Duration.ofSeconds(1)), "the other claim is live");

            IMap<String, Object> raw = s.instance().getMap(s.claimsMapName());
            raw.executeOnKey("k", new PlainSetValue());
            assertEquals(NEVER, claims(s, "k").getExpirationTime(),
                    "plain setValue in an entry processor resets the expiry (the pitfall)");
            s.releaseTrial("k", shorter);
            assertEquals(null, claims(s, "k"), "the last release removes the entry");
        } finally {
            s.close();
        }
    }

    /** CAS mode: replace resets the expiry, so the store sets it again from the remaining claims. */
    @Test
    void casReleaseGivesTheEntryTheExpiryOfTheClaimsThatRemain() {
        HazelcastStore s = store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO);
        try {
            String longer = s.claimTrial("k", 2, Duration.ofSeconds(60)).orElseThrow();
            s.claimTrial("k", 2, Duration.ofSeconds(20)).orElseThrow();
            assertTrue(claims(s, "k").getExpirationTime() >= System.currentTimeMillis() + 55_000);
            s.releaseTrial("k", longer);
            long expiry = claims(s, "k").getExpirationTime();
            assertNotEquals(NEVER, expiry, "replace reset the expiry and nothing set it again");
            assertTrue(expiry <= System.currentTimeMillis() + 22_000, "the remaining claim's expiry: " + expiry);
        } finally {
            s.close();
        }
    }

    /** A late setTtl of another client that hit a forced state is undone by the next read (CAS mode). */
    @Test
    void casReadHealsAForcedStateThatWasGivenATtl() {
        HazelcastStore s = store(SharedClusters.bare().clientA(), HazelcastStore.Mode.AUTO);
        try {
            s.force("k", BreakerStatus.FORCED_OPEN, POLICY, 1);
            s.instance().getMap(s.mapName()).setTtl("k", 60, TimeUnit.SECONDS);
            assertNotEquals(NEVER, state(s, "k").getExpirationTime());
            assertTrue(s.get("k").orElseThrow().forced());
            assertEquals(NEVER, state(s, "k").getExpirationTime(), "get removes the ttl of a forced state");
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
                before = Math.max(before, s.recordFailure("k", shortTtl, 0).state().version());
            }
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_000);
            int n = 1;
            while (System.nanoTime() < end) {
                Thread.sleep(400);
                for (HazelcastStore s : new HazelcastStore[] {nat, cas}) {
                    s.recordFailure("k", shortTtl, n);
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
                long next = s.force("k", BreakerStatus.FORCED_OPEN, shortTtl, n).state().version();
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

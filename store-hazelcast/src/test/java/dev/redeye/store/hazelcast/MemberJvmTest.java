package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Members in JVMs of their own, installed the way the module README says: the Hazelcast jar plus
 * {@code redeye-api} and {@code redeye-store-hazelcast} (and nothing else, not even SLF4J) runs native mode,
 * batches of outcomes folded on the member included; leaving out {@code redeye-api} is detected at open (CAS mode, saying why) instead of failing calls.
 */
class MemberJvmTest {
    private static final Policy NEVER_OPENS = Policy.builder().failureThreshold(Integer.MAX_VALUE).jitter(0).build();

    /**
     * Native mode writes a state's expiry by the cluster clock; a read judges it by the same clock, whatever
     * this client's clock says (here the member's, and so the cluster's, runs 10 s behind it).
     */
    @Test
    void aReadJudgesExpiryByTheClockTheWriteUsed() throws Exception {
        try (MemberJvm member = MemberJvm.withRedeyeAndClockOffset(-10_000)) {
            HazelcastStore s = HazelcastStore.builder(member.newClient()).build();
            try {
                assertEquals(HazelcastStore.Mode.NATIVE, s.mode(), s::toString);
                Policy p = Policy.builder().failureThreshold(5).resetTimeout(Duration.ofMillis(500))
                        .maxResetTimeout(Duration.ofMillis(500)).stateTtl(Duration.ofSeconds(5)).jitter(0).build();
                s.apply("op", AtomicOperation.failure(), p, 1);
                assertEquals(1, s.get("op").map(st -> st.failures()).orElse(0),
                        "the state written a moment ago with a 5 s ttl reads as live");
                assertEquals(2, s.apply("op", AtomicOperation.failure(), p, 2).state().failures(), "and the next write continues it");
            } finally {
                s.close();
            }
        }
    }

    @Test
    void aMemberWithTheStoreJarAndRedeyeApiRunsNativeMode() throws Exception {
        try (MemberJvm member = MemberJvm.withRedeye()) {
            HazelcastInstance a = member.newClient();
            HazelcastInstance b = member.newClient();
            HazelcastStore[] s = {HazelcastStore.builder(a).build(), HazelcastStore.builder(b).build()};
            try {
                for (HazelcastStore store : s) {
                    assertEquals(HazelcastStore.Mode.NATIVE, store.mode(), store::toString);
                }
                Race.run(8, Duration.ofSeconds(120), i -> {
                    for (int n = 0; n < 100; n++) {
                        s[i % 2].apply("count", AtomicOperation.failure(), NEVER_OPENS, n);
                    }
                });
                assertEquals(800, s[0].get("count").orElseThrow().failures());
                long[] failures = new long[AtomicOperation.MAX_BATCH];
                for (int n = 0; n < failures.length; n++) {
                    failures[n] = AtomicOperation.packOutcome(false, n % 2 == 0, 100 + n);
                }
                Race.run(8, Duration.ofSeconds(120), i -> {
                    for (int n = 0; n < 10; n++) { // batches of 1 to 1,024 outcomes, folded on the member
                        s[i % 2].apply("count", AtomicOperation.outcomes(failures, batchSize(i * 10 + n), "pod-" + i),
                                NEVER_OPENS, 100);
                    }
                });
                int batched = 0;
                for (int k = 0; k < 80; k++) {
                    batched += batchSize(k);
                }
                assertEquals(800 + batched, s[0].get("count").orElseThrow().failures(), "every batched outcome once");
                Policy two = Policy.builder().failureThreshold(2).jitter(0).build();
                s[0].apply("op", AtomicOperation.failure(), two, 1);
                StateChange opened = s[1].apply("op", AtomicOperation.failure(), two, 2);
                assertTrue(opened.isTransition());
                Optional<String> token = s[0].claimTrial("op", 1, Duration.ofSeconds(30));
                assertTrue(token.isPresent());
                assertEquals(Optional.empty(), s[1].claimTrial("op", 1, Duration.ofSeconds(30)));
                s[1].releaseTrial("op", "not-the-token");
                assertEquals(Optional.empty(), s[1].claimTrial("op", 1, Duration.ofSeconds(30)));
                assertFalse(s[1].apply("op", AtomicOperation.trialSucceeded(opened.state().version()), two, 3).state().open());
                s[0].releaseTrial("op", token.get());
                s[0].apply("op", AtomicOperation.force(BreakerStatus.FORCED_OPEN), two, 4);
                s[1].delete("op");
                long next = s[0].apply("op", AtomicOperation.failure(), two, 5).state().version();
                assertTrue(next > opened.state().version() + 2, "a new life starts above the tombstone");
                for (HazelcastStore store : s) {
                    assertEquals(HazelcastStore.Mode.NATIVE, store.mode(), "no call fell back: " + store);
                }
            } finally {
                for (HazelcastStore store : s) {
                    store.close();
                }
            }
        }
    }

    /** The size of the {@code k}th batch: 1, 14, 27, ... up to {@link AtomicOperation#MAX_BATCH}, reached at 79. */
    private static int batchSize(int k) {
        return Math.min(AtomicOperation.MAX_BATCH, 1 + k * 13);
    }

    @Test
    void aMemberMissingRedeyeApiIsDetectedAtOpen() throws Exception {
        try (MemberJvm member = MemberJvm.withoutRedeyeApi()) {
            HazelcastStore s = HazelcastStore.builder(member.newClient()).build();
            try {
                assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
                assertTrue(s.toString().contains("NoClassDefFoundError: dev/redeye/"), s::toString);
                s.apply("k", AtomicOperation.failure(), NEVER_OPENS, 1);
                assertEquals(1, s.get("k").orElseThrow().failures());
            } finally {
                s.close();
            }
        }
    }
}

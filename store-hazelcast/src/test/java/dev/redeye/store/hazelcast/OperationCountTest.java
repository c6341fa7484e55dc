package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How many Hazelcast map operations (each one network round trip from a client) every store method costs, in
 * both modes: the numbers in HazelcastStore's Javadoc and the module README. Counted by wrapping the
 * Hazelcast instance the store is given in a {@link HookedInstance} that records every call on its maps.
 */
@ExtendWith(SharedClusters.class)
class OperationCountTest {
    private static final Policy P = Policy.builder().failureThreshold(3).jitter(0).build();

    /** A HazelcastInstance whose maps record the calls made on them. */
    static final class Counting {
        final List<String> names = new ArrayList<>();
        final HazelcastInstance hz;

        Counting(HazelcastInstance real) {
            hz = HookedInstance.wrap(real, new HookedInstance.Hook() {
                @Override
                public void before(String map, String method) {
                    synchronized (names) {
                        names.add(method);
                    }
                }
            });
        }

        /** The map calls {@code body} made. */
        List<String> count(Runnable body) {
            synchronized (names) {
                names.clear();
            }
            body.run();
            synchronized (names) {
                return new ArrayList<>(names);
            }
        }
    }

    @Test
    void operationsPerCallInBothModes() {
        Map<String, List<String>> nat = measure(SharedClusters.embedded().clientA(), HazelcastStore.Mode.NATIVE);
        Map<String, List<String>> cas = measure(SharedClusters.bare().clientA(), HazelcastStore.Mode.CAS);
        StringBuilder table = new StringBuilder("| call | native | CAS |\n|---|---|---|\n");
        for (String call : nat.keySet()) {
            table.append("| ").append(call).append(" | ").append(nat.get(call).size()).append(" (")
                    .append(String.join(", ", nat.get(call))).append(") | ").append(cas.get(call).size()).append(" (")
                    .append(String.join(", ", cas.get(call))).append(") |\n");
        }
        System.out.println("Hazelcast map operations per store call:\n" + table);

        for (String call : nat.keySet()) {
            // the read too: it judges expiry by the cluster clock, on the member, as the writes do
            assertEquals(List.of("executeOnKey"), nat.get(call), "native " + call + ": one entry processor");
        }

        assertEquals(List.of("get"), cas.get("get"));
        assertEquals(List.of("get", "putIfAbsent"), cas.get("put"));
        assertEquals(List.of("get", "putIfAbsent"), cas.get("recordFailure, new key"));
        assertEquals(List.of("get", "replace"), cas.get("recordFailure"));
        assertEquals(List.of("get"), cas.get("recordSuccess, nothing to clear"));
        assertEquals(List.of("get", "replace"), cas.get("trialSucceeded"));
        assertEquals(List.of("get", "replace"), cas.get("force OPEN"));
        assertEquals(List.of("get", "replace"), cas.get("force CLOSED"));
        assertEquals(List.of("get", "replace"), cas.get("claimTrial"));
        assertEquals(List.of("get", "replace"), cas.get("releaseTrial"));
        assertEquals(List.of("get", "replace"), cas.get("delete"));
        assertEquals(List.of("get", "replace"), cas.get("a batch of 1,024 outcomes"));
    }

    private static Map<String, List<String>> measure(HazelcastInstance real, HazelcastStore.Mode mode) {
        Counting c = new Counting(real);
        HazelcastStore s = HazelcastStore.builder(c.hz).map("ops-" + UUID.randomUUID().toString().substring(0, 8))
                .mode(mode).build();
        Map<String, List<String>> out = new LinkedHashMap<>();
        try {
            out.put("get", c.count(() -> s.get("a")));
            out.put("put", c.count(() -> s.put("b", BreakerState.INITIAL, Duration.ofMinutes(1))));
            out.put("recordFailure, new key", c.count(() -> s.apply("k", AtomicOperation.failure(), P, 1)));
            out.put("recordFailure", c.count(() -> s.apply("k", AtomicOperation.failure(), P, 2)));
            out.put("recordSuccess, nothing to clear", c.count(() -> s.apply("b", AtomicOperation.success(), P, 3)));
            long opened = s.apply("k", AtomicOperation.failure(), P, 4).state().version();
            out.put("trialSucceeded", c.count(() -> s.apply("k", AtomicOperation.trialSucceeded(opened), P, 5)));
            out.put("force OPEN", c.count(() -> s.apply("k", AtomicOperation.force(BreakerStatus.FORCED_OPEN), P, 6)));
            out.put("force CLOSED", c.count(() -> s.apply("k", AtomicOperation.force(BreakerStatus.CLOSED), P, 7)));
            String[] token = new String[1];
            out.put("claimTrial", c.count(() -> token[0] = s.claimTrial("k", 1, Duration.ofSeconds(30)).orElseThrow()));
            out.put("releaseTrial", c.count(() -> s.releaseTrial("k", token[0])));
            out.put("delete", c.count(() -> s.delete("k")));
            long[] outcomes = new long[AtomicOperation.MAX_BATCH];
            for (int i = 0; i < outcomes.length; i++) {
                outcomes[i] = AtomicOperation.packOutcome(i % 2 == 0, false, 10 + i);
            }
            out.put("a batch of 1,024 outcomes", c.count(() -> s.apply("b", AtomicOperation.outcomes(outcomes,
                    outcomes.length, null), P, 8)));
        } finally {
            s.close();
        }
        return out;
    }
}

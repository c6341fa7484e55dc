package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.tck.Race;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * A member of a 2-member cluster is killed (terminated, no graceful migration) in the middle of a load from
 * 8 threads on one client: the other member takes over from its backups, no acknowledged write or transition
 * is lost or doubled but the one call of each key in flight at the kill, the feed signals a gap, and each key's
 * events stay in version order. Its own cluster, since it kills
 * a member.
 */
class MemberLossTest {
    private static final Policy NEVER_OPENS = Policy.builder().failureThreshold(Integer.MAX_VALUE).jitter(0).build();
    private static final Policy POLICY = Policy.builder().failureThreshold(5).jitter(0).build();
    private static final int KEYS = 4;
    private static final int OPS_PER_THREAD = 300;
    /** The calls of one key that can be in flight when the member dies: one thread writes each key. */
    private static final int IN_FLIGHT = 1;

    @Test
    void theOtherMemberTakesOverWithoutLosingAcknowledgedWrites() throws Exception {
        try (EmbeddedCluster cluster = new EmbeddedCluster("kill", 2)) {
            // A write whose backup acknowledgement never came (its primary was killed first) is indeterminate: by
            // default Hazelcast reports it done, and it is lost if the backup never ran. The property makes it a
            // failure, which the counts below allow for (see the module README); a retried one may still double.
            HazelcastInstance client = cluster.newClient(
                    Map.of("hazelcast.client.operation.fail.on.indeterminate.state", "true"));
            HazelcastStore store = HazelcastStore.builder(client).map("loss").build();
            assertEquals(HazelcastStore.Mode.NATIVE, store.mode());
            AtomicInteger gaps = new AtomicInteger();
            Map<String, List<Long>> delivered = new ConcurrentHashMap<>();
            TransitionFeed.Subscription sub = store.subscribe(
                    (TransitionEvent e) -> delivered.computeIfAbsent(e.operation(), k -> new CopyOnWriteArrayList<>())
                            .add(e.version()),
                    gaps::incrementAndGet);
            for (int k = 0; k < KEYS; k++) {
                store.put("toggle-" + k, BreakerState.INITIAL, Duration.ofMinutes(5));
            }
            AtomicIntegerArray ackedCounts = new AtomicIntegerArray(KEYS);
            AtomicIntegerArray failedCounts = new AtomicIntegerArray(KEYS);
            AtomicIntegerArray ackedToggles = new AtomicIntegerArray(KEYS);
            AtomicIntegerArray failedToggles = new AtomicIntegerArray(KEYS);
            AtomicInteger ackedAfterKill = new AtomicInteger();
            CountDownLatch halfway = new CountDownLatch(8 * OPS_PER_THREAD / 3);
            List<Throwable> unexpected = new CopyOnWriteArrayList<>();
            List<String> failures = new CopyOnWriteArrayList<>();
            long[] killedAt = new long[1];

            Thread killer = new Thread(() -> {
                try {
                    halfway.await();
                    killedAt[0] = System.nanoTime();
                    cluster.terminate(cluster.members().get(0)); // the master, owner of about half the keys
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            killer.start();
            Race.run(8, Duration.ofSeconds(240), i -> {
                int k = i % KEYS;
                boolean toggler = i >= KEYS;
                for (int n = 0; n < OPS_PER_THREAD; n++) {
                    try {
                        if (toggler) {
                            store.apply("toggle-" + k, AtomicOperation.force(n % 2 == 0 ? BreakerStatus.FORCED_OPEN : BreakerStatus.CLOSED), POLICY, n);
                            ackedToggles.incrementAndGet(k);
                        } else {
                            store.apply("count-" + k, AtomicOperation.failure(), NEVER_OPENS, n);
                            ackedCounts.incrementAndGet(k);
                        }
                        if (killedAt[0] != 0) {
                            ackedAfterKill.incrementAndGet();
                        }
                    } catch (StoreException e) {
                        (toggler ? failedToggles : failedCounts).incrementAndGet(k);
                        if (failures.size() < 3) {
                            failures.add(e.getMessage());
                        }
                    } catch (RuntimeException e) {
                        unexpected.add(e);
                    }
                    halfway.countDown();
                }
            });
            killer.join();
            assertEquals(List.of(), unexpected, "every failure must be a StoreException");
            assertEquals(1, cluster.members().size(), "one member was killed");
            assertTrue(ackedAfterKill.get() > 0, "the surviving member served calls after the kill");

            List<String> report = new ArrayList<>();
            for (int k = 0; k < KEYS; k++) {
                int stored = store.get("count-" + k).orElseThrow().failures();
                int acked = ackedCounts.get(k);
                int failed = failedCounts.get(k);
                report.add("count-" + k + ": stored " + stored + ", acked " + acked + ", failed " + failed);
                // One thread writes each key, so at most one of its calls was in flight when the primary died:
                // Hazelcast may lose that one (answered before its backup ran) or apply it twice (retried on the
                // new primary). Every other acknowledged write must be there exactly once.
                assertTrue(stored >= acked - IN_FLIGHT && stored <= acked + failed + IN_FLIGHT,
                        "acknowledged failures lost or doubled beyond the call in flight at the kill: " + report);
                long version = store.get("toggle-" + k).orElseThrow().version();
                int toggles = ackedToggles.get(k);
                int failedT = failedToggles.get(k);
                report.add("toggle-" + k + ": version " + version + ", acked transitions " + toggles + ", failed "
                        + failedT);
                assertTrue(version >= toggles - IN_FLIGHT && version <= toggles + failedT + IN_FLIGHT,
                        "acknowledged transitions lost or doubled beyond the call in flight at the kill: " + report);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (gaps.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(gaps.get() > 0, "the feed must signal a gap when a member leaves: " + report);
            for (Map.Entry<String, List<Long>> e : delivered.entrySet()) {
                List<Long> v = e.getValue();
                for (int i = 1; i < v.size(); i++) {
                    assertTrue(v.get(i) > v.get(i - 1), e.getKey() + " events out of version order: " + v);
                }
            }
            System.out.println("member loss: " + report + ", gaps " + gaps.get() + ", acked after the kill "
                    + ackedAfterKill.get() + ", failures such as " + failures);
            sub.close();
            store.close();
        }
    }
}

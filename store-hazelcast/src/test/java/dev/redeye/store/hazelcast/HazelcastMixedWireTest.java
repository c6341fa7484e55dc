package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializableFactory;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A rolling upgrade's mixed cluster: one member of this version and one that reads redeye's processors as the
 * release before batches of outcomes does ({@link PreviousWireFactory}: processor wire version 4, probe answer
 * {@code redeye-probe wire=4 format=4}). What the store README promises for it: a client of this version probing
 * the cluster runs CAS mode and sends that member no processor but the probe, so no batch reaches a member that
 * cannot read it; a client opened in native mode (no probe) has its batch refused by that member before anything is
 * applied, switches to CAS mode and applies the batch there exactly once; and in either mode a batch stores the
 * very value its outcomes one by one store (value format 3 here, a state with a window, which that release reads).
 */
class HazelcastMixedWireTest {
    private static final long NOW = 1_764_800_000_000L;
    /** A window that never opens on these outcomes, so that a batch and its outcomes one by one end in one value. */
    private static final Policy POLICY = Policy.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 50)
            .minimumNumberOfCalls(1_000).jitter(0).stateTtl(Duration.ofHours(1)).build();

    private static PreviousWireFactory previous;
    private static EmbeddedCluster cluster;
    private static HazelcastInstance client;

    @BeforeAll
    static void start() {
        previous = new PreviousWireFactory();
        cluster = new EmbeddedCluster("mixed-wire", 2, i -> i == 0 ? new RedeyeSerializableFactory() : previous);
        client = cluster.newClient();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static String map() {
        return "mixed-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A key whose partition the member of the previous wire owns. */
    private static String keyOnPreviousMember(String prefix) {
        Member owner = cluster.members().get(1).getCluster().getLocalMember();
        for (int i = 0; ; i++) {
            String k = prefix + "-" + i;
            if (owner.getUuid().equals(client.getPartitionService().getPartition(k).getOwner().getUuid())) {
                return k;
            }
        }
    }

    /** 40 outcomes, a quarter failed and a fifth slow, 25 ms apart, attributed to no instance. */
    private static AtomicOperation batch() {
        long[] packed = new long[40];
        for (int i = 0; i < packed.length; i++) {
            packed[i] = AtomicOperation.packOutcome(i % 4 != 0, i % 5 == 0, NOW + 25L * i);
        }
        return AtomicOperation.outcomes(packed, packed.length, null);
    }

    private static final BreakerState START = BreakerState.builder().version(1_000).build();

    /**
     * Applies {@link #batch()} to {@code key} and its outcomes one by one to a sibling key, both from
     * {@link #START}: the batch returns the fold, and both keys hold the same value but for its expiry.
     */
    private static void batchStoresWhatItsOutcomesOneByOneStore(HazelcastStore s, String key) {
        String singles = key + "-singles";
        s.put(key, START, Duration.ofHours(1));
        s.put(singles, START, Duration.ofHours(1));
        AtomicOperation b = batch();
        StateChange got = s.apply(key, b, POLICY, NOW);
        assertEquals(b.apply(START, POLICY, NOW), got);
        assertEquals(40, got.state().window().calls(), "the batch counted once");
        for (int i = 0; i < b.outcomeCount(); i++) {
            s.apply(singles, AtomicOperation.outcome(b.outcomeSucceeded(i), b.outcomeSlow(i)), POLICY,
                    b.outcomeAt(i));
        }
        Map<String, Object> raw = client.getMap(s.mapName());
        String batchValue = (String) raw.get(key);
        assertTrue(batchValue.startsWith(StateValues.STATE_PREFIX), batchValue); // format 3: a window
        assertEquals(withoutExpiry((String) raw.get(singles)), withoutExpiry(batchValue));
    }

    private static String withoutExpiry(String value) {
        return value.replaceAll("&expiresAt=\\d+", "");
    }

    @Test
    void aProbingClientRunsCasModeAndSendsTheMemberOfThePreviousWireNoBatch() {
        try (HazelcastStore s = HazelcastStore.builder(client).map(map()).build()) {
            assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
            assertTrue(s.toString().contains("runs another redeye-store-hazelcast version ('redeye-probe wire=4"
                    + " format=4', this client speaks 'redeye-probe wire=5 format=4')"), s::toString);
            batchStoresWhatItsOutcomesOneByOneStore(s, keyOnPreviousMember("probed"));
            batchStoresWhatItsOutcomesOneByOneStore(s, "probed-anywhere");
        }
        assertEquals(Map.of(RedeyeSerializableFactory.PROBE, previous.created(RedeyeSerializableFactory.PROBE)),
                previous.created(), "the member of the previous wire read nothing but probes");
        assertEquals(0, previous.refused.get());
    }

    @Test
    void aNativeClientsBatchIsRefusedByTheMemberOfThePreviousWireAndAppliedOnceInCasMode() {
        int refusedBefore = previous.refused.get();
        try (HazelcastStore s = HazelcastStore.builder(client).map(map()).mode(HazelcastStore.Mode.NATIVE).build()) {
            String key = keyOnPreviousMember("native");
            s.put(key, START, Duration.ofHours(1)); // refused by that member: the store runs CAS from here on
            assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
            assertTrue(s.toString().contains("runs another redeye-store-hazelcast wire version")
                    && s.toString().contains("in wire version 5, this member runs wire version 4"), s::toString);
            assertEquals(refusedBefore + 1, previous.refused.get());
        }
        int refused = previous.refused.get();
        try (HazelcastStore s = HazelcastStore.builder(client).map(map()).mode(HazelcastStore.Mode.NATIVE).build()) {
            String key = keyOnPreviousMember("native-batch");
            AtomicOperation b = batch();
            StateChange got = s.apply(key, b, POLICY, NOW); // the batch itself refused, then applied in CAS mode
            assertEquals(refused + 1, previous.refused.get(), "the member refused the batch's processor");
            assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
            assertEquals(40, got.state().window().calls());
            assertEquals(40, s.get(key).orElseThrow().window().calls(), "applied once, in CAS mode");
            batchStoresWhatItsOutcomesOneByOneStore(s, key + "-again");
        }
    }

    /**
     * Reads redeye's processors as the release before batches of outcomes reads them, seen from the wire: its
     * probe (no fields) answers {@code redeye-probe wire=4 format=4}, and every other processor starts with a wire
     * version its member refuses unless it is 4, with that release's message, before reading a field. A processor
     * in wire version 4 is what that release's own clients send; none is sent here, and reading one fails.
     */
    static final class PreviousWireFactory implements DataSerializableFactory {
        static final int WIRE = 4;
        private static final List<String> NAMES = List.of("", "ProbeProcessor", "StateProcessor", "ClaimProcessor",
                "DeleteProcessor", "PutProcessor", "a backup write", "ReadProcessor");
        private final Map<Integer, AtomicInteger> created = new ConcurrentHashMap<>();
        final AtomicInteger refused = new AtomicInteger();

        @Override
        public IdentifiedDataSerializable create(int classId) {
            if (classId < 1 || classId >= NAMES.size()) {
                return null; // as that release's factory: an id it does not know
            }
            created.computeIfAbsent(classId, k -> new AtomicInteger()).incrementAndGet();
            return classId == RedeyeSerializableFactory.PROBE ? new Probe() : new Processor(classId);
        }

        Map<Integer, Integer> created() {
            Map<Integer, Integer> m = new java.util.HashMap<>();
            created.forEach((k, v) -> m.put(k, v.get()));
            return m;
        }

        int created(int classId) {
            AtomicInteger n = created.get(classId);
            return n == null ? 0 : n.get();
        }

        private abstract static class Serializable implements IdentifiedDataSerializable {
            private final int classId;

            Serializable(int classId) {
                this.classId = classId;
            }

            @Override
            public int getFactoryId() {
                return RedeyeSerializableFactory.FACTORY_ID;
            }

            @Override
            public int getClassId() {
                return classId;
            }

            @Override
            public void writeData(ObjectDataOutput out) {
                throw new UnsupportedOperationException("a member of the previous wire only reads here");
            }
        }

        private static final class Probe extends Serializable
                implements EntryProcessor<String, Object, String>, ReadOnly {
            Probe() {
                super(RedeyeSerializableFactory.PROBE);
            }

            @Override
            public void readData(ObjectDataInput in) {
            }

            @Override
            public String process(Map.Entry<String, Object> entry) {
                return "redeye-probe wire=" + WIRE + " format=4";
            }

            @Override
            public EntryProcessor<String, Object, String> getBackupProcessor() {
                return null;
            }
        }

        private final class Processor extends Serializable implements EntryProcessor<String, Object, String> {
            Processor(int classId) {
                super(classId);
            }

            @Override
            public void readData(ObjectDataInput in) throws IOException {
                int wire = in.readInt();
                if (wire != WIRE) {
                    refused.incrementAndGet();
                    throw new IOException("redeye-store-hazelcast: a client sent " + NAMES.get(getClassId())
                            + " in wire version " + wire + ", this member runs wire version " + WIRE + ": put the"
                            + " same redeye-store-hazelcast version on members and clients, or open the store in CAS"
                            + " mode");
                }
                throw new IOException("this stand-in of the previous wire reads no processor of its own clients");
            }

            @Override
            public String process(Map.Entry<String, Object> entry) {
                throw new IllegalStateException("never read");
            }
        }
    }
}

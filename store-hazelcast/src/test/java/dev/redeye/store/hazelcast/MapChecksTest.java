package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.config.NearCacheConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.nio.serialization.HazelcastSerializationException;
import com.hazelcast.internal.nio.BufferObjectDataOutput;
import com.hazelcast.internal.serialization.InternalSerializationService;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the store refuses at open (a near cache on its map, a map that expires or evicts entries by itself), and
 * how its processors travel: as {@code IdentifiedDataSerializable} of {@link RedeyeSerializableFactory}, so that
 * a member without the factory is detected at open (CAS mode, saying why) and no class name is on the wire.
 */
@ExtendWith(SharedClusters.class)
class MapChecksTest {

    private static String name(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A client configured as the URI provider configures its own, plus {@code extra}. */
    private static HazelcastInstance client(java.util.function.Consumer<ClientConfig> extra) {
        ClientConfig c = HazelcastStoreProvider.clientConfig(
                HazelcastStoreProvider.parse(SharedClusters.embedded().cluster().uri("timeout=10000")));
        extra.accept(c);
        HazelcastInstance client = HazelcastClient.newHazelcastClient(c);
        Hooks.awaitConnectedToAll(client, SharedClusters.embedded().cluster().members().size());
        return client;
    }

    @Test
    void aClientWithANearCacheOnTheMapIsRefusedSayingWhy() {
        String cached = name("cached");
        HazelcastInstance client = client(c -> c.addNearCacheConfig(new NearCacheConfig(cached)));
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HazelcastStore.builder(client).map(cached).build());
            assertTrue(e.getMessage().contains("a near cache is configured for the Hazelcast map '" + cached + "'")
                    && e.getMessage().contains("stale"), e.getMessage());
            HazelcastStore other = HazelcastStore.builder(client).map(name("plain")).build();
            other.close(); // the same client without a near cache on that map is fine
        } finally {
            client.getLifecycleService().terminate();
        }
    }

    @Test
    void aMemberWithANearCacheOrAMapThatExpiresEvictsOrReadsBackupsIsRefused() {
        HazelcastInstance member = SharedClusters.embedded().cluster().members().get(0);
        String cached = name("member-cached");
        String ttl = name("member-ttl");
        String idle = name("member-idle");
        String evicts = name("member-evicts");
        String backups = name("member-backups");
        member.getConfig().addMapConfig(new MapConfig(backups).setReadBackupData(true));
        member.getConfig().addMapConfig(new MapConfig(cached).setNearCacheConfig(new NearCacheConfig(cached)));
        member.getConfig().addMapConfig(new MapConfig(ttl).setTimeToLiveSeconds(3_600));
        member.getConfig().addMapConfig(new MapConfig(idle).setMaxIdleSeconds(3_600));
        member.getConfig().addMapConfig(new MapConfig(evicts).setEvictionConfig(new EvictionConfig()
                .setEvictionPolicy(EvictionPolicy.LRU).setMaxSizePolicy(MaxSizePolicy.PER_NODE).setSize(10_000)));
        for (List<String> c : List.of(List.of(cached, "near cache"), List.of(ttl, "time-to-live-seconds=3600"),
                List.of(idle, "max-idle-seconds=3600"), List.of(evicts, "eviction policy LRU"),
                List.of(backups, "read-backup-data=true"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HazelcastStore.builder(member).map(c.get(0)).build(), c.get(0));
            assertTrue(e.getMessage().contains(c.get(1)) && e.getMessage().contains("'" + c.get(0) + "'"),
                    e.getMessage());
        }
    }

    /** A client cannot read the members' map configuration: its probe entry shows the map's ttl instead. */
    @Test
    void aClientSeesATimeToLiveConfiguredOnTheMembersAndLeavesNoProbeBehind() {
        HazelcastInstance client = SharedClusters.embedded().clientA();
        String ttl = name("client-ttl");
        client.getConfig().addMapConfig(new MapConfig(ttl).setTimeToLiveSeconds(3_600));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HazelcastStore.builder(client).map(ttl).build());
        assertTrue(e.getMessage().contains("expires entries by itself") && e.getMessage().contains("ttl=3600000 ms"),
                e.getMessage());
        assertEquals(0, client.getMap(ttl).size(), "the probe entry is removed");
        String fine = name("client-fine");
        HazelcastStore.builder(client).map(fine).build().close();
        assertEquals(0, client.getMap(fine).size(), "the probe entry is removed");
    }

    /** Members with redeye's classes but without its factory cannot read its processors: CAS mode, saying why. */
    @Test
    void membersWithoutTheFactoryRunCasModeSayingWhy() {
        try (EmbeddedCluster cluster = new EmbeddedCluster("no-factory", 1, false)) {
            HazelcastStore s = HazelcastStore.builder(cluster.newClient()).map(name("m")).build();
            try {
                assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
                assertTrue(s.toString().contains("has no " + RedeyeSerializableFactory.class.getName()
                        + " registered under factory id " + RedeyeSerializableFactory.FACTORY_ID), s::toString);
                s.apply("k", AtomicOperation.failure(), Policy.defaults(), 1);
                assertEquals(1, s.get("k").orElseThrow().failures());
                assertTrue(s.claimTrial("k", 1, Duration.ofSeconds(30)).isPresent());
            } finally {
                s.close();
            }
        }
    }

    /**
     * Every processor a client sends is read back by the factory alone, and its bytes carry ids, not a class
     * name (no reflection on the member); a member without the factory cannot read it at all.
     */
    @Test
    void processorsTravelAsIdentifiedDataSerializableWithoutAClassName() {
        SerializationService withFactory = new DefaultSerializationServiceBuilder()
                .addDataSerializableFactory(RedeyeSerializableFactory.FACTORY_ID, new RedeyeSerializableFactory())
                .build();
        SerializationService without = new DefaultSerializationServiceBuilder().build();
        Object[] processors = {new ProbeProcessor(), new StateProcessor(AtomicOperation.trialFailed(7), Policy.defaults(), 3),
            new StateProcessor(AtomicOperation.outcomes(new long[] {AtomicOperation.packOutcome(false, true, 5)}, 1,
                    "pod-a"), Policy.defaults(), 5),
            ClaimProcessor.claim("token", 2, 1_000), ClaimProcessor.release("token"), new DeleteProcessor(60_000),
            new PutProcessor(BreakerState.initial(9), 1_000), new MemberProcessor.BackupWrite("v", 1_000)};
        for (Object p : processors) {
            Data d = withFactory.toData(p);
            String bytes = new String(d.toByteArray(), StandardCharsets.ISO_8859_1);
            assertFalse(bytes.contains("dev.redeye"), p.getClass().getSimpleName() + " carries a class name: " + bytes);
            Object back = withFactory.toObject(d);
            assertEquals(p.getClass(), back.getClass());
            assertThrows(HazelcastSerializationException.class, () -> without.toObject(d),
                    p.getClass().getSimpleName() + " must not be readable without the factory");
        }
        assertNull(new RedeyeSerializableFactory().create(99), "an unknown class id");
    }

    /** A policy with no field at its default (checked), so that a field the wire drops shows. */
    private static final Policy EVERY_FIELD = Policy.builder().failureThreshold(4)
            .maxGapBetweenFailures(Duration.ofSeconds(3)).errorRateThreshold(0.25).minimumCalls(3).errorRateDecay(0.8)
            .successThreshold(2).resetTimeout(Duration.ofSeconds(2)).backoffMultiplier(1.5)
            .maxResetTimeout(Duration.ofSeconds(9)).jitter(0.05).stateTtl(Duration.ofHours(1))
            .failureRateThreshold(33.3).minimumNumberOfCalls(7).slowCallRateThreshold(12.5)
            .slidingWindow(SlidingWindowType.TIME_BASED, 241).mode(BreakerMode.METRICS_ONLY).quorum(3).build();

    private static InternalSerializationService withFactory() {
        return new DefaultSerializationServiceBuilder()
                .addDataSerializableFactory(RedeyeSerializableFactory.FACTORY_ID, new RedeyeSerializableFactory())
                .build();
    }

    /**
     * A state processor read on a member holds exactly the client's operation (kind, version, slot, instance; a
     * batch's every outcome, in order, with its success, slowness and instant, from one outcome to
     * {@link AtomicOperation#MAX_BATCH} and from the earliest instant a packed outcome holds to the latest),
     * policy (every field, every strategy, window type, mode and quorum) and {@code now}; a put processor exactly
     * the client's state, window, mode and contributions included.
     */
    @Test
    void processorsCarryEveryFieldOfThePolicyTheOperationAndTheState() throws Exception {
        Policy fraction = EVERY_FIELD.toBuilder().quorum(0).quorumFraction(0.375).build();
        for (java.lang.reflect.RecordComponent f : Policy.class.getRecordComponents()) {
            Policy p = f.getName().equals("quorumFraction") ? fraction : EVERY_FIELD;
            assertNotEquals(f.getAccessor().invoke(Policy.defaults()), f.getAccessor().invoke(p),
                    f.getName() + " is at its default in the test policy");
        }
        InternalSerializationService ss = withFactory();
        List<Policy> policies = new ArrayList<>(List.of(EVERY_FIELD, fraction, Policy.defaults()));
        for (Strategy st : Strategy.values()) {
            for (SlidingWindowType t : SlidingWindowType.values()) {
                for (BreakerMode m : BreakerMode.values()) {
                    if (m != BreakerMode.DEFAULT) {
                        policies.add(EVERY_FIELD.toBuilder().quorum(0).slidingWindow(t, 60).strategy(st).mode(m)
                                .build());
                    }
                }
            }
        }
        List<AtomicOperation> ops = new ArrayList<>();
        for (AtomicOperation.Kind k : AtomicOperation.Kind.values()) {
            if (k == AtomicOperation.Kind.OUTCOMES) {
                ops.addAll(batches());
                continue;
            }
            ops.add(k == AtomicOperation.Kind.FORCE_MODE ? AtomicOperation.of(k, BreakerMode.DISABLED.code(), 0)
                    : AtomicOperation.of(k, 1_234_567_890_123L, 987_654_321_000L));
        }
        ops.add(AtomicOperation.forceMode(BreakerMode.DEFAULT));
        for (boolean success : new boolean[] {true, false}) {
            for (boolean slow : new boolean[] {true, false}) {
                ops.add(AtomicOperation.outcome(success, slow, "pod-7@host:8080/a#b_c.d"));
            }
        }
        for (Policy p : policies) {
            for (AtomicOperation op : ops) {
                StateProcessor back = ss.toObject(ss.toData(new StateProcessor(op, p, 1_764_800_000_123L)));
                assertEquals(op, back.operation());
                assertEquals(op.slot(), back.operation().slot(), op.toString());
                assertEquals(op.instance(), back.operation().instance(), op.toString());
                assertEquals(p, back.policy());
                assertEquals(1_764_800_000_123L, back.now());
            }
        }
        BreakerState[] states = {BreakerState.initial(9),
            new BreakerState(7, 1_700_000_123_456L, true, 1_700_000_100_000L, 3, 0.1 + 0.2, 12_345_678_901L, 2, true,
                    SlidingWindow.decode("c5.7.20011"), BreakerMode.NORMAL, 42L),
            BreakerState.builder().window(SlidingWindow.decode("t3.588235294..4-1.2-0-2")).mode(BreakerMode.DISABLED)
                    .version(5).build(),
            BreakerState.builder().failures(3).contributors(List.of(new Contribution("pod-b", 1, 1, 20L),
                    new Contribution("pod-a", 2, 5, 10L))).version(6).build()};
        for (BreakerState st : states) {
            assertEquals(st, ss.<PutProcessor>toObject(ss.toData(new PutProcessor(st, 1_000))).state());
        }
    }

    /**
     * Batches of every shape the wire must keep: one outcome and {@link AtomicOperation#MAX_BATCH}, each
     * combination of success and slowness, instants at both ends of what a packed outcome holds, negative and out
     * of order, with and without an instance.
     */
    private static List<AtomicOperation> batches() {
        long min = -(1L << 61);
        long max = (1L << 61) - 1;
        long[] edges = {AtomicOperation.packOutcome(true, false, min), AtomicOperation.packOutcome(false, true, max),
            AtomicOperation.packOutcome(false, false, -1), AtomicOperation.packOutcome(true, true, 0),
            AtomicOperation.packOutcome(false, false, 1_764_800_000_123L),
            AtomicOperation.packOutcome(true, false, 1_764_799_999_000L)};
        long[] full = new long[AtomicOperation.MAX_BATCH];
        for (int i = 0; i < full.length; i++) {
            full[i] = AtomicOperation.packOutcome(i % 3 != 0, i % 5 == 0, 1_764_800_000_000L + 7L * i);
        }
        return List.of(AtomicOperation.outcomes(edges, edges.length, null),
                AtomicOperation.outcomes(edges, edges.length, "pod-7@host:8080/a#b_c.d"),
                AtomicOperation.outcomes(edges, 1, null), AtomicOperation.outcomes(full, full.length, "pod-b"));
    }

    /**
     * A member refuses a state processor whose fields break the operation's rules (an instance on a rule that is
     * no outcome, an invalid instance id, outcomes on a rule that is no batch, a batch of no outcomes or of more
     * than {@link AtomicOperation#MAX_BATCH}, refused before anything is allocated for them) with an error naming
     * the processor, rather than run another operation.
     */
    @Test
    void aStateProcessorWithAMalformedInstanceOrBatchIsRefused() throws Exception {
        InternalSerializationService ss = withFactory();
        AtomicOperation.Kind outcomes = AtomicOperation.Kind.OUTCOMES;
        for (Object[] bad : new Object[][] {{AtomicOperation.Kind.TRIAL_FAILURE, "pod-a", 0, "is attributed to no instance"},
            {AtomicOperation.Kind.FAILURE, "pod a", 0, "an instance id is 1 to 64 characters"},
            {AtomicOperation.Kind.FAILURE, "", 0, "an instance id is 1 to 64 characters"},
            {outcomes, "pod a", 1, "an instance id is 1 to 64 characters"},
            {AtomicOperation.Kind.FAILURE, null, 1, "failure carries 1 outcomes"},
            {outcomes, null, 0, "a batch of 0 outcomes (1 to 1024)"},
            {outcomes, null, -1, "a batch of -1 outcomes (1 to 1024)"},
            {outcomes, "pod-a", AtomicOperation.MAX_BATCH + 1, "a batch of 1025 outcomes (1 to 1024)"},
            {outcomes, null, Integer.MAX_VALUE, "a batch of 2147483647 outcomes"}}) {
            BufferObjectDataOutput out = ss.createObjectDataOutput();
            out.writeInt(MemberProcessor.WIRE);
            out.writeInt(((AtomicOperation.Kind) bad[0]).code());
            out.writeLong(1L);
            out.writeLong(7L);
            out.writeLong(0L);
            out.writeString((String) bad[1]);
            int count = (Integer) bad[2];
            out.writeInt(count);
            for (int i = 0; i < Math.min(count, AtomicOperation.MAX_BATCH + 1); i++) {
                out.writeLong(AtomicOperation.packOutcome(false, false, i));
            }
            out.writeBoolean(false);
            StateProcessor.writePolicy(out, EVERY_FIELD);
            java.io.IOException e = assertThrows(java.io.IOException.class,
                    () -> new StateProcessor().readData(ss.createObjectDataInput(out.toByteArray())));
            assertTrue(e.getMessage().contains("malformed state processor") && e.getMessage().contains(
                    (String) bad[3]), e.getMessage());
        }
    }

    /**
     * Processors travel in wire version 5: a member of the previous release (wire version 4, which reads no batch
     * of outcomes) reads the version first and refuses any other, so it never reads a batch in a layout it does not
     * know (nor any processor of this version); this version refuses the previous release's processors the same
     * way; and a client probing a member of the previous release ({@code wire=4 format=4}) runs CAS mode. The
     * value format stays 4: batches store nothing new.
     */
    @Test
    void processorsOfAnotherWireVersionAreRefused() throws Exception {
        InternalSerializationService ss = withFactory();
        for (AtomicOperation op : List.of(AtomicOperation.outcome(false, false, "pod-a"),
                AtomicOperation.outcomes(new long[] {AtomicOperation.packOutcome(false, false, 1)}, 1, "pod-a"))) {
            BufferObjectDataOutput out = ss.createObjectDataOutput();
            new StateProcessor(op, EVERY_FIELD, 1).writeData(out);
            assertEquals(5, ss.createObjectDataInput(out.toByteArray()).readInt(), "the wire version comes first");
        }
        assertEquals(5, MemberProcessor.WIRE);
        BufferObjectDataOutput previous = ss.createObjectDataOutput();
        previous.writeInt(4); // the previous release's layout: its wire version, then its fields
        previous.writeInt(AtomicOperation.Kind.FAILURE.code());
        previous.writeLong(1L);
        previous.writeLong(0L);
        previous.writeLong(0L);
        previous.writeString("pod-a");
        previous.writeBoolean(false);
        StateProcessor.writePolicy(previous, EVERY_FIELD);
        java.io.IOException e = assertThrows(java.io.IOException.class,
                () -> new StateProcessor().readData(ss.createObjectDataInput(previous.toByteArray())));
        assertTrue(e.getMessage().contains("in wire version 4, this member runs wire version 5"), e.getMessage());
        assertTrue(MemberProbe.cannotRunProcessors(new HazelcastSerializationException("x", e))
                .contains("another redeye-store-hazelcast wire version"));
        assertEquals("redeye-probe wire=5 format=4", ProbeProcessor.ANSWER,
                "a client probing a member of the previous release ('wire=4 format=4') runs CAS mode");
    }

    @Test
    void theFactoryRegistersOnceAndRefusesAnotherUnderItsId() {
        com.hazelcast.config.Config c = new com.hazelcast.config.Config();
        RedeyeSerializableFactory.register(c);
        RedeyeSerializableFactory.register(c);
        assertEquals(1, c.getSerializationConfig().getDataSerializableFactories().size());
        com.hazelcast.config.Config other = new com.hazelcast.config.Config();
        other.getSerializationConfig().addDataSerializableFactory(RedeyeSerializableFactory.FACTORY_ID, id -> null);
        assertThrows(IllegalArgumentException.class, () -> RedeyeSerializableFactory.register(other));
    }
}

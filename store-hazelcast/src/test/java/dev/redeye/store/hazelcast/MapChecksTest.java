package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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

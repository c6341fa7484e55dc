package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.ClientConnectionStrategyConfig;
import dev.redeye.Stores;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.Store;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The {@code hazelcast://} URI: parsing, validation, secrets, the client's breaker-sized settings, opening. */
@ExtendWith(SharedClusters.class)
class HazelcastStoreProviderTest {

    @Test
    void parsesClusterMembersAndOptions() {
        HazelcastStoreProvider.Parsed p = HazelcastStoreProvider.parse(
                "hazelcast://prod@10.0.0.1:5702,10.0.0.2,[::1]:5705?map=breakers&mode=cas&timeout=750");
        assertEquals("prod", p.cluster());
        assertEquals(List.of("10.0.0.1:5702", "10.0.0.2:5701", "[::1]:5705"), p.addresses());
        assertEquals("breakers", p.map());
        assertEquals(HazelcastStore.Mode.CAS, p.mode());
        assertEquals(750, p.timeoutMillis());

        HazelcastStoreProvider.Parsed d = HazelcastStoreProvider.parse("hazelcast://127.0.0.1");
        assertEquals("dev", d.cluster());
        assertEquals(List.of("127.0.0.1:5701"), d.addresses());
        assertEquals("redeye", d.map());
        assertEquals(HazelcastStore.Mode.AUTO, d.mode());
        assertEquals(2_000, d.timeoutMillis());
        assertNull(d.user());
        assertEquals("a b", HazelcastStoreProvider.parse("hazelcast://a%20b@h:1/").cluster());
    }

    @Test
    void badUrisAreRefusedNamingTheProblemWithoutTheSecret() {
        String[][] cases = {
            {"hazelcast://h:1?mpa=x&password=s3cret", "unknown Hazelcast URI parameter 'mpa'"},
            {"hazelcast://h:1?mode=fast&password=s3cret", "mode must be auto, native or cas"},
            {"hazelcast://h:1?timeout=0&password=s3cret", "timeout must be a positive number of ms"},
            {"hazelcast://h:99999?password=s3cret", "port must be 1..65535"},
            {"hazelcast://u:s3cret@h:1", "credentials go in ?user=&password="},
            {"hazelcast://h:1,,h:2?password=s3cret", "empty member address"},
            {"hazelcast://h:1/map?password=s3cret", "has no path"},
            {"hazelcast://h:1?map=&password=s3cret", "map must not be empty"},
            {"redis://h:1?password=s3cret", "not a hazelcast:// URI"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> HazelcastStoreProvider.parse(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
            assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        }
    }

    /** Hazelcast's client defaults wait 120 s per call and block while disconnected; a breaker cannot. */
    @Test
    void theClientIsSizedForABreaker() {
        ClientConfig c = HazelcastStoreProvider.clientConfig(HazelcastStoreProvider.parse(
                "hazelcast://prod@h:1?timeout=1500&user=app&password=s3cret"));
        assertEquals("prod", c.getClusterName());
        assertEquals("2", c.getProperty("hazelcast.client.invocation.timeout.seconds"));
        assertEquals("10000", c.getProperty("hazelcast.client.heartbeat.timeout"));
        assertEquals(1500, c.getNetworkConfig().getConnectionTimeout());
        assertEquals(ClientConnectionStrategyConfig.ReconnectMode.ASYNC,
                c.getConnectionStrategyConfig().getReconnectMode());
        assertEquals(-1, c.getConnectionStrategyConfig().getConnectionRetryConfig().getClusterConnectTimeoutMillis(),
                "a client that gave up reconnecting would shut down for good");
        assertEquals("app", c.getSecurityConfig().getUsernamePasswordIdentityConfig().getUsername());
    }

    @Test
    void anUnreachableClusterFailsWithinTheTimeoutAndLeavesNoClient() {
        int port = Ports.free(1).get(0);
        String uri = "hazelcast://127.0.0.1:" + port + "?timeout=600&password=s3cret";
        int clients = HazelcastClient.getAllHazelcastClients().size();
        long start = System.nanoTime();
        StoreException e = assertThrows(StoreException.class, () -> Stores.open(uri, dev.redeye.OpenMode.STRICT));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < 10_000, "took " + ms + " ms");
        assertTrue(e.getMessage().contains("within 600 ms"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
        assertEquals(clients, HazelcastClient.getAllHazelcastClients().size(),
                "the client that could not connect was shut down");
    }

    /**
     * A cluster without security (community edition) refuses a client that sends credentials; the failure
     * says so without the password.
     */
    @Test
    void credentialsAgainstACommunityClusterFailWithoutShowingThePassword() {
        String uri = SharedClusters.embedded().cluster().uri("timeout=1500&user=app&password=s3cret");
        StoreException e = assertThrows(StoreException.class, () -> Stores.open(uri, dev.redeye.OpenMode.STRICT));
        assertTrue(e.getMessage().contains("cannot reach the Hazelcast cluster"), e.getMessage());
        assertTrue(e.getMessage().contains("password=***"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    /** Stores.open finds the provider; the store owns its client and shuts it down on close. */
    @Test
    void opensThroughStoresAndOwnsItsClient() {
        String uri = SharedClusters.embedded().cluster().uri("map=provider-test&timeout=10000");
        Store s = Stores.open(uri, dev.redeye.OpenMode.STRICT);
        HazelcastStore h = (HazelcastStore) s;
        try {
            assertEquals(HazelcastStore.Mode.NATIVE, h.mode());
            assertEquals("provider-test", h.mapName());
            h.apply("op", AtomicOperation.failure(), Policy.defaults(), 1);
            assertEquals(1, s.get("op").orElseThrow().failures());
        } finally {
            s.close();
        }
        assertFalse(h.instance().getLifecycleService().isRunning(), "close shuts the store's own client down");
        assertThrows(StoreException.class, () -> s.get("op"));
    }
}

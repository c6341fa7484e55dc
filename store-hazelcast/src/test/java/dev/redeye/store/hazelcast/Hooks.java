package dev.redeye.store.hazelcast;

import com.hazelcast.client.impl.clientside.HazelcastClientProxy;
import com.hazelcast.client.impl.connection.ClientConnection;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import dev.redeye.api.BreakerState;
import java.util.ArrayList;
import java.util.List;

/** The TCK's optional hooks for Hazelcast, and other raw access the tests need. */
final class Hooks {
    private Hooks() {
    }

    /**
     * Writes garbage exactly where the store keeps the state of {@code key}: a String that is not a redeye
     * value, through the same Hazelcast instance, bypassing the store.
     */
    static void corrupt(HazelcastStore store, String key) {
        store.instance().getMap(store.mapName()).set(key, "failures=many&open=perhaps");
    }

    /**
     * Writes {@code state} back exactly where the store keeps the state of {@code key}, as a plain write (no
     * transition, so no event), through the same Hazelcast instance, bypassing the store: what a member lost
     * with a write its backup never received leaves behind.
     */
    static void rewind(HazelcastStore store, String key, BreakerState state) {
        store.instance().getMap(store.mapName()).set(key, StateValues.encode(new StoredValue(state, null, null,
                StoredValue.NEVER, BreakerState.UNKNOWN_VERSION, java.util.Map.of())));
    }

    /** Waits up to 30 s until a client has a connection to {@code members} members (internal API: tests only). */
    static void awaitConnectedToAll(HazelcastInstance client, int members) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (((HazelcastClientProxy) client).client.getConnectionManager().getActiveConnections().size() < members) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the client did not connect to all " + members + " members in 30 s");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * Starts the threads Hazelcast starts lazily for events (the client's event stripes, the members' event
     * threads): one event of a key in every partition. Without it, the first events a test sees start new
     * Hazelcast threads, which the TCK's R6.7 (close frees every thread the store started) would count against
     * the store.
     */
    static void warmUpEvents(HazelcastInstance client) {
        IMap<String, Object> map = client.getMap("redeye-test-warm-up");
        int keys = 300;
        java.util.concurrent.CountDownLatch seen = new java.util.concurrent.CountDownLatch(keys);
        java.util.UUID id = map.addEntryListener((EntryAddedListener<String, Object>) e -> seen.countDown(), false);
        try {
            for (int i = 0; i < keys; i++) {
                map.set("warm-" + i + "-" + System.nanoTime(), "x", 1, java.util.concurrent.TimeUnit.MINUTES);
            }
            if (!seen.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("warm-up events did not arrive in 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            map.removeEntryListener(id);
        }
    }

    /**
     * Cuts the client's connections to every member, as a network failure would: Hazelcast's internal client
     * connection manager is the only way to reach them (test code only). The client notices, reconnects in the
     * background and re-registers its listeners.
     *
     * @throws IllegalStateException if {@code hz} is not a client or has no connection to cut
     */
    static void cutConnections(HazelcastInstance hz) {
        if (!(hz instanceof HazelcastClientProxy)) {
            throw new IllegalStateException("not a Hazelcast client: " + hz);
        }
        List<ClientConnection> connections =
                new ArrayList<>(((HazelcastClientProxy) hz).client.getConnectionManager().getActiveConnections());
        if (connections.isEmpty()) {
            throw new IllegalStateException("the client has no connection to cut");
        }
        for (ClientConnection c : connections) {
            c.close("redeye test: the connection is cut", null);
        }
    }
}

package dev.redeye.store.hazelcast;

import com.hazelcast.client.impl.clientside.HazelcastClientProxy;
import com.hazelcast.client.impl.connection.ClientConnection;
import com.hazelcast.core.HazelcastInstance;
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

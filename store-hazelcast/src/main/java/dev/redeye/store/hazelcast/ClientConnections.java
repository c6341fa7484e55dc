package dev.redeye.store.hazelcast;

import com.hazelcast.client.impl.clientside.HazelcastClientProxy;
import com.hazelcast.client.impl.connection.ClientConnection;
import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

/**
 * Whether a smart client is connected to every member, so that a listener it registers now is registered on
 * every member (see {@link HazelcastFeed}). Hazelcast's public API does not say; this reads the client's
 * connection manager, an internal Hazelcast class, read-only. If that class is not there or not what it was in
 * Hazelcast 5.7 (another version), the answer is "cannot tell", which the feed treats like "no".
 */
final class ClientConnections {
    private ClientConnections() {
    }

    /** True only if {@code hz} is a client with a live connection to every data member it knows of. */
    static boolean connectedToAllMembers(HazelcastInstance hz) {
        try {
            if (!(hz instanceof HazelcastClientProxy)) {
                return false;
            }
            Set<UUID> connected = new HashSet<>();
            for (ClientConnection c : ((HazelcastClientProxy) hz).client.getConnectionManager().getActiveConnections()) {
                if (c.isAlive() && c.getRemoteUuid() != null) {
                    connected.add(c.getRemoteUuid());
                }
            }
            for (Member m : hz.getCluster().getMembers()) {
                if (!m.isLiteMember() && !connected.contains(m.getUuid())) {
                    return false;
                }
            }
            return true;
        } catch (RuntimeException | LinkageError cannotTell) {
            return false;
        }
    }
}

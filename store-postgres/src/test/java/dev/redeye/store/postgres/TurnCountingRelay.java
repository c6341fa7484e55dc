package dev.redeye.store.postgres;

import dev.redeye.tck.TcpRelay;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link TcpRelay} between the JDBC driver and PostgreSQL that counts round trips: a round trip starts each
 * time the client sends bytes after the server last spoke on that connection (or first). The driver writes a
 * whole request (every statement of one {@code execute}, up to its Sync) and then waits for the reply, so each
 * count is one network round trip, whatever the driver does behind the JDBC calls (an implicit {@code BEGIN},
 * a hidden query). The relay counts before it forwards, so a count always precedes the reply it causes.
 */
final class TurnCountingRelay implements AutoCloseable {
    private final AtomicInteger turns = new AtomicInteger();
    /** Per connection: whether the client spoke last (its next bytes start no new round trip). */
    private final Map<Integer, Boolean> clientSpokeLast = new ConcurrentHashMap<>();
    private final TcpRelay relay;

    TurnCountingRelay(String targetHost, int targetPort) {
        this.relay = new TcpRelay(targetHost, targetPort, (connection, fromClient, bytes) -> {
            Boolean before = clientSpokeLast.put(connection, fromClient);
            if (fromClient && !Boolean.TRUE.equals(before)) {
                turns.incrementAndGet();
            }
        });
    }

    int port() {
        return relay.port();
    }

    /** Round trips counted since the last {@link #reset()}, over every connection through the relay. */
    int roundTrips() {
        return turns.get();
    }

    void reset() {
        turns.set(0);
    }

    @Override
    public void close() {
        relay.close();
    }
}

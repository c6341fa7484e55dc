package dev.redeye.store.redis;

import dev.redeye.tck.TcpRelay;

/**
 * A TCP relay between a client and redis-server for partition tests, on the TCK's {@link TcpRelay}: while
 * frozen it accepts connections and reads bytes but forwards nothing in either direction, exactly like a
 * silently dead network path (no RST, no FIN). Unfreezing releases the held bytes. Test code only.
 */
final class FreezableProxy implements AutoCloseable {
    private final Object gate = new Object();
    private final TcpRelay relay;
    private volatile boolean frozen;

    FreezableProxy(String targetHost, int targetPort) {
        this.relay = new TcpRelay(targetHost, targetPort, (connection, fromClient, bytes) -> awaitThawed());
    }

    int port() {
        return relay.port();
    }

    void freeze() {
        frozen = true;
    }

    void unfreeze() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen) {
                gate.wait();
            }
        }
    }

    /**
     * Closes every relayed connection without forwarding what a freeze held back (a network path that died
     * with data in flight), then stops.
     */
    void drop() {
        relay.close();
        unfreeze();
    }

    @Override
    public void close() {
        unfreeze();
        relay.close();
    }
}

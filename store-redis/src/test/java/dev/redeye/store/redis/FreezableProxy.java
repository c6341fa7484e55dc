package dev.redeye.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A tiny TCP relay between a client and redis-server for partition tests. While frozen it accepts
 * connections and reads bytes but forwards nothing in either direction, exactly like a silently dead
 * network path (no RST, no FIN). Unfreezing releases the held bytes. Test code only.
 */
final class FreezableProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean frozen;
    private volatile boolean closed;

    FreezableProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "freezable-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
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

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitThawed();
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side closed: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "freezable-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait(50);
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        unfreeze();
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
        sockets.forEach(FreezableProxy::closeQuietly);
    }
}

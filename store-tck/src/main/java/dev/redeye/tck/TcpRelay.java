package dev.redeye.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay for store tests: listens on a free loopback port, connects each client it accepts to the target
 * server, and forwards bytes both ways, showing each chunk to an {@link Observer} before forwarding it. The
 * observer makes it what a test needs: it may count (round trips, bytes) or block (a frozen network path that
 * neither resets nor closes a connection, released by unblocking). Test support only: one daemon thread
 * accepts and two per connection forward; {@link #close()} closes every socket and ends them.
 */
public final class TcpRelay implements AutoCloseable {
    /** Sees the traffic of a relay. Called from the relay's threads, one per connection and direction. */
    @FunctionalInterface
    public interface Observer {
        /**
         * Called before a chunk is forwarded; may block to hold the traffic back.
         *
         * @param connection the number of the relayed connection, from 0 in accept order
         * @param fromClient whether the chunk goes from the client to the server
         * @param bytes      the chunk's length
         * @throws InterruptedException to drop the connection (both sockets are closed)
         */
        void beforeForward(int connection, boolean fromClient, int bytes) throws InterruptedException;
    }

    private final String targetHost;
    private final int targetPort;
    private final Observer observer;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private volatile boolean closed;

    /**
     * Starts relaying to {@code targetHost:targetPort}.
     *
     * @throws UncheckedIOException if no local port can be opened
     */
    public TcpRelay(String targetHost, int targetPort, Observer observer) {
        this.targetHost = Objects.requireNonNull(targetHost, "targetHost");
        this.targetPort = targetPort;
        this.observer = Objects.requireNonNull(observer, "observer");
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a relay port", e);
        }
        Thread t = new Thread(this::acceptLoop, "tcp-relay-accept");
        t.setDaemon(true);
        t.start();
    }

    /** The loopback port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                Socket upstream = new Socket(targetHost, targetPort);
                sockets.add(upstream);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                int id = connections.getAndIncrement();
                pump(id, true, client, upstream);
                pump(id, false, upstream, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(int id, boolean fromClient, Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    observer.beforeForward(id, fromClient, n);
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side closed, or the observer dropped the connection: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-relay-" + id + (fromClient ? "-up" : "-down"));
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    /** Stops accepting and closes every relayed connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
        sockets.forEach(TcpRelay::closeQuietly);
    }
}

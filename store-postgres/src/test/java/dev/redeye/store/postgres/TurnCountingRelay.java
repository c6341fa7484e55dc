package dev.redeye.store.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay between the JDBC driver and PostgreSQL that counts round trips: a round trip starts each time
 * the client sends bytes after the server last spoke (or first). The driver writes a whole request (every
 * statement of one {@code execute}, up to its Sync) and then waits for the reply, so each count is one network
 * round trip, whatever the driver does behind the JDBC calls (an implicit {@code BEGIN}, a hidden query).
 * Test code only; one relay per test, closed by the test.
 */
final class TurnCountingRelay implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger turns = new AtomicInteger();
    private volatile boolean closed;

    TurnCountingRelay(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "turn-counting-relay-accept");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Round trips counted since the last {@link #reset()}, over every connection through the relay. */
    int roundTrips() {
        return turns.get();
    }

    void reset() {
        turns.set(0);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(targetHost, targetPort);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                // true while the client spoke last on this connection: its next bytes start no new round trip
                boolean[] clientSpokeLast = {false};
                pump(client, upstream, () -> {
                    synchronized (clientSpokeLast) {
                        if (!clientSpokeLast[0]) {
                            clientSpokeLast[0] = true;
                            turns.incrementAndGet();
                        }
                    }
                });
                pump(upstream, client, () -> {
                    synchronized (clientSpokeLast) {
                        clientSpokeLast[0] = false;
                    }
                });
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    /** Forwards bytes, calling {@code seen} before forwarding each chunk (so the count precedes the reply). */
    private void pump(Socket from, Socket to, Runnable seen) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    seen.run();
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "turn-counting-relay-pump");
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

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
        sockets.forEach(TurnCountingRelay::closeQuietly);
    }
}

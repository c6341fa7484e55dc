package dev.redeye.store.dynamodb;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 relay between the SDK and dynalite that can lose the answer of the next successful request of
 * one DynamoDB action: it forwards the request, lets dynalite apply it, reads the answer, and closes the
 * client's connection instead of passing the answer on, exactly as a network that fails after the server
 * acted. The SDK then retries the same request. It can hold the lost answer's connection open (no answer)
 * while other clients' requests of the same action succeed, so that the retry meets an item many writers
 * have moved on since, and it can delay every answer, as a slow network or an overloaded endpoint would.
 * Loopback only; test code only.
 */
final class LosingProxy implements AutoCloseable {
    /** The longest a lost answer's connection is held open, whatever happens to other clients. */
    private static final long MAX_HOLD_NANOS = TimeUnit.SECONDS.toNanos(20);
    private final ServerSocket server;
    private final int upstreamPort;
    private volatile String loseNext;
    private volatile int holdFor;
    private volatile long answerDelayMillis;
    /** Successful (HTTP 200) answers relayed per action; guarded by {@code this}. */
    private final Map<String, Integer> relayed = new HashMap<>();
    final AtomicInteger lost = new AtomicInteger();
    /** How many successful answers of the lost answer's action other connections relayed while it was held. */
    final AtomicInteger passedWhileHeld = new AtomicInteger();

    LosingProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "losing-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /**
     * Loses the answer of the next successful (HTTP 200) request whose X-Amz-Target ends with {@code action}
     * (e.g. "UpdateItem"), closing the connection at once.
     */
    void loseNextAnswerOf(String action) {
        loseNextAnswerOf(action, 0);
    }

    /**
     * As {@link #loseNextAnswerOf(String)}, but keeps that connection open without an answer until
     * {@code others} successful answers of the same action have been relayed to other connections (at most
     * 20 s), then closes it.
     */
    void loseNextAnswerOf(String action, int others) {
        holdFor = others;
        loseNext = action;
    }

    /** Delays every answer by {@code millis} before relaying it (0: none). */
    void delayAnswers(long millis) {
        answerDelayMillis = millis;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Thread t = new Thread(() -> relay(client), "losing-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void relay(Socket client) {
        try (client; Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
            InputStream cin = client.getInputStream();
            OutputStream cout = client.getOutputStream();
            InputStream uin = upstream.getInputStream();
            OutputStream uout = upstream.getOutputStream();
            while (true) {
                Message request = Message.read(cin);
                if (request == null) {
                    return;
                }
                uout.write(request.bytes);
                uout.flush();
                Message answer = Message.read(uin);
                if (answer == null) {
                    return;
                }
                String target = request.header("x-amz-target");
                String action = target.substring(target.lastIndexOf('.') + 1);
                boolean ok = answer.head.startsWith("HTTP/1.1 200");
                if (ok && action.equals(loseNext) && lose()) {
                    hold(action, holdFor);
                    return; // closes the client's connection without an answer
                }
                if (ok) {
                    synchronized (this) {
                        relayed.merge(action, 1, Integer::sum);
                        notifyAll();
                    }
                }
                long delay = answerDelayMillis;
                if (delay > 0) {
                    try {
                        Thread.sleep(delay);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                cout.write(answer.bytes);
                cout.flush();
            }
        } catch (IOException e) {
            // a side closed
        }
    }

    /** Whether this connection is the one that loses its answer (only one does per arming). */
    private synchronized boolean lose() {
        if (loseNext == null) {
            return false;
        }
        loseNext = null;
        lost.incrementAndGet();
        return true;
    }

    /** Waits until {@code others} more successful answers of {@code action} have been relayed, or 20 s. */
    private synchronized void hold(String action, int others) {
        int start = relayed.getOrDefault(action, 0);
        long deadline = System.nanoTime() + MAX_HOLD_NANOS;
        try {
            while (relayed.getOrDefault(action, 0) - start < others) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        passedWhileHeld.set(relayed.getOrDefault(action, 0) - start);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    /** One HTTP message with a Content-Length body (what the SDK and dynalite send). */
    private static final class Message {
        final byte[] bytes;
        final String head;

        private Message(byte[] bytes, String head) {
            this.bytes = bytes;
            this.head = head;
        }

        String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return "";
        }

        static Message read(InputStream in) throws IOException {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                if (b < 0) {
                    return null;
                }
                buf.write(b);
                matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                        ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            String head = buf.toString(StandardCharsets.ISO_8859_1);
            Message m = new Message(null, head);
            String length = m.header("content-length");
            int n = length.isEmpty() ? 0 : Integer.parseInt(length);
            buf.write(in.readNBytes(n));
            return new Message(buf.toByteArray(), head);
        }
    }
}

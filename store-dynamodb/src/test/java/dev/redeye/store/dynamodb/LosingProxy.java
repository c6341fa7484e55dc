package dev.redeye.store.dynamodb;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 relay between the SDK and dynalite that can lose the answer of the next request of one
 * DynamoDB action: it forwards the request, lets dynalite apply it, reads the answer, and closes the client's
 * connection instead of passing the answer on, exactly as a network that fails after the server acted. The
 * SDK then retries the same request. Loopback only; test code only.
 */
final class LosingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int upstreamPort;
    private volatile String loseNext;
    final AtomicInteger lost = new AtomicInteger();

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

    /** Loses the answer of the next request whose X-Amz-Target ends with {@code action} (e.g. "UpdateItem"). */
    void loseNextAnswerOf(String action) {
        loseNext = action;
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
                String action = loseNext;
                if (action != null && request.header("x-amz-target").endsWith("." + action)) {
                    loseNext = null;
                    lost.incrementAndGet();
                    return; // closes the client's connection without an answer
                }
                cout.write(answer.bytes);
                cout.flush();
            }
        } catch (IOException e) {
            // a side closed
        }
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

package dev.redeye.store.dynamodb;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two endpoints that fail the way DynamoDB can, for the error-path tests: one that answers every request with
 * DynamoDB's throttling error (dynalite never throttles), and one that accepts connections and never answers.
 * Loopback only; test code only.
 */
final class FaultEndpoints {
    private FaultEndpoints() {
    }

    /**
     * An HTTP endpoint whose table 'thr' exists (DescribeTable answers ACTIVE) and which answers every other request
     * with ProvisionedThroughputExceededException; counts those requests.
     */
    static final class Throttling implements AutoCloseable {
        final AtomicInteger requests = new AtomicInteger();
        private final HttpServer server;

        Throttling() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
            server.createContext("/", ex -> {
                ex.getRequestBody().readAllBytes();
                String target = ex.getRequestHeaders().getFirst("X-Amz-Target");
                if (target != null && target.endsWith(".DescribeTable")) {
                    // The table exists (so that a store can be built); every data call is throttled.
                    byte[] table = ("{\"Table\":{\"TableName\":\"thr\",\"TableStatus\":\"ACTIVE\",\"KeySchema\":"
                            + "[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":"
                            + "[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}]}}").getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
                    ex.sendResponseHeaders(200, table.length);
                    ex.getResponseBody().write(table);
                    ex.close();
                    return;
                }
                requests.incrementAndGet();
                byte[] body = ("{\"__type\":\"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException\","
                        + "\"message\":\"The level of configured provisioned throughput for the table was exceeded.\"}")
                        .getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
                ex.sendResponseHeaders(400, body.length);
                ex.getResponseBody().write(body);
                ex.close();
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /** A TCP endpoint that accepts connections, reads what it is sent, and never answers. */
    static final class Silent implements AutoCloseable {
        private final ServerSocket server;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        Silent() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread t = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        sockets.add(s);
                        Thread r = new Thread(() -> drain(s), "silent-endpoint-reader");
                        r.setDaemon(true);
                        r.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "silent-endpoint-accept");
            t.setDaemon(true);
            t.start();
        }

        private static void drain(Socket s) {
            try (InputStream in = s.getInputStream()) {
                byte[] buf = new byte[4096];
                while (in.read(buf) >= 0) {
                    // swallow
                }
            } catch (IOException e) {
                // closed
            }
        }

        String url() {
            return "http://127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}

package dev.redeye.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real HTTP server on 127.0.0.1 (the JDK's {@link HttpServer}) answering each path with a scripted status:
 * {@link #status(String, int)} sets the status of paths containing a fragment (the longest matching fragment
 * wins; default 200), {@link #DROP} closes the connection without a response. Records the path and query of
 * every request it received.
 */
final class ScriptedServer implements AutoCloseable {
    /** A "status" that closes the connection without any response: the client sees an I/O error. */
    static final int DROP = -1;

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
        Thread t = new Thread(r, "scripted-server");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, Integer> statuses = new ConcurrentHashMap<>();
    private final List<String> received = new CopyOnWriteArrayList<>();

    ScriptedServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    /** Paths containing {@code fragment} answer {@code status} (or {@link #DROP}). */
    ScriptedServer status(String fragment, int status) {
        statuses.put(fragment, status);
        return this;
    }

    /** The absolute URI of {@code pathAndQuery} on this server. */
    URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + pathAndQuery);
    }

    /** Every request received, as path plus {@code ?query}, in order. */
    List<String> received() {
        return received;
    }

    private void handle(HttpExchange ex) throws IOException {
        URI u = ex.getRequestURI();
        String path = u.getRawPath();
        received.add(u.getRawQuery() == null ? path : path + "?" + u.getRawQuery());
        int status = 200;
        int best = -1;
        for (Map.Entry<String, Integer> e : statuses.entrySet()) {
            if (path.contains(e.getKey()) && e.getKey().length() > best) {
                best = e.getKey().length();
                status = e.getValue();
            }
        }
        ex.getRequestBody().readAllBytes();
        if (status == DROP) {
            ex.close(); // no status line: the client's read fails
            return;
        }
        byte[] body = ("status " + status).getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}

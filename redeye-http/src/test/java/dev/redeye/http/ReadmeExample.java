package dev.redeye.http;

import com.sun.net.httpserver.HttpServer;
import dev.redeye.api.BreakerStatus;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The README's example, runnable: a local HTTP server whose charges endpoint is down, the README's rules (a
 * service rule with a skip list, an endpoint rule with statuses and its own callback), and a guarded
 * {@code HttpClient} calling it. {@link ReadmeExampleTest} runs it and checks what it prints.
 */
public final class ReadmeExample {
    private ReadmeExample() {
    }

    public static void main(String[] args) throws Exception {
        run(System.out);
    }

    static void run(PrintStream out) throws Exception {
        // a local payments API: charges fail with 503, everything else answers 200
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            String path = ex.getRequestURI().getPath();
            int status = path.startsWith("/payments/v1/charges") ? 503 : 200;
            ex.sendResponseHeaders(status, -1);
            ex.close();
        });
        server.start();
        String base = "http://127.0.0.1:" + server.getAddress().getPort();
        try {
            // --8<-- [readme]
            Consumer<HttpStateChange> pageOnCall = change -> out.println("PAGE payments on-call: " + change);
            Map<String, Object> config = Map.of(
                    "defaults", Map.of("failureThreshold", 5, "resetTimeout", "30s"),
                    "rules", List.of(
                            Map.of("type", "service", "match", "/payments",
                                    "skipList", List.of("/payments/health", "/payments/v1/reports")),
                            Map.of("type", "endpoint", "match", "/payments/v1/charges", "name", "charges",
                                    "failureThreshold", 3, "resetTimeout", "20s",
                                    "successStatuses", List.of(404), "failureStatuses", List.of(429, "5xx"),
                                    "onStateChange", pageOnCall)));

            try (HttpBreakers breakers = HttpBreakers.builder(HttpRuleSet.fromMap(config))
                    .onStateChange(change -> out.println("breaker " + change))     // every rule, after its own
                    .build()) {
                HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
                for (String path : List.of("/payments/v1/charges?id=1", "/payments/v1/charges?id=2",
                        "/payments/v1/charges?id=3", "/payments/v1/charges?id=4", "/payments/v1/refunds/7",
                        "/payments/health")) {
                    HttpRequest request = HttpRequest.newBuilder(URI.create(base + path)).build();
                    try {
                        int status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                        out.println(path + " -> " + status);
                    } catch (HttpCircuitOpenException e) {
                        out.println(path + " -> rejected by " + e.level() + " " + e.key() + ", " + e.retryAfter()
                                .map(d -> "retry after " + d.toSeconds() + " s").orElse("forced open until reset"));
                    }
                }
                breakers.printStatus(out::println);
                if (breakers.stateOf(Level.SERVICE, "/payments") != BreakerStatus.CLOSED) {
                    throw new AssertionError("the service stays closed: 3 failures of 5, then a success leaked one");
                }
            }
            // --8<-- [/readme]
        } finally {
            server.stop(0);
        }
    }
}

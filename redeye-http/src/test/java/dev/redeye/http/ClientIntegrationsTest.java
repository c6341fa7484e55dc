package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.http.okhttp.CircuitOpenIOException;
import dev.redeye.http.okhttp.RedeyeInterceptor;
import dev.redeye.http.spring.RedeyeClientHttpRequestInterceptor;
import dev.redeye.http.spring.RedeyeExchangeFilterFunction;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Each client integration against a real HTTP server: the JDK {@code HttpClient} wrapper (send and sendAsync),
 * the OkHttp interceptor, the Spring interceptor (RestClient and RestTemplate) and the WebClient filter. For each:
 * failures by status open the endpoint, the rejection names the level and key and never reaches the server, a
 * request matching no rule passes untouched.
 */
class ClientIntegrationsTest {
    private ScriptedServer server;
    private HttpBreakers breakers;

    @BeforeEach
    void start() throws IOException {
        server = new ScriptedServer();
        breakers = HttpBreakers.builder(HttpRuleSet.builder()
                        .rule(HttpRule.service("/api").failureThreshold(50))
                        .rule(HttpRule.endpoint("/api/orders").failureThreshold(2).successStatuses("404"))
                        .build())
                .customize(b -> b.jitter(0))
                .build();
        server.status("/api/orders", 503).status("/api/orders/missing", 404).status("/free", 500);
    }

    @AfterEach
    void stop() {
        breakers.close();
        server.close();
    }

    /** Two failing calls, a 404 counted as a success, then the endpoint is open and the server sees no more. */
    private void assertTrips(ThrowingCall call) throws Exception {
        assertEquals(404, call.status("/api/orders/missing"));
        assertEquals(503, call.status("/api/orders/1"));
        assertEquals(503, call.status("/api/orders/2?page=3"));
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/api/orders"));
        int seen = server.received().size();
        Exception e = assertThrows(Exception.class, () -> call.status("/api/orders/3"));
        HttpCircuitOpenException rejection = assertInstanceOf(HttpCircuitOpenException.class,
                e instanceof CircuitOpenIOException ? ((CircuitOpenIOException) e).rejection() : e);
        assertEquals(Level.ENDPOINT, rejection.level());
        assertEquals("/api/orders", rejection.key());
        assertTrue(rejection.retryAfter().orElseThrow().compareTo(Duration.ofSeconds(50)) > 0
                && rejection.retryAfter().orElseThrow().compareTo(Duration.ofSeconds(60)) <= 0, "retryAfter of a 60 s resetTimeout just "
                + "opened (real clock): " + rejection.retryAfter().orElseThrow());
        assertEquals(seen, server.received().size(), "the rejected call reached the server");
        assertEquals(500, call.status("/free/x"), "a request matching no rule passes untouched");
        assertEquals(200, call.status("/api/other"), "the service level still admits other endpoints");
        assertEquals(List.of("/api/orders/missing", "/api/orders/1", "/api/orders/2?page=3", "/free/x", "/api/other"),
                server.received());
    }

    @FunctionalInterface
    interface ThrowingCall {
        int status(String pathAndQuery) throws Exception;
    }

    @Test
    void jdkHttpClientSend() throws Exception {
        HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
        assertTrips(p -> client.send(HttpRequest.newBuilder(server.uri(p)).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    void jdkHttpClientSendAsync() throws Exception {
        HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
        assertTrips(p -> {
            CompletableFuture<HttpResponse<String>> f = client.sendAsync(HttpRequest.newBuilder(server.uri(p)).build(),
                    HttpResponse.BodyHandlers.ofString());
            try {
                return f.get(10, TimeUnit.SECONDS).statusCode();
            } catch (ExecutionException e) {
                throw (Exception) e.getCause();
            }
        });
    }

    @Test
    void jdkHttpClientCountsAConnectionWithoutResponseAsAFailure() throws Exception {
        HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
        server.status("/api/orders", ScriptedServer.DROP);
        for (int i = 0; i < 2; i++) {
            assertThrows(IOException.class, () -> client.send(HttpRequest.newBuilder(server.uri("/api/orders")).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, "/api/orders"));
        ExecutionException async = assertThrows(ExecutionException.class, () -> client.sendAsync(
                HttpRequest.newBuilder(server.uri("/api/orders")).build(), HttpResponse.BodyHandlers.ofString())
                .get(10, TimeUnit.SECONDS));
        assertInstanceOf(HttpCircuitOpenException.class, async.getCause());
    }

    @Test
    void okHttpInterceptor() throws Exception {
        OkHttpClient client = new OkHttpClient.Builder().addInterceptor(new RedeyeInterceptor(breakers)).build();
        try {
            assertTrips(p -> {
                try (Response r = client.newCall(new Request.Builder().url(server.uri(p).toString()).build()).execute()) {
                    return r.code();
                }
            });
        } finally {
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
    }

    @Test
    void springRestClient() throws Exception {
        RestClient client = RestClient.builder()
                .requestFactory(new JdkClientHttpRequestFactory())
                .requestInterceptor(new RedeyeClientHttpRequestInterceptor(breakers))
                .defaultStatusHandler(s -> true, (req, res) -> { }) // statuses as values, not exceptions
                .build();
        assertTrips(p -> client.get().uri(server.uri(p)).retrieve().toBodilessEntity().getStatusCode().value());
    }

    @Test
    void springRestTemplate() throws Exception {
        RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory());
        template.getInterceptors().add(new RedeyeClientHttpRequestInterceptor(breakers));
        assertTrips(p -> {
            try {
                return template.getForEntity(server.uri(p), String.class).getStatusCode().value();
            } catch (HttpServerErrorException | org.springframework.web.client.HttpClientErrorException e) {
                return e.getStatusCode().value(); // the interceptor recorded the status before the error handler
            }
        });
    }

    @Test
    void springWebClient() throws Exception {
        WebClient client = WebClient.builder()
                .clientConnector(new JdkClientHttpConnector())
                .filter(new RedeyeExchangeFilterFunction(breakers))
                .build();
        assertTrips(p -> client.get().uri(server.uri(p))
                .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()))
                .block(Duration.ofSeconds(10)));
    }
}

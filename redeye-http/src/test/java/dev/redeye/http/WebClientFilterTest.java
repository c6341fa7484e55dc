package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.Permit;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Strategy;
import dev.redeye.http.spring.RedeyeExchangeFilterFunction;
import dev.redeye.spi.Store;
import dev.redeye.tck.MutableClock;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The WebClient filter against real servers: admission at subscription, a cancelled exchange gives a trial back,
 * a connector's read timeout is a failure, and two instances share the breakers over the build's Redis.
 */
class WebClientFilterTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String ENDPOINT = "/api/orders";

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private ScriptedServer server;
    private HangingServer hanging;
    private HttpBreakers breakers;

    @BeforeEach
    void start() throws IOException {
        server = new ScriptedServer();
        server.status(ENDPOINT, 503);
        hanging = new HangingServer();
        breakers = HttpBreakers.builder(HttpRuleSet.builder()
                        .rule(HttpRule.endpoint(ENDPOINT).failureThreshold(2).resetTimeout(Duration.ofSeconds(10))
                                .strategy(Strategy.CONSECUTIVE))
                        .build())
                .clock(clock).ticker(clock).customize(b -> b.jitter(0).trialTimeout(Duration.ofMinutes(5)))
                .build();
    }

    @AfterEach
    void stop() throws IOException {
        breakers.close();
        server.close();
        hanging.close();
    }

    private WebClient client(JdkClientHttpConnector connector, HttpBreakers b) {
        return WebClient.builder().clientConnector(connector).filter(new RedeyeExchangeFilterFunction(b)).build();
    }

    private static Mono<Integer> status(WebClient client, URI uri) {
        return client.get().uri(uri).exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()));
    }

    private void trip(WebClient client) {
        for (int i = 0; i < 2; i++) {
            assertEquals(503, status(client, server.uri(ENDPOINT + "/" + i)).block(WAIT));
        }
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, ENDPOINT));
    }

    @Test
    void admissionHappensAtSubscriptionAndARejectionNeverReachesTheServer() {
        WebClient client = client(new JdkClientHttpConnector(), breakers);
        Mono<Integer> assembledWhileClosed = status(client, server.uri(ENDPOINT + "/later"));
        trip(client);
        int seen = server.received().size();
        StepVerifier.create(assembledWhileClosed)
                .expectErrorSatisfies(e -> {
                    HttpCircuitOpenException rejection = assertInstanceOf(HttpCircuitOpenException.class, e);
                    assertEquals(Level.ENDPOINT, rejection.level());
                    assertEquals(ENDPOINT, rejection.key());
                    assertEquals(Duration.ofSeconds(10), rejection.retryAfter().orElseThrow());
                })
                .verify(WAIT);
        assertEquals(seen, server.received().size(), "the rejected exchange reached the server");
        breakers.reset(Level.ENDPOINT, ENDPOINT);
        server.status(ENDPOINT, 200);
        assertEquals(200, assembledWhileClosed.block(WAIT), "resubscribed after the reset: asks again");
    }

    @Test
    void anExchangeCancelledBeforeItsResponseGivesTheTrialBackAndRecordsNothing() throws Exception {
        WebClient client = client(new JdkClientHttpConnector(), breakers);
        trip(client);
        clock.advance(Duration.ofSeconds(10));
        StepVerifier.create(status(client, hanging.uri(ENDPOINT + "/slow")))
                .expectSubscription()
                .then(hanging::awaitConnection) // the trial's request is on the wire
                .thenCancel()
                .verify(WAIT);
        assertEquals(BreakerStatus.HALF_OPEN, breakers.stateOf(Level.ENDPOINT, ENDPOINT), "the cancel recorded nothing");
        Permit next = breakers.breaker(Level.ENDPOINT, ENDPOINT).tryAcquire(breakers.operation(Level.ENDPOINT, ENDPOINT));
        assertTrue(next.isTrial(), "the trial came back at once, not after trialTimeout (5 min): " + next);
        next.release();
    }

    @Test
    void aConnectorReadTimeoutIsAFailure() {
        JdkClientHttpConnector connector = new JdkClientHttpConnector();
        connector.setReadTimeout(Duration.ofMillis(200));
        WebClient client = client(connector, breakers);
        for (int i = 0; i < 2; i++) {
            StepVerifier.create(status(client, hanging.uri(ENDPOINT + "/slow")))
                    .expectError(WebClientRequestException.class).verify(WAIT);
        }
        assertEquals(BreakerStatus.OPEN, breakers.stateOf(Level.ENDPOINT, ENDPOINT));
    }

    @Test
    void aServiceTrippedThroughOneInstancesWebClientRejectsTheOthers() {
        String prefix = "redeye-http-test:webclient:" + UUID.randomUUID() + ":";
        HttpRuleSet rules = HttpRuleSet.builder().rule(HttpRule.service("/inventory").failureThreshold(3)).build();
        List<String> changesSeenByA = new CopyOnWriteArrayList<>();
        try (Store storeA = SharedRedisTest.redis(prefix);
                Store storeB = SharedRedisTest.redis(prefix);
                HttpBreakers a = HttpBreakers.builder(rules).store(storeA)
                        .onStateChange(c -> changesSeenByA.add(c.toString())).build();
                HttpBreakers b = HttpBreakers.builder(rules).store(storeB).build()) {
            WebClient clientA = client(new JdkClientHttpConnector(), a);
            WebClient clientB = client(new JdkClientHttpConnector(), b);
            server.status("/inventory", 503);
            for (int i = 0; i < 3; i++) {
                assertEquals(503, status(clientA, server.uri("/inventory/stock/" + i)).block(WAIT));
            }
            assertEquals(List.of("service:/inventory CLOSED -> OPEN (opened)"), changesSeenByA);
            int seen = server.received().size();
            HttpCircuitOpenException e = assertThrows(HttpCircuitOpenException.class,
                    () -> status(clientB, server.uri("/inventory/items/9")).block(WAIT));
            assertEquals(Level.SERVICE, e.level());
            assertEquals(seen, server.received().size(), "B's rejected request never reached the server");
            b.reset(Level.SERVICE, "/inventory");
            assertEquals(BreakerStatus.CLOSED, a.stateOf(Level.SERVICE, "/inventory"), "B's reset closes it for A");
            server.status("/inventory", 200);
            assertEquals(200, status(clientA, server.uri("/inventory/items/1")).block(WAIT));
            for (BreakerSnapshot s : a.snapshots()) {
                storeA.delete(s.operation()); // leave nothing behind on the shared server
            }
        }
    }

    /** A real server on 127.0.0.1 that accepts connections and never answers. */
    private static final class HangingServer implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        private final List<Socket> accepted = new CopyOnWriteArrayList<>();
        private final CountDownLatch connected = new CountDownLatch(1);
        private final Thread acceptor;

        HangingServer() throws IOException {
            acceptor = new Thread(() -> {
                while (!socket.isClosed()) {
                    try {
                        accepted.add(socket.accept());
                        connected.countDown();
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "hanging-server");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        URI uri(String path) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
        }

        void awaitConnection() {
            try {
                assertTrue(connected.await(10, TimeUnit.SECONDS), "no connection reached the hanging server");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}

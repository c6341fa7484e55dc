package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;

/**
 * {@code rediss://} on a Redis Cluster: three private masters serving TLS only, the cluster bus over TLS too
 * ({@code --tls-cluster yes}), all with one certificate for {@code localhost} (a DNS name, no IP address), as a
 * cluster's certificate usually is. The cluster reports its nodes by IP ({@code 127.0.0.1}), so checking each
 * node's certificate against the address it is reached at fails every handshake but the seed's; the store
 * checks every node against the URI's host (or {@code tlsServerName}) instead, which the certificate names.
 */
class RedisTlsClusterTest {
    @TempDir
    static Path certs;
    private static final List<RedisProcess> NODES = new ArrayList<>();

    @BeforeAll
    static void startTlsCluster() throws Exception {
        TestCertificates.make(certs);
        List<String> args = new ArrayList<>(TestCertificates.serverArgs(certs));
        args.addAll(List.of("--tls-cluster", "yes"));
        args.addAll(RedisTestCluster.NODE_ARGS);
        for (int i = 0; i < 3; i++) {
            NODES.add(RedisProcess.startTls(args.toArray(new String[0])));
        }
        RedisTestCluster.create(NODES, List.of("--tls", "--cacert", certs.resolve("ca.pem").toString()),
                port -> new Jedis(new HostAndPort("localhost", port),
                        RedisStoreProvider.parse("rediss://localhost:" + port + "?" + trust("ca.pem")).config()));
    }

    @AfterAll
    static void stop() {
        NODES.forEach(RedisProcess::close);
    }

    private static String trust(String file) {
        return "trustStore=" + certs.resolve(file);
    }

    private static String uri(String host, String query) {
        return "rediss://" + host + ":" + NODES.get(0).port() + "?timeout=2000&prefix=" + RedisTestSupport.newPrefix()
                + "&" + query;
    }

    @Test
    void nodesReportedByIpAreVerifiedAgainstTheUriHostForCommandsAndTheFeed() throws Exception {
        try (RedisStore store = RedisStore.open(uri("localhost", trust("ca.pem")))) {
            JedisCluster cluster = (JedisCluster) store.client();
            Map<String, ConnectionPool> nodes = cluster.getClusterNodes();
            assertEquals(3, nodes.size(), nodes.keySet().toString());
            assertTrue(nodes.keySet().stream().allMatch(n -> n.startsWith("127.0.0.1:")),
                    "the cluster reports its nodes by IP: " + nodes.keySet());
            Policy p = Policy.builder().failureThreshold(2).build();
            for (int i = 0; i < 30; i++) {
                String op = "op-" + i;
                assertEquals(1, store.apply(op, AtomicOperation.failure(), p, 1).state().failures(), op);
                assertEquals(1, store.get(op).orElseThrow().failures(), op);
            }
            for (Map.Entry<String, ConnectionPool> node : nodes.entrySet()) {
                try (Jedis j = new Jedis(node.getValue().getResource())) {
                    assertTrue(j.dbSize() > 0, "every master holds breaker keys written over TLS: " + node.getKey());
                }
            }

            List<TransitionEvent> events = new CopyOnWriteArrayList<>();
            store.subscribe(events::add, () -> { });
            store.apply("tls-feed", AtomicOperation.force(BreakerStatus.FORCED_OPEN), p, 2);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (events.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, events.size(), "the feed connection, to the node owning the stream's slot, verifies too");
            String token = store.claimTrial("tls-feed", 1, Duration.ofSeconds(5)).orElseThrow();
            store.releaseTrial("tls-feed", token);
        }
    }

    @Test
    void aNameTheCertificateDoesNotCarryIsStillRefused() {
        StoreException e = assertThrows(StoreException.class,
                () -> RedisStore.open(uri("localhost", trust("ca.pem") + "&tlsServerName=redis.example")));
        assertTrue(RedisTlsTest.causes(e).contains("SSLHandshakeException"), RedisTlsTest.causes(e));
    }

    @Test
    void aCertificateFromAnUntrustedCaIsStillRefused() {
        StoreException e = assertThrows(StoreException.class, () -> RedisStore.open(uri("localhost", trust("other-ca.pem"))));
        assertTrue(RedisTlsTest.causes(e).contains("PKIX") || RedisTlsTest.causes(e).contains("certification path"),
                RedisTlsTest.causes(e));
    }
}

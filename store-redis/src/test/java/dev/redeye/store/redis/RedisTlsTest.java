package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicOperation;

/**
 * {@code rediss://} verifies the server: a private redis-server listening with TLS only ({@code --port 0
 * --tls-port}), a CA and a server certificate for {@code localhost} (DNS name only) made with openssl for this
 * run, and a second CA that signed nothing. The right host with the right CA works; the same server reached
 * as {@code 127.0.0.1} (not in the certificate) is refused, and so is a trust store holding the wrong CA or
 * the JVM's default trust store.
 */
class RedisTlsTest {
    @TempDir
    static Path certs;
    private static RedisProcess server;

    @BeforeAll
    static void startTlsServer() throws Exception {
        TestCertificates.make(certs);
        server = RedisProcess.startTls(TestCertificates.serverArgs(certs).toArray(new String[0]));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String uri(String host, String query) {
        return "rediss://" + host + ":" + server.port() + "?timeout=2000&prefix=" + RedisTestSupport.newPrefix()
                + (query.isEmpty() ? "" : "&" + query);
    }

    private static String trust(String file) {
        return "trustStore=" + certs.resolve(file);
    }

    @Test
    void theRightHostWithTheRightCaWorksForCommandsAndTheFeed() throws Exception {
        try (RedisStore store = RedisStore.open(uri("localhost", trust("ca.pem")))) {
            store.put("tls", BreakerState.INITIAL.toBuilder().failures(2).build(), Duration.ofMinutes(1));
            assertEquals(2, store.get("tls").orElseThrow().failures());
            List<TransitionEvent> events = new CopyOnWriteArrayList<>();
            store.subscribe(events::add, () -> { });
            store.apply("tls", AtomicOperation.force(BreakerStatus.FORCED_OPEN), Policy.defaults(), 1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (events.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, events.size(), "the feed connection verifies and connects over TLS too");
        }
    }

    @Test
    void aHostNameTheCertificateDoesNotNameIsRefused() {
        // the same server and the same trusted CA, reached by an address the certificate does not name
        StoreException e = assertThrows(StoreException.class, () -> RedisStore.open(uri("127.0.0.1", trust("ca.pem"))));
        assertTrue(causes(e).contains("SSLHandshakeException") && causes(e).contains("127.0.0.1"),
                "refused by host name verification: " + causes(e));
    }

    @Test
    void reachedByAnAddressTheCertificateDoesNotNameTheServerIsVerifiedAgainstTlsServerName() {
        try (RedisStore store = RedisStore.open(uri("127.0.0.1", trust("ca.pem") + "&tlsServerName=localhost"))) {
            assertTrue(store.get("by-ip").isEmpty(), "connected to 127.0.0.1, verified as localhost");
        }
        StoreException e = assertThrows(StoreException.class,
                () -> RedisStore.open(uri("localhost", trust("ca.pem") + "&tlsServerName=redis.example")));
        assertTrue(causes(e).contains("SSLHandshakeException"), "a name the certificate lacks: " + causes(e));
        IllegalArgumentException plain = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("redis://localhost:6379?tlsServerName=localhost"));
        assertTrue(plain.getMessage().contains("tlsServerName"), plain.getMessage());
    }

    @Test
    void aCertificateFromAnUntrustedCaIsRefused() {
        StoreException e = assertThrows(StoreException.class,
                () -> RedisStore.open(uri("localhost", trust("other-ca.pem"))));
        assertTrue(causes(e).contains("SSLHandshakeException"), causes(e));
        assertTrue(causes(e).contains("PKIX") || causes(e).contains("certification path"), causes(e));
    }

    @Test
    void withoutATrustStoreTheJvmDefaultIsUsedAndDoesNotTrustThisCa() {
        StoreException e = assertThrows(StoreException.class, () -> RedisStore.open(uri("localhost", "")));
        assertTrue(causes(e).contains("SSLHandshakeException"), causes(e));
    }

    @Test
    void theJvmDefaultTrustStoreIsHonouredAndTheHostNameIsStillChecked() throws Exception {
        // a JVM-wide trust store holding the test CA, as an operator would set with -Djavax.net.ssl.trustStore
        Path p12 = certs.resolve("jvm-trust.p12");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(certs.resolve("ca.pem"))) {
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        try (OutputStream out = Files.newOutputStream(p12)) {
            ks.store(out, "changeit".toCharArray());
        }
        String oldStore = System.getProperty("javax.net.ssl.trustStore");
        String oldPass = System.getProperty("javax.net.ssl.trustStorePassword");
        System.setProperty("javax.net.ssl.trustStore", p12.toString());
        System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
        try {
            try (RedisStore store = RedisStore.open(uri("localhost", ""))) {
                assertTrue(store.get("jvm-default").isEmpty(), "trusted through the JVM default trust store");
            }
            StoreException e = assertThrows(StoreException.class, () -> RedisStore.open(uri("127.0.0.1", "")),
                    "a trusted certificate that does not name the host is still refused");
            assertTrue(causes(e).contains("127.0.0.1"), causes(e));
        } finally {
            restore("javax.net.ssl.trustStore", oldStore);
            restore("javax.net.ssl.trustStorePassword", oldPass);
        }
    }

    private static void restore(String name, String value) {
        if (value == null) {
            System.clearProperty(name);
        } else {
            System.setProperty(name, value);
        }
    }

    @Test
    void aTrustStoreNeedsRedissAndAReadablePemFile() {
        IllegalArgumentException plain = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("redis://localhost:6379?" + trust("ca.pem")));
        assertTrue(plain.getMessage().contains("trustStore"), plain.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("rediss://localhost:6379?" + trust("no-such.pem")));
        assertTrue(missing.getMessage().contains("trustStore"), missing.getMessage());
        IllegalArgumentException notPem = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("rediss://localhost:6379?" + trust("san.ext")));
        assertTrue(notPem.getMessage().contains("trustStore"), notPem.getMessage());
    }

    /** The class names and messages of the whole cause chain. */
    static String causes(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" | ");
            for (Throwable s : c.getSuppressed()) {
                sb.append("suppressed ").append(causes(s));
            }
        }
        return sb.toString();
    }
}

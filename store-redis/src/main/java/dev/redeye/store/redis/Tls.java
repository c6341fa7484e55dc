package dev.redeye.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

import redis.clients.jedis.DefaultJedisClientConfig;

/**
 * Full TLS verification for {@code rediss://} URIs: the server's certificate must chain to a trusted CA
 * (the PEM file given as {@code trustStore}, else the JVM's default trust store) <em>and</em> name the
 * expected server (endpoint identification {@code HTTPS}: a DNS or IP subject alternative name). Jedis 6.2
 * checks neither the host name nor, without a factory, anything beyond the JVM default; this class sets both
 * explicitly.
 *
 * <p><b>The expected name is the URI's host (or {@code tlsServerName}) for every connection</b>, not the
 * address each connection is made to. A Redis Cluster reports its nodes by IP address, and Jedis connects to
 * them by that address; checking each node's certificate against its IP fails unless every certificate lists
 * the IPs, which a cluster's certificate usually does not. So the TCP connection goes to the address the
 * cluster reports, and the TLS handshake (SNI and the host-name check) uses the configured name: a node is
 * accepted when it proves, with a certificate from a trusted CA, that it is the server the URI names. The
 * node list itself comes from a connection verified the same way.
 */
final class Tls {
    private Tls() {
    }

    /**
     * Sets TLS with full verification on {@code cfg}.
     *
     * @param trustStore a PEM file holding one or more CA certificates, or null for the JVM default trust
     *                   store ({@code javax.net.ssl.trustStore} and friends, else the JDK's cacerts)
     * @param serverName the name every server's certificate must carry (and SNI sends)
     * @throws IllegalArgumentException if the file cannot be read or holds no certificate (naming the option)
     */
    static void configure(DefaultJedisClientConfig.Builder cfg, String trustStore, String serverName) {
        TrustManagerFactory tmf;
        try {
            tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustStore == null ? null : pemKeyStore(trustStore));
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            SSLSocketFactory factory = new ServerNameSocketFactory(ctx.getSocketFactory(), serverName);
            cfg.ssl(true).sslSocketFactory(factory).sslParameters(verifyingParameters());
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("Redis URI parameter trustStore: cannot build a TLS trust manager"
                    + " from " + (trustStore == null ? "the JVM default trust store" : trustStore) + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Layers TLS over a connected socket as if it had been opened to {@code serverName}: Jedis connects the
     * plain socket to the node's address and then asks for TLS naming that address; the handshake's SNI and
     * endpoint identification use {@code serverName} instead.
     */
    private static final class ServerNameSocketFactory extends SSLSocketFactory {
        private final SSLSocketFactory delegate;
        private final String serverName;

        ServerNameSocketFactory(SSLSocketFactory delegate, String serverName) {
            this.delegate = delegate;
            this.serverName = serverName;
        }

        @Override
        public Socket createSocket(Socket s, String host, int port, boolean autoClose) throws IOException {
            return delegate.createSocket(s, serverName, port, autoClose);
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return createSocket(new Socket(host, port), host, port, true);
        }

        @Override
        public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
            return createSocket(new Socket(host, port, localHost, localPort), host, port, true);
        }

        @Override
        public Socket createSocket(InetAddress host, int port) throws IOException {
            return createSocket(new Socket(host, port), host.getHostAddress(), port, true);
        }

        @Override
        public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
                throws IOException {
            return createSocket(new Socket(address, port, localAddress, localPort), address.getHostAddress(), port,
                    true);
        }

        @Override
        public String[] getDefaultCipherSuites() {
            return delegate.getDefaultCipherSuites();
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return delegate.getSupportedCipherSuites();
        }
    }

    /** SSL parameters that make the handshake check the host name against the certificate. */
    static SSLParameters verifyingParameters() {
        SSLParameters p = new SSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        return p;
    }

    private static KeyStore pemKeyStore(String path) throws GeneralSecurityException {
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException e) {
            throw new IllegalArgumentException("Redis URI parameter trustStore: cannot read the PEM file " + path
                    + ": " + e, e);
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException("Redis URI parameter trustStore: no certificate in " + path
                    + " (expected PEM: -----BEGIN CERTIFICATE-----)");
        }
        KeyStore ks;
        try {
            ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create an empty key store", e);
        }
        int i = 0;
        for (Certificate c : certs) {
            ks.setCertificateEntry("ca-" + i++, c);
        }
        return ks;
    }
}

package dev.redeye.store.redis;

import java.io.IOException;
import java.io.InputStream;
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
 * (the PEM file given as {@code trustStore}, else the JVM's default trust store) <em>and</em> name the host
 * the URI connects to (endpoint identification {@code HTTPS}: a DNS or IP subject alternative name). Jedis
 * 6.2 checks neither the host name nor, without a factory, anything beyond the JVM default; this class sets
 * both explicitly.
 */
final class Tls {
    private Tls() {
    }

    /**
     * Sets TLS with full verification on {@code cfg}.
     *
     * @param trustStore a PEM file holding one or more CA certificates, or null for the JVM default trust
     *                   store ({@code javax.net.ssl.trustStore} and friends, else the JDK's cacerts)
     * @throws IllegalArgumentException if the file cannot be read or holds no certificate (naming the option)
     */
    static void configure(DefaultJedisClientConfig.Builder cfg, String trustStore) {
        TrustManagerFactory tmf;
        try {
            tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustStore == null ? null : pemKeyStore(trustStore));
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            SSLSocketFactory factory = ctx.getSocketFactory();
            cfg.ssl(true).sslSocketFactory(factory).sslParameters(verifyingParameters());
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("Redis URI parameter trustStore: cannot build a TLS trust manager"
                    + " from " + (trustStore == null ? "the JVM default trust store" : trustStore) + ": "
                    + e.getMessage(), e);
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

package dev.redeye.store.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made with openssl for one test class: a CA ({@code ca.pem}), a second CA that signed nothing
 * ({@code other-ca.pem}), and a server certificate for {@code localhost} only ({@code server.pem},
 * {@code server.key}: a DNS subject alternative name, no IP address), as most teams issue them.
 */
final class TestCertificates {
    private TestCertificates() {
    }

    /** Writes the files into {@code dir}. */
    static void make(Path dir) throws IOException, InterruptedException {
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=redeye test CA");
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "other.key", "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=redeye untrusted CA");
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
        Files.writeString(dir.resolve("san.ext"), "subjectAltName=DNS:localhost\n");
        openssl(dir, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
    }

    /** The redis-server options that serve {@code server.pem} and accept clients without certificates. */
    static List<String> serverArgs(Path dir) {
        return List.of("--tls-cert-file", dir.resolve("server.pem").toString(),
                "--tls-key-file", dir.resolve("server.key").toString(),
                "--tls-ca-cert-file", dir.resolve("ca.pem").toString(), "--tls-auth-clients", "no");
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }
}

package dev.redeye.store.hazelcast;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports and names for test clusters: never Hazelcast's 5701 range (other runs on this machine may use it),
 * and a unique cluster name per cluster, so parallel runs never merge.
 */
final class Ports {
    private Ports() {
    }

    /** The lowest port handed out. */
    private static final int LOW = 20_000;
    /**
     * The highest port handed out: below the ports Linux (32768-60999), Windows and macOS (49152-65535) give the
     * local end of outgoing connections by default, which the tests' many client connections take at random.
     */
    private static final int HIGH = 32_767;

    /**
     * {@code n} ports free on 127.0.0.1 now, from a random place in {@value #LOW}..{@value #HIGH}. Another
     * process may still take one before it is bound: a caller that can, starts again on another port.
     */
    static synchronized List<Integer> free(int n) {
        List<Integer> out = new ArrayList<>();
        int port = LOW + ThreadLocalRandom.current().nextInt(HIGH - LOW + 1);
        while (out.size() < n) {
            port = port >= HIGH ? LOW : port + 1;
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
                s.setReuseAddress(true);
                out.add(port);
            } catch (IOException taken) {
                // try the next one
            }
        }
        return out;
    }

    /** A cluster name no other run uses. */
    static String clusterName(String what) {
        return "redeye-test-" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}

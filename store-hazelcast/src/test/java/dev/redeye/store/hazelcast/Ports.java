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

    /** {@code n} ports free on 127.0.0.1 now, from a random place in 20000..59999. */
    static synchronized List<Integer> free(int n) {
        List<Integer> out = new ArrayList<>();
        int port = 20_000 + ThreadLocalRandom.current().nextInt(40_000);
        while (out.size() < n) {
            port = port >= 59_999 ? 20_000 : port + 1;
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

package dev.redeye.cli;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.redeye.store.hazelcast.RedeyeSerializableFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.UUID;

/**
 * One real Hazelcast member in the test JVM (it carries redeye's classes and registers their serialization
 * factory, so stores run in native mode), on a free port of 127.0.0.1 under a cluster name of its own: parallel
 * runs never join it. Started on first use, terminated by a shutdown hook when the test JVM ends.
 */
final class HazelcastMember {
    private static String uri;

    private HazelcastMember() {
    }

    /** {@code hazelcast://<cluster>@127.0.0.1:<port>} of the member, started if needed. */
    static synchronized String uri() {
        if (uri == null) {
            String cluster = "redeye-cli-test-" + UUID.randomUUID().toString().substring(0, 8);
            int port = freePort();
            Config c = new Config().setClusterName(cluster);
            c.setProperty("hazelcast.logging.type", "slf4j");
            c.setProperty("hazelcast.phone.home.enabled", "false");
            c.setProperty("hazelcast.partition.count", "31");
            c.setProperty("hazelcast.wait.seconds.before.join", "0");
            c.getNetworkConfig().setPort(port).setPortAutoIncrement(false)
                    .getInterfaces().setEnabled(true).addInterface("127.0.0.1");
            JoinConfig join = c.getNetworkConfig().getJoin();
            join.getMulticastConfig().setEnabled(false);
            join.getAutoDetectionConfig().setEnabled(false);
            join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + port);
            RedeyeSerializableFactory.register(c); // native mode: the member reads redeye's entry processors
            HazelcastInstance member = Hazelcast.newHazelcastInstance(c);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> member.getLifecycleService().terminate()));
            uri = "hazelcast://" + cluster + "@127.0.0.1:" + port;
        }
        return uri;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port on 127.0.0.1", e);
        }
    }
}

package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.RoutingMode;
import com.hazelcast.core.HazelcastInstance;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The whole TCK against a member of the official image ({@code hazelcast/hazelcast:5.7.0}), which has no redeye
 * class: the store must choose CAS mode and pass. Skipped, with that reason, where no Docker engine runs (the
 * bare-member JVM of {@link HazelcastCasTckTest} covers the same ground there). Clients use single-member
 * routing, since the member advertises its address inside the container, not the mapped port.
 */
@Testcontainers(disabledWithoutDocker = true)
class OfficialImageTest {
    @Container
    static final GenericContainer<?> MEMBER = new GenericContainer<>(DockerImageName.parse("hazelcast/hazelcast:5.7.0"))
            .withEnv("HZ_CLUSTERNAME", "redeye-image")
            .withEnv("HZ_PHONE_HOME_ENABLED", "false")
            .withExposedPorts(5701)
            .waitingFor(Wait.forLogMessage(".*is STARTED.*", 1));

    @Test
    void theTckPassesInCasModeAgainstTheOfficialImage() {
        String uri = "hazelcast://redeye-image@" + MEMBER.getHost() + ":" + MEMBER.getMappedPort(5701)
                + "?timeout=10000";
        List<HazelcastInstance> clients = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ClientConfig c = HazelcastStoreProvider.clientConfig(HazelcastStoreProvider.parse(uri));
            c.getConnectionStrategyConfig().setAsyncStart(false);
            c.getNetworkConfig().getClusterRoutingConfig().setRoutingMode(RoutingMode.SINGLE_MEMBER);
            clients.add(HazelcastClient.newHazelcastClient(c));
        }
        String map = "tck-image-" + UUID.randomUUID().toString().substring(0, 8);
        AtomicInteger n = new AtomicInteger();
        try {
            TckReport report = TckRunner.run(() -> {
                HazelcastStore s = HazelcastStore.builder(clients.get(n.getAndIncrement() % 2)).map(map).build();
                assertEquals(HazelcastStore.Mode.CAS, s.mode(), s::toString);
                return s;
            });
            assertTrue(report.failed() == 0, report::format);
        } finally {
            clients.forEach(HazelcastInstance::shutdown);
        }
    }
}

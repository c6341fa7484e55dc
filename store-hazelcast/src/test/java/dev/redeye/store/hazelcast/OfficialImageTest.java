package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.RoutingMode;
import com.hazelcast.core.HazelcastInstance;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import dev.redeye.testsupport.ServiceAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * The whole TCK against a member of the official image ({@code hazelcast/hazelcast:5.7.0}), which has no redeye
 * class: the store must choose CAS mode and pass. The member is the one {@value #ENV} names, else one started
 * by Testcontainers; skipped, with that reason, where neither is there (the bare-member JVM of
 * {@link HazelcastCasTckTest} covers the same ground). Clients use single-member routing, since the member
 * advertises its address inside the container, not the mapped port.
 */
class OfficialImageTest {
    static final String ENV = "REDEYE_HAZELCAST_IMAGE_URL";
    static final ServiceAddress MEMBER = ServiceAddress.of(ENV, "hazelcast/hazelcast:5.7.0", 5701,
            "hazelcast://redeye-image@%s:%d?timeout=10000", "for example 'docker run -e HZ_CLUSTERNAME=redeye-image"
                    + " -p 5701:5701 hazelcast/hazelcast:5.7.0' and export " + ENV
                    + "='hazelcast://redeye-image@127.0.0.1:5701?timeout=10000'.")
            .withContainer(c -> c.withEnv("HZ_CLUSTERNAME", "redeye-image").withEnv("HZ_PHONE_HOME_ENABLED", "false")
                    .waitingFor(Wait.forLogMessage(".*is STARTED.*", 1)));

    @Test
    void theTckPassesInCasModeAgainstTheOfficialImage() {
        Assumptions.assumeTrue(MEMBER.available(), () -> "no member of the official image: neither " + ENV
                + " is set nor does a Docker engine run");
        String uri = MEMBER.url();
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

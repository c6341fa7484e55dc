package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.AtomicRecording;
import dev.redeye.api.AtomicTransitions;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import dev.redeye.tck.StoreTck;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The full redeye TCK in <b>CAS mode</b>, against a bare member: a separate JVM with only the Hazelcast jar on
 * its class path ({@link MemberJvm#bare()}), which cannot load any redeye class. Each store is opened in
 * {@link HazelcastStore.Mode#AUTO} and must detect that and choose CAS mode. Both hooks are provided.
 */
@ExtendWith(SharedClusters.class)
class HazelcastCasTckTest extends StoreTck {
    private static final String MAP = "tck-cas-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger opened = new AtomicInteger();

    @BeforeEach
    void memberUp() {
        SharedClusters.bare();
    }

    @Override
    protected Store newClient() {
        SharedClusters.Bare b = SharedClusters.bare();
        HazelcastInstance client = opened.getAndIncrement() % 2 == 0 ? b.clientA() : b.clientB();
        HazelcastStore s = HazelcastStore.builder(client).map(MAP).build();
        if (s.mode() != HazelcastStore.Mode.CAS) {
            throw new AssertionError("a bare member cannot run redeye's processors: expected CAS mode, got " + s);
        }
        return s;
    }

    @Override
    protected void corrupt(Store client, String key) {
        Hooks.corrupt((HazelcastStore) client, key);
    }

    @Override
    protected void interruptFeed(Store client) {
        Hooks.cutConnections(((HazelcastStore) client).instance());
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicRecording.class, TrialClaims.class, AtomicTransitions.class, TransitionFeed.class);
    }
}

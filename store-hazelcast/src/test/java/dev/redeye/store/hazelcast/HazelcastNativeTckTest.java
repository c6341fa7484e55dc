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
 * The full redeye TCK in <b>native mode</b>: two clients of a real 2-member Hazelcast cluster embedded in this
 * JVM (so the members carry redeye's entry processors), each TCK client a {@link HazelcastStore} over one of
 * them, alternately, in a map of its own per test class. Every capability is declared and both hooks are
 * provided.
 */
@ExtendWith(SharedClusters.class)
class HazelcastNativeTckTest extends StoreTck {
    private static final String MAP = "tck-native-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger opened = new AtomicInteger();

    @BeforeEach
    void clusterUp() {
        SharedClusters.embedded();
    }

    @Override
    protected Store newClient() {
        SharedClusters.Embedded e = SharedClusters.embedded();
        HazelcastInstance client = opened.getAndIncrement() % 2 == 0 ? e.clientA() : e.clientB();
        HazelcastStore s = HazelcastStore.builder(client).map(MAP).build();
        if (s.mode() != HazelcastStore.Mode.NATIVE) {
            throw new AssertionError("embedded members carry redeye's classes: expected native mode, got " + s);
        }
        return s;
    }

    /** R1.7: a value that is not redeye's, exactly where the store keeps the state of {@code key}. */
    @Override
    protected void corrupt(Store client, String key) {
        Hooks.corrupt((HazelcastStore) client, key);
    }

    /** R6.8: closes every connection of the client the store works through; Hazelcast reconnects. */
    @Override
    protected void interruptFeed(Store client) {
        Hooks.cutConnections(((HazelcastStore) client).instance());
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicRecording.class, TrialClaims.class, AtomicTransitions.class, TransitionFeed.class);
    }
}

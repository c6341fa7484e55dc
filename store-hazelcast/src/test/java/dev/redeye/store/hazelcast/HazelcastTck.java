package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.QuorumState;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.StoreTck;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The TCK over two Hazelcast clients: each TCK client is a {@link HazelcastStore} over one of the two,
 * alternately, opened in {@link HazelcastStore.Mode#AUTO} in a map of its own per test class, and must detect
 * the mode the subclass expects. Every capability is declared and every hook is provided: R1.7 writes a
 * foreign {@code String} under the key; R6.8 and R6.12 close every connection of the store's client
 * (Hazelcast reconnects and re-registers the listener); R6.12 writes an earlier state back into the map.
 */
@ExtendWith(SharedClusters.class)
abstract class HazelcastTck extends StoreTck {
    private final String map = getClass().getSimpleName().toLowerCase() + "-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger opened = new AtomicInteger();
    private final Supplier<SharedClusters.TwoClients> cluster;
    private final HazelcastStore.Mode expectedMode;

    /**
     * @param cluster      the cluster's two clients (starting it on first use)
     * @param expectedMode the mode the store must detect on its members
     */
    HazelcastTck(Supplier<SharedClusters.TwoClients> cluster, HazelcastStore.Mode expectedMode) {
        this.cluster = cluster;
        this.expectedMode = expectedMode;
    }

    @Override
    protected Store newClient() {
        HazelcastInstance[] c = cluster.get().clients();
        HazelcastStore s = HazelcastStore.builder(c[opened.getAndIncrement() % 2]).map(map).build();
        if (s.mode() != expectedMode) {
            s.close();
            throw new AssertionError("expected " + expectedMode + " mode on these members, got " + s);
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
    protected void rewind(Store client, String key, BreakerState state) {
        Hooks.rewind((HazelcastStore) client, key, state);
    }

    /**
     * The members embedded in this JVM ({@code hz.<instance>.*}) and the two shared client instances
     * ({@code redeye-<pid>-<n>.*}) grow their pools lazily while tests run; they are not the store's threads.
     * The store's own feed thread ({@code redeye-hazelcast-feed-*}) still counts.
     */
    @Override
    protected boolean backendThread(Thread thread) {
        String n = thread.getName();
        return n.startsWith("hz.") || n.matches("redeye-\\d+-\\d+\\..*");
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class, QuorumState.class,
                OperationListing.class, OutcomeBatches.class);
    }
}

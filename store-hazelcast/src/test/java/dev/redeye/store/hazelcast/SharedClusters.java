package dev.redeye.store.hazelcast;

import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.core.HazelcastInstance;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The clusters test classes share in one test JVM, started on first use and stopped when the whole run ends
 * (JUnit's root store closes them): one embedded 2-member cluster with two clients (native mode), and one bare
 * member JVM with two clients (CAS mode). Starting members is the slow part of this module's tests; every test
 * works in maps of its own, so sharing is sound. Test classes that use them declare
 * {@code @ExtendWith(SharedClusters.class)}.
 */
final class SharedClusters implements BeforeAllCallback {
    /** Maps of the embedded cluster whose name matches this are stored in OBJECT in-memory format. */
    static final String OBJECT_MAPS = "object-*";
    private static Embedded embedded;
    private static Bare bare;

    /** The shared embedded cluster and its two clients. */
    static synchronized Embedded embedded() {
        if (embedded == null) {
            EmbeddedCluster c = new EmbeddedCluster("embedded", 2,
                    new MapConfig(OBJECT_MAPS).setInMemoryFormat(InMemoryFormat.OBJECT));
            embedded = new Embedded(c, c.newClient(), c.newClient());
        }
        return embedded;
    }

    /** The shared bare member and its two clients. */
    static synchronized Bare bare() {
        if (bare == null) {
            try {
                MemberJvm m = MemberJvm.bare();
                bare = new Bare(m, m.newClient(), m.newClient());
            } catch (java.io.IOException e) {
                throw new IllegalStateException("cannot start the bare member JVM: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the bare member", e);
            }
        }
        return bare;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(SharedClusters.class, k -> (AutoCloseable) SharedClusters::stopAll);
    }

    private static synchronized void stopAll() {
        if (embedded != null) {
            embedded.cluster.close();
            embedded = null;
        }
        if (bare != null) {
            bare.member.close();
            bare = null;
        }
    }

    /** A cluster's two clients (the TCK's two processes). */
    interface TwoClients {
        HazelcastInstance clientA();

        HazelcastInstance clientB();

        /** Both clients, A first. */
        default HazelcastInstance[] clients() {
            return new HazelcastInstance[] {clientA(), clientB()};
        }
    }

    /** The embedded cluster with its two clients. */
    record Embedded(EmbeddedCluster cluster, HazelcastInstance clientA, HazelcastInstance clientB)
            implements TwoClients {
    }

    /** The bare member with its two clients. */
    record Bare(MemberJvm member, HazelcastInstance clientA, HazelcastInstance clientB) implements TwoClients {
    }
}

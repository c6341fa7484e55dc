package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.testsupport.RedisProcess;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.support.StateCodec;
import redis.clients.jedis.Jedis;

/**
 * What a fail-over loses, and {@code waitReplicas}: a private primary and its replica. Redis replicates
 * asynchronously, so an opening the primary acknowledged and the replica had not received yet is lost when the
 * replica is promoted (shown with the replication link frozen, a relay between them forwarding nothing, while
 * the opening is written, then the primary killed, the link dropped with the opening in it and the replica
 * promoted). With {@code waitReplicas=1} the store answers a transition only once the replica acknowledged it
 * ({@code WAIT} on the connection that wrote it); with the link frozen the call fails after {@code waitTimeout}
 * with a {@link StoreException} instead of an acknowledgement a fail-over would undo.
 */
class RedisWaitTest {
    /**
     * The WAIT timeout of the store under test: long enough that a replica on a loaded machine answers within
     * it, so that only the frozen link makes a WAIT fall short (a WAIT sent there takes all of it); below the
     * store's 2 s socket timeout, which bounds the reply to WAIT.
     */
    private static final long WAIT_MILLIS = 1_500;
    private RedisProcess primary;
    private FreezableProxy link;
    private RedisProcess replica;

    @BeforeEach
    void start() {
        primary = RedisProcess.start("--repl-diskless-sync-delay", "0"); // the replica syncs at once
        link = new FreezableProxy("127.0.0.1", primary.port());
        replica = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(link.port()));
        awaitLinkUp();
    }

    @AfterEach
    void stop() {
        replica.close();
        link.close();
        primary.close();
    }

    private void awaitLinkUp() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        try (Jedis p = new Jedis("127.0.0.1", primary.port()); Jedis r = new Jedis("127.0.0.1", replica.port())) {
            // Up on the replica's side, online on the primary's, and answering a WAIT: a replica that is still
            // loading the initial sync, or whose first acknowledgement is not in yet, fails the WAITs below.
            while (!(r.info("replication").contains("master_link_status:up")
                    && p.info("replication").contains("state=online")
                    && p.waitReplicas(1, 1_000) == 1)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the replica did not sync: " + r.info("replication"));
                }
                RedisProcess.sleep(20);
            }
        }
    }

    /** Kills the primary, drops the frozen link and promotes the replica: a fail-over before it had the last writes. */
    private Jedis failOver() {
        primary.kill();
        link.drop();
        Jedis promoted = new Jedis("127.0.0.1", replica.port());
        promoted.replicaofNoOne();
        return promoted;
    }

    @Test
    void withoutWaitAnAcknowledgedOpeningIsLostWhenAReplicaThatLackedItIsPromoted() {
        Policy p = Policy.builder().failureThreshold(1).build();
        try (RedisStore store = RedisStore.open(primary.url() + "?prefix=w:")) {
            link.freeze();
            assertEquals(TransitionKind.OPENED, store.apply("op", AtomicOperation.failure(), p, 1).transition(), "acknowledged");
            assertTrue(store.get("op").orElseThrow().open());
        }
        try (Jedis promoted = failOver()) {
            assertFalse(promoted.exists("w:{op}:state"), "the new primary never had the acknowledged opening");
        }
    }

    @Test
    void withWaitReplicasATransitionIsAcknowledgedOnlyOnceTheReplicaHasIt() {
        Policy p = Policy.builder().failureThreshold(2).build();
        try (RedisStore store = RedisStore.open(primary.url() + "?prefix=w:&waitReplicas=1&waitTimeout=" + WAIT_MILLIS);
                Jedis onReplica = new Jedis("127.0.0.1", replica.port())) {
            store.apply("a", AtomicOperation.failure(), p, 1);
            assertEquals(TransitionKind.OPENED, store.apply("a", AtomicOperation.failure(), p, 2).transition());
            assertEquals("1", RedisTestSupport.field(onReplica.get("w:{a}:state"), StateCodec.OPEN),
                    "the replica holds the opening when it is answered");

            link.freeze();
            long t0 = System.nanoTime();
            assertEquals(1, store.apply("b", AtomicOperation.failure(), p, 3).state().failures(), "a failure below the threshold");
            long belowMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(belowMillis < WAIT_MILLIS, "no WAIT below the threshold: " + belowMillis + " ms");

            t0 = System.nanoTime();
            StoreException e = assertThrows(StoreException.class, () -> store.apply("b", AtomicOperation.failure(), p, 4));
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(e.getMessage().contains("opened") && e.getMessage().contains("0 of 1 replicas"), e.getMessage());
            assertTrue(waitedMillis >= WAIT_MILLIS - 10, "waited out waitTimeout: " + waitedMillis + " ms");
            assertTrue(store.get("b").orElseThrow().open(), "the transition is applied on the primary all the same");

            link.unfreeze();
            awaitLinkUp();
            store.apply("c", AtomicOperation.failure(), p, 5);
            assertEquals(TransitionKind.OPENED, store.apply("c", AtomicOperation.failure(), p, 6).transition(), "acknowledged again");
        }
    }

    /**
     * On a Cluster the WAIT runs on the connection to the node owning the key's slot; the private cluster has no
     * replicas, so every transition falls short, on whichever node its key lives.
     */
    @Test
    void onAClusterTheWaitRunsOnTheNodeThatWroteTheTransition() {
        Policy p = Policy.builder().failureThreshold(1).build();
        try (RedisStore store = RedisStore.open(RedisTestCluster.url() + "?prefix=" + RedisTestSupport.newPrefix()
                + "&waitReplicas=1&waitTimeout=100")) {
            Policy many = Policy.builder().failureThreshold(100).build();
            for (int i = 0; i < 6; i++) {
                String op = "op-" + i;
                assertEquals(1, store.apply(op + "-sub", AtomicOperation.failure(), many, 1).state().failures(), "no WAIT below it");
                StoreException e = assertThrows(StoreException.class, () -> store.apply(op, AtomicOperation.failure(), p, 1));
                assertTrue(e.getMessage().contains("0 of 1 replicas"), e.getMessage());
                assertTrue(store.get(op).orElseThrow().open(), op);
            }
        }
    }

    @Test
    void theWaitOptionsAreChecked() {
        IllegalArgumentException below = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("redis://h?waitReplicas=1&waitTimeout=2000&timeout=2000"));
        assertTrue(below.getMessage().contains("waitTimeout") && below.getMessage().contains("below"),
                below.getMessage());
        IllegalArgumentException alone = assertThrows(IllegalArgumentException.class,
                () -> RedisStoreProvider.parse("redis://h?waitTimeout=100"));
        assertTrue(alone.getMessage().contains("waitReplicas"), alone.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisStoreProvider.parse("redis://h?waitReplicas=-1"));
        RedisStoreProvider.Parsed p = RedisStoreProvider.parse("redis://h?waitReplicas=2");
        assertEquals(2, p.waitReplicas());
        assertEquals(1_000, p.waitTimeoutMillis(), "half the default timeout");
    }
}

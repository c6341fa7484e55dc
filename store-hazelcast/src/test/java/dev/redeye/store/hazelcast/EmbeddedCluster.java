package dev.redeye.store.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.nio.serialization.DataSerializableFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * Real Hazelcast members in this JVM (so they carry redeye's classes, and register
 * {@link RedeyeSerializableFactory} as the README says: native mode), joined over TCP-IP on
 * 127.0.0.1 (no multicast) under a unique cluster name and free ports, plus clients connected to them the way
 * {@link HazelcastStoreProvider} connects. Members start quietly (logging through SLF4J at WARN, no phone-home,
 * 31 partitions, no join delay) so that a cluster starts in a few seconds on a busy machine.
 */
final class EmbeddedCluster implements AutoCloseable {
    /** How many times a member is started before its start fails: each taken port costs one start. */
    private static final int MAX_STARTS = 5;
    /** The pause before a member whose port a URI already names is started again on that port. */
    private static final long PINNED_RETRY_PAUSE_MILLIS = 1_000;
    final String name;
    /** The port of each member index: found free, or the port its member bound. */
    private final List<Integer> ports;
    /** The member indexes whose port {@link #uriOfMember} gave out before their member started. */
    private final Set<Integer> pinned = ConcurrentHashMap.newKeySet();
    private final List<MapConfig> maps;
    /** The factory member {@code i} registers under {@link RedeyeSerializableFactory#FACTORY_ID}, or null for none. */
    private final IntFunction<DataSerializableFactory> factories;
    private final List<HazelcastInstance> members = new CopyOnWriteArrayList<>();
    private final List<Integer> started = new CopyOnWriteArrayList<>();
    private final List<HazelcastInstance> clients = new CopyOnWriteArrayList<>();

    /** Starts {@code size} members (they find each other before this returns). */
    EmbeddedCluster(String what, int size, MapConfig... maps) {
        this(what, size, true, maps);
    }

    /**
     * Starts {@code size} members, with or without {@link RedeyeSerializableFactory} in their serialization
     * configuration (without it, they have redeye's classes but cannot read its processors).
     */
    EmbeddedCluster(String what, int size, boolean redeyeFactory, MapConfig... maps) {
        this(what, size, i -> redeyeFactory ? new RedeyeSerializableFactory() : null, maps);
    }

    /**
     * Starts {@code size} members, member {@code i} registering {@code factories.apply(i)} under
     * {@link RedeyeSerializableFactory#FACTORY_ID} (none where it is null): a cluster whose members read redeye's
     * processors differently, as in a rolling upgrade.
     */
    EmbeddedCluster(String what, int size, IntFunction<DataSerializableFactory> factories, MapConfig... maps) {
        this.factories = factories;
        this.name = Ports.clusterName(what);
        this.ports = new CopyOnWriteArrayList<>(Ports.free(size + 1)); // one spare: a member started later joins on it
        this.maps = List.of(maps);
        for (int i = 0; i < size; i++) {
            startMember(i);
        }
    }

    /**
     * Starts the member of port index {@code i} and waits until the cluster has it. A port found free can be taken
     * before the member binds it (another process's listener, or another JVM probing the same port): the start
     * then fails saying the port is in use, and the member starts again, on another port, or, when a URI already
     * names its port, on the same port after a pause.
     */
    HazelcastInstance startMember(int i) {
        for (int attempt = 1; ; attempt++) {
            int port = ports.get(i);
            try {
                HazelcastInstance m = Hazelcast.newHazelcastInstance(config(i));
                members.add(m);
                started.add(port);
                return m;
            } catch (RuntimeException e) {
                if (!portInUse(e, port) || attempt == MAX_STARTS) {
                    throw e;
                }
                if (pinned.contains(i)) {
                    pause(PINNED_RETRY_PAUSE_MILLIS);
                } else {
                    ports.set(i, anotherFreePort());
                }
            }
        }
    }

    /** Whether {@code e} (or a cause) says that {@code port} was already in use when the member bound it. */
    private static boolean portInUse(Throwable e, int port) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Port [" + port + "] is already in use")) {
                return true;
            }
        }
        return false;
    }

    /** A free port that is no member index's yet. */
    private synchronized int anotherFreePort() {
        while (true) {
            int p = Ports.free(1).get(0);
            if (!ports.contains(p)) {
                return p;
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting a member", e);
        }
    }

    private Config config(int i) {
        Config c = new Config();
        c.setClusterName(name);
        c.setInstanceName(name + "-member-" + i);
        quiet(c);
        c.getJetConfig().setEnabled(false);
        c.getNetworkConfig().setPort(ports.get(i)).setPortAutoIncrement(false);
        c.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = c.getNetworkConfig().getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true)
                .setMembers(ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.toList()));
        for (MapConfig m : maps) {
            c.addMapConfig(m);
        }
        DataSerializableFactory f = factories.apply(i);
        if (f instanceof RedeyeSerializableFactory) {
            return RedeyeSerializableFactory.register(c); // as the README tells embedded members to
        }
        if (f != null) {
            c.getSerializationConfig().addDataSerializableFactory(RedeyeSerializableFactory.FACTORY_ID, f);
        }
        return c;
    }

    /** Settings every test member shares (also the bare member's XML). */
    static void quiet(Config c) {
        c.setProperty("hazelcast.logging.type", "slf4j");
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.partition.count", "31");
        c.setProperty("hazelcast.wait.seconds.before.join", "0");
        c.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        c.setProperty("hazelcast.max.no.heartbeat.seconds", "8");
        c.setProperty("hazelcast.shutdownhook.enabled", "false");
    }

    /** The running members. */
    List<HazelcastInstance> members() {
        return members.stream().filter(m -> m.getLifecycleService().isRunning()).collect(Collectors.toList());
    }

    /** The URI of this cluster for {@link HazelcastStoreProvider} (every member's port listed). */
    String uri(String query) {
        String hosts = started.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
        return "hazelcast://" + name + "@" + hosts + (query.isEmpty() ? "" : "?" + query);
    }

    /**
     * The URI of the member {@link #startMember(int) startMember(i)} starts, usable before it runs: from now on
     * that member starts only on this port.
     */
    String uriOfMember(int i, String query) {
        pinned.add(i);
        return "hazelcast://" + name + "@127.0.0.1:" + ports.get(i) + (query.isEmpty() ? "" : "?" + query);
    }

    /**
     * A new client configured as the URI provider configures its own (timeout 10 s: a busy machine), returned
     * once it is connected to every member, so that a listener registered on it covers every partition.
     */
    HazelcastInstance newClient() {
        return newClient(java.util.Map.of());
    }

    /** {@link #newClient()} with these client properties set too. */
    HazelcastInstance newClient(java.util.Map<String, String> properties) {
        HazelcastStoreProvider.Parsed p = HazelcastStoreProvider.parse(uri("timeout=10000"));
        com.hazelcast.client.config.ClientConfig config = HazelcastStoreProvider.clientConfig(p);
        properties.forEach(config::setProperty);
        HazelcastInstance c = HazelcastStoreProvider.newClient(p, config);
        clients.add(c);
        Hooks.awaitConnectedToAll(c, members().size());
        Hooks.warmUpEvents(c);
        return c;
    }

    /** Kills a member without a graceful migration (like a crashed process). */
    void terminate(HazelcastInstance member) {
        member.getLifecycleService().terminate();
    }

    @Override
    public void close() {
        List<HazelcastInstance> all = new ArrayList<>(clients);
        all.addAll(members);
        terminateAll(all);
        clients.clear();
        members.clear();
    }

    /** Terminates every instance of {@code instances}, those already down included. */
    static void terminateAll(List<HazelcastInstance> instances) {
        for (HazelcastInstance h : instances) {
            try {
                h.getLifecycleService().terminate();
            } catch (RuntimeException ignored) {
                // already down
            }
        }
    }
}

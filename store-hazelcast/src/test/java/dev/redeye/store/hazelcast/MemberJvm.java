package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A Hazelcast member in a JVM of its own ({@code com.hazelcast.core.server.HazelcastMemberStarter}), started
 * with the Hazelcast jar and nothing else on its class path ({@link #bare()}: it cannot load any redeye class,
 * so it proves CAS mode against a member that cannot run redeye's entry processors), or with the Hazelcast jar
 * plus exactly what the module README tells operators to add ({@link #withRedeye()}: {@code redeye-api} and
 * {@code redeye-store-hazelcast}, no SLF4J, and {@link RedeyeSerializableFactory} in the member's XML), which
 * proves that recipe gives native mode. Maven hands the
 * Hazelcast jar's path over as the system property {@code redeye.hazelcast.jar} (maven-dependency-plugin's
 * {@code properties} goal). The member is stopped by its {@link Process} handle in {@link #close()}, and by a
 * shutdown hook if the test JVM ends first.
 */
final class MemberJvm implements AutoCloseable {
    /** How many ports a member is started on before its start fails: each taken one costs a JVM start. */
    private static final int MAX_STARTS = 5;
    final String name;
    final int port;
    private final Process process;
    private final Path log;
    private final Thread reaper;
    private final List<HazelcastInstance> clients = new CopyOnWriteArrayList<>();

    /** A member with only the Hazelcast jar. */
    static MemberJvm bare() throws IOException, InterruptedException {
        return new MemberJvm("bare", List.of(), List.of());
    }

    /** A member with the Hazelcast jar, redeye-api and redeye-store-hazelcast, as the README says. */
    static MemberJvm withRedeye() throws IOException, InterruptedException {
        return new MemberJvm("full", List.of(location(dev.redeye.api.OperationNames.class),
                location(HazelcastStore.class)), List.of());
    }

    /**
     * A member as {@link #withRedeye()} whose clock runs {@code offsetMillis} off this JVM's (Hazelcast's
     * {@code com.hazelcast.clock.offset}): alone in its cluster it is the master, so the cluster clock runs off too.
     */
    static MemberJvm withRedeyeAndClockOffset(long offsetMillis) throws IOException, InterruptedException {
        return new MemberJvm("offset", List.of(location(dev.redeye.api.OperationNames.class),
                location(HazelcastStore.class)), List.of("-Dcom.hazelcast.clock.offset=" + offsetMillis));
    }

    /** A member with the Hazelcast jar and redeye-store-hazelcast but not redeye-api: an incomplete install. */
    static MemberJvm withoutRedeyeApi() throws IOException, InterruptedException {
        return new MemberJvm("partial", List.of(location(HazelcastStore.class)), List.of());
    }

    /** Where a class was loaded from: the module's jar or its classes directory. */
    private static String location(Class<?> c) {
        try {
            return Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private MemberJvm(String what, List<String> extraClassPath, List<String> jvmOptions)
            throws IOException, InterruptedException {
        String jar = System.getProperty("redeye.hazelcast.jar");
        if (jar == null || !Files.isRegularFile(Paths.get(jar))) {
            throw new IllegalStateException("system property redeye.hazelcast.jar must name the Hazelcast jar (set by"
                    + " the module's pom through maven-dependency-plugin:properties), was " + jar);
        }
        List<String> classPath = new java.util.ArrayList<>(List.of(jar));
        classPath.addAll(extraClassPath);
        name = Ports.clusterName(what);
        Path dir = Paths.get("target", "member-jvm");
        Files.createDirectories(dir);
        Path config = dir.resolve(name + ".xml");
        log = dir.resolve(name + ".log");
        List<String> command = new java.util.ArrayList<>(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-Dhazelcast.config=" + config.toAbsolutePath(),
                "-cp", String.join(java.io.File.pathSeparator, classPath),
                "com.hazelcast.core.server.HazelcastMemberStarter"));
        // A port found free can be taken before the member binds it (another process's listener, or the local
        // end of an outgoing connection): the member then exits saying so, and starts again on another port.
        int candidate;
        Process started;
        Thread hook;
        for (int attempt = 1; ; attempt++) {
            candidate = Ports.free(1).get(0);
            Files.writeString(config, xml(name, candidate, !extraClassPath.isEmpty()), StandardCharsets.UTF_8);
            started = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            hook = new Thread(started::destroyForcibly, "member-jvm-reaper");
            Runtime.getRuntime().addShutdownHook(hook);
            if (awaitStarted(started)) {
                break;
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            stop(started, hook);
            if (!output.contains("Port [" + candidate + "] is already in use") || attempt == MAX_STARTS) {
                throw new IllegalStateException("the Hazelcast member JVM exited with " + started.exitValue()
                        + " (start " + attempt + " of at most " + MAX_STARTS + "); its log:\n" + output);
            }
        }
        port = candidate;
        process = started;
        reaper = hook;
    }

    /**
     * Waits until the member logs that it started (true) or exits (false).
     *
     * @throws IllegalStateException if it does neither within 90 s (it is stopped)
     */
    private boolean awaitStarted(Process started) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!Files.readString(log, StandardCharsets.UTF_8).contains("is STARTED")) {
            if (!started.isAlive()) {
                return false;
            }
            if (System.nanoTime() > deadline) {
                started.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("the Hazelcast member JVM did not start within 90 s; see " + log);
            }
            Thread.sleep(100);
        }
        return true;
    }

    /** Stops a member process and removes its shutdown hook. */
    private static void stop(Process p, Thread hook) {
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }

    /** The member's configuration; with redeye's jar, its factory registered as the module README says. */
    private static String xml(String cluster, int port, boolean redeye) {
        return "<hazelcast xmlns=\"http://www.hazelcast.com/schema/config\">\n"
                + "  <cluster-name>" + cluster + "</cluster-name>\n"
                + (redeye ? "  <serialization>\n"
                        + "    <data-serializable-factories>\n"
                        + "      <data-serializable-factory factory-id=\"" + RedeyeSerializableFactory.FACTORY_ID + "\">"
                        + RedeyeSerializableFactory.class.getName() + "</data-serializable-factory>\n"
                        + "    </data-serializable-factories>\n"
                        + "  </serialization>\n" : "")
                + "  <properties>\n"
                + "    <property name=\"hazelcast.phone.home.enabled\">false</property>\n"
                + "    <property name=\"hazelcast.partition.count\">31</property>\n"
                + "    <property name=\"hazelcast.wait.seconds.before.join\">0</property>\n"
                + "  </properties>\n"
                + "  <network>\n"
                + "    <port auto-increment=\"false\">" + port + "</port>\n"
                + "    <interfaces enabled=\"true\"><interface>127.0.0.1</interface></interfaces>\n"
                + "    <join>\n"
                + "      <auto-detection enabled=\"false\"/>\n"
                + "      <multicast enabled=\"false\"/>\n"
                + "      <tcp-ip enabled=\"true\"><member>127.0.0.1:" + port + "</member></tcp-ip>\n"
                + "    </join>\n"
                + "  </network>\n"
                + "  <jet enabled=\"false\"/>\n"
                + "</hazelcast>\n";
    }

    /** The URI of this member for {@link HazelcastStoreProvider}. */
    String uri(String query) {
        return "hazelcast://" + name + "@127.0.0.1:" + port + (query.isEmpty() ? "" : "?" + query);
    }

    /** A new client configured as the URI provider configures its own (timeout 10 s: a busy machine). */
    HazelcastInstance newClient() {
        HazelcastInstance c = HazelcastStoreProvider.newClient(HazelcastStoreProvider.parse(uri("timeout=10000")));
        clients.add(c);
        Hooks.warmUpEvents(c);
        return c;
    }

    /** The process id, for the report. */
    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        EmbeddedCluster.terminateAll(clients);
        clients.clear();
        stop(process, reaper);
    }
}

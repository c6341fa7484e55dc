package dev.redeye.store.postgres;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A PgBouncer of the test's own in front of a PostgreSQL server: {@code pgbouncer} on a free loopback port, in
 * transaction pooling mode with a small server pool, every database routed to the target as one user
 * ({@code auth_type = any}). {@link #close()} stops it by the pid it wrote (never by name) and deletes its
 * directory; a JVM shutdown hook does the same if the test never gets there.
 *
 * <p>Binary: {@code REDEYE_PGBOUNCER} if set, else {@code pgbouncer} in {@code /usr/sbin} or on the PATH (Debian's
 * {@code pgbouncer} package; {@code scripts/services.sh} installs it). It refuses to run as root, so as root it
 * runs as the {@code postgres} user through {@code runuser}, like {@link PrivatePostgres}.
 */
final class PrivatePgBouncer implements AutoCloseable {
    private static final long START_TIMEOUT_MILLIS = 30_000;

    private final Path dir;
    private final int port;
    private final Thread shutdownHook;
    private Process process;

    private PrivatePgBouncer(Path dir, int port) {
        this.dir = dir;
        this.port = port;
        this.shutdownHook = new Thread(this::stopQuietly, "private-pgbouncer-stop");
    }

    /** Whether a pgbouncer binary is there to start. */
    static boolean available() {
        return find() != null;
    }

    /**
     * Starts a PgBouncer in transaction mode in front of {@code host:port} as {@code user}, with at most
     * {@code serverPoolSize} server connections.
     */
    static PrivatePgBouncer start(String host, int targetPort, String user, int serverPoolSize)
            throws IOException, InterruptedException {
        Path bin = find();
        if (bin == null) {
            throw new IllegalStateException("This test runs a PgBouncer of its own and needs the pgbouncer binary: "
                    + "install it (apt-get install pgbouncer; scripts/services.sh does) or set REDEYE_PGBOUNCER.");
        }
        Path dir = Files.createTempDirectory("redeye-pgbouncer-");
        PrivatePgBouncer b = new PrivatePgBouncer(dir, LocalProcesses.freePort());
        LocalProcesses.startOrClose(b.shutdownHook, () -> {
            boolean asRoot = LocalProcesses.asRoot();
            Path ini = dir.resolve("pgbouncer.ini");
            Files.writeString(ini, String.join("\n",
                    "[databases]",
                    "* = host=" + host + " port=" + targetPort + " user=" + user,
                    "[pgbouncer]",
                    "listen_addr = 127.0.0.1",
                    "listen_port = " + b.port,
                    "unix_socket_dir =",
                    "auth_type = any",
                    "pool_mode = transaction",
                    "default_pool_size = " + serverPoolSize,
                    "max_client_conn = 500",
                    "server_reset_query =",
                    "ignore_startup_parameters = extra_float_digits,options",
                    "pidfile = " + dir.resolve("pgbouncer.pid"),
                    "logfile = " + dir.resolve("pgbouncer.log"),
                    ""), StandardCharsets.UTF_8);
            if (asRoot) {
                run(List.of("chown", "-R", "postgres", dir.toString()));
            }
            b.process = LocalProcesses.startLogged(List.of(bin.toString(), ini.toString()), asRoot,
                    dir.resolve("stdout.log"));
            b.awaitListening();
        }, b::close);
        return b;
    }

    int port() {
        return port;
    }

    /** A JDBC URL (query part included) of the database {@code database} through this PgBouncer. */
    String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
    }

    private void awaitListening() throws IOException, InterruptedException {
        LocalProcesses.awaitStarted(process, () -> {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return Files.exists(dir.resolve("pgbouncer.pid"));
            } catch (IOException notYet) {
                return false; // not listening yet
            }
        }, START_TIMEOUT_MILLIS, "pgbouncer", "listen", this::log);
    }

    @Override
    public synchronized void close() {
        LocalProcesses.stopAndUnhook(this::stopQuietly, shutdownHook);
    }

    private synchronized void stopQuietly() {
        try {
            Path pidFile = dir.resolve("pgbouncer.pid");
            if (Files.exists(pidFile)) {
                long pid = Long.parseLong(Files.readString(pidFile).trim());
                run(List.of("kill", "-TERM", String.valueOf(pid))); // immediate shutdown, by its own pid
            }
            LocalProcesses.awaitLauncher(process);
            LocalProcesses.deleteTree(dir);
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("[private-pgbouncer] stopping it in " + dir + " failed: " + e);
        }
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("pgbouncer.log")) + Files.readString(dir.resolve("stdout.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static Path find() {
        String env = System.getenv("REDEYE_PGBOUNCER");
        if (env != null && !env.isBlank()) {
            return Path.of(env.trim());
        }
        List<String> dirs = new ArrayList<>(List.of("/usr/sbin", "/usr/bin"));
        dirs.addAll(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        for (String d : dirs) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, "pgbouncer"))) {
                return Path.of(d, "pgbouncer");
            }
        }
        return null;
    }

    private static void run(List<String> cmd) throws IOException, InterruptedException {
        LocalProcesses.run(cmd, 30);
    }
}

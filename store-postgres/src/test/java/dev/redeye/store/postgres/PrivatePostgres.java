package dev.redeye.store.postgres;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the test's own: {@code initdb} into a temporary directory, {@code postgres} on a free
 * loopback port, and the faults a test inflicts on it, each by process id (never by name, never on any other
 * server): killed with SIGKILL (postmaster and every backend) and restarted on the same port and data,
 * frozen with SIGSTOP and thawed with SIGCONT. {@link #close()} stops it (SIGQUIT to its postmaster) and
 * deletes its directory; a JVM shutdown hook does the same if the test never gets there.
 *
 * <p>Binaries: {@code REDEYE_PG_BIN} if set, else the newest {@code /usr/lib/postgresql/<version>/bin} (Debian,
 * Ubuntu), else the directory of {@code initdb} on the PATH. Run as root, {@code initdb} and {@code postgres}
 * (which refuse root) run as the {@code postgres} user through {@code runuser}, like {@code scripts/services.sh}.
 * The server runs with {@code fsync=off}: a killed process loses nothing the kernel holds, and the tests kill
 * processes, never the machine.
 */
final class PrivatePostgres implements AutoCloseable {
    private static final long START_TIMEOUT_MILLIS = 60_000;

    private final Path bin;
    private final Path dir;
    private final Path data;
    private final int port;
    private final boolean asRoot;
    private final Thread shutdownHook;
    private Process process;
    private long postmaster = -1;
    private boolean frozen;

    private PrivatePostgres(Path bin, Path dir, int port) {
        this.bin = bin;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
        this.asRoot = LocalProcesses.asRoot();
        this.shutdownHook = new Thread(this::stopQuietly, "private-postgres-stop");
    }

    /** Creates a cluster in a new temporary directory and starts it on a free port. */
    static PrivatePostgres start() throws IOException, InterruptedException {
        Path bin = findBin();
        Path dir = Files.createTempDirectory("redeye-pgfault-");
        PrivatePostgres pg = new PrivatePostgres(bin, dir, LocalProcesses.freePort());
        LocalProcesses.startOrClose(pg.shutdownHook, () -> {
            if (pg.asRoot) {
                run(List.of("chown", "postgres", dir.toString()));
            }
            pg.runAs(List.of(bin.resolve("initdb").toString(), "-D", pg.data.toString(), "-U", "postgres",
                    "--auth=trust", "--no-sync", "--no-locale", "-E", "UTF8"));
            pg.launch();
        }, pg::close);
        return pg;
    }

    int port() {
        return port;
    }

    /** A store URI for this server with extra query parameters. */
    String uri(String params) {
        return "postgresql://postgres@127.0.0.1:" + port + "/postgres" + (params.isEmpty() ? "" : "?" + params);
    }

    /** A plain connection to this server (the caller closes it). */
    Connection connect() throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "2");
        p.setProperty("socketTimeout", "5");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", p);
    }

    /** SIGKILL to the postmaster and every backend, as a crash would; returns once all of them are gone. */
    synchronized void kill() throws IOException, InterruptedException {
        thaw();
        List<Long> pids = serverPids();
        signal("KILL", pids);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (pids.stream().anyMatch(PrivatePostgres::running)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("server processes survived SIGKILL: " + pids);
            }
            Thread.sleep(10);
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the server's launcher did not exit after its postmaster was killed");
        }
        postmaster = -1;
    }

    /** Starts the killed server again on the same port and data directory (crash recovery runs first). */
    synchronized void restart() throws IOException, InterruptedException {
        // The lock file of the killed postmaster stays behind; a zombie of its pid (if the container's init is
        // slow to reap) would make the new postmaster think it still runs. Every process of it is dead.
        Files.deleteIfExists(data.resolve("postmaster.pid"));
        launch();
    }

    /** SIGSTOP to the postmaster and every backend: the server accepts TCP connections but answers nothing. */
    synchronized void freeze() throws IOException, InterruptedException {
        signal("STOP", serverPids());
        frozen = true;
    }

    /**
     * SIGCONT to every process of the server, and to {@code runuser} (run as root): it stops itself when its
     * child stops, as su does for job control, and would otherwise never reap the postmaster.
     */
    synchronized void thaw() throws IOException, InterruptedException {
        if (frozen) {
            List<Long> pids = serverPids();
            if (process != null && process.isAlive() && process.pid() != postmaster) {
                pids.add(process.pid());
            }
            signal("CONT", pids);
            frozen = false;
        }
    }

    /**
     * Waits until the server accepts a new connection and answers on it. After a freeze it first works through
     * the connection attempts that queued in its listen backlog meanwhile (each a backend forked for a client
     * long gone), which on a loaded machine takes seconds.
     */
    void awaitAccepting() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (true) {
            try (Connection c = connect(); var st = c.createStatement()) {
                st.execute("SELECT 1");
                return;
            } catch (SQLException notYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the private PostgreSQL server does not accept connections "
                            + "again; its log:\n" + log());
                }
                Thread.sleep(50);
            }
        }
    }

    /** Stops the server (immediate shutdown) and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        LocalProcesses.stopAndUnhook(this::stopQuietly, shutdownHook);
    }

    private synchronized void stopQuietly() {
        try {
            if (postmaster > 0) {
                thaw();
                signal("QUIT", List.of(postmaster));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (running(postmaster) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                if (running(postmaster)) {
                    signal("KILL", serverPids());
                }
                postmaster = -1;
            }
            LocalProcesses.awaitLauncher(process);
            LocalProcesses.deleteTree(dir);
        } catch (IOException | InterruptedException | RuntimeException e) {
            System.err.println("[private-postgres] stopping the server in " + dir + " failed: " + e);
        }
    }

    private void launch() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(bin.resolve("postgres").toString(), "-D", data.toString(),
                "-p", String.valueOf(port), "-k", dir.toString(), "-c", "listen_addresses=127.0.0.1",
                "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "shared_buffers=16MB",
                // a WAL sender slot (and the WAL level it needs), so that a test can make every durable commit wait
                // for a synchronous standby that never connects (synchronous_standby_names); with no WAL sender,
                // PostgreSQL ignores that setting
                "-c", "max_connections=60", "-c", "max_wal_senders=1", "-c", "wal_level=replica"));
        process = LocalProcesses.startLogged(cmd, asRoot, dir.resolve("server.log"));
        LocalProcesses.awaitStarted(process, () -> {
            try (Connection c = connect()) {
                postmaster = readPostmasterPid();
                return true;
            } catch (SQLException notYet) {
                return false;
            }
        }, START_TIMEOUT_MILLIS, "the private PostgreSQL server", "accept connections", this::log);
    }

    private long readPostmasterPid() throws IOException {
        String first = Files.readAllLines(data.resolve("postmaster.pid"), StandardCharsets.UTF_8).get(0).trim();
        return Long.parseLong(first);
    }

    /** The postmaster and all its descendants (backends, background workers). */
    private List<Long> serverPids() {
        List<Long> pids = new ArrayList<>();
        if (postmaster <= 0) {
            return pids;
        }
        pids.add(postmaster);
        ProcessHandle.of(postmaster).ifPresent(h -> h.descendants().forEach(d -> pids.add(d.pid())));
        return pids;
    }

    /** Alive and not a zombie (a zombie is dead; the container's init may reap it late). */
    private static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException gone) {
            return false;
        }
    }

    private static void signal(String signal, List<Long> pids) throws IOException, InterruptedException {
        if (pids.isEmpty()) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(p -> cmd.add(String.valueOf(p)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes(); // a process that exited meanwhile is no error here
        p.waitFor(10, TimeUnit.SECONDS);
    }

    private void runAs(List<String> cmd) throws IOException, InterruptedException {
        run(LocalProcesses.asPostgres(cmd, asRoot));
    }

    private static void run(List<String> cmd) throws IOException, InterruptedException {
        LocalProcesses.run(cmd, 120);
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("server.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static Path findBin() {
        String env = System.getenv("REDEYE_PG_BIN");
        if (env != null && !env.isBlank()) {
            return Path.of(env.trim());
        }
        File root = new File("/usr/lib/postgresql");
        String[] versions = root.list();
        if (versions != null) {
            Path best = Stream.of(versions).filter(v -> v.matches("\\d+(\\.\\d+)?"))
                    .sorted(Comparator.comparingDouble(Double::parseDouble).reversed())
                    .map(v -> root.toPath().resolve(v).resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb"))).findFirst().orElse(null);
            if (best != null) {
                return best;
            }
        }
        for (String p : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!p.isEmpty() && Files.isExecutable(Path.of(p, "initdb"))) {
                return Path.of(p);
            }
        }
        throw new IllegalStateException("The fault tests start a PostgreSQL server of their own and need its "
                + "binaries (initdb, postgres): install PostgreSQL (scripts/services.sh does) or set REDEYE_PG_BIN "
                + "to the directory that holds them.");
    }
}

package dev.redeye.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private redis-server process for tests that break servers (kill, freeze, restart, TLS, eviction
 * policies, a cluster): its own free port and directory, never the shared server of the other tests.
 *
 * <p><b>No orphans.</b> redis-server is started by a small {@code sh} wrapper that waits on its standard
 * input, which is a pipe from this JVM: when the JVM ends in any way (even SIGKILL) the pipe closes and the
 * wrapper kills redis-server. {@link #close()} (and a shutdown hook for whatever a test left open) stops it
 * by pid. Every signal is sent to the recorded pid only.
 *
 * <p>Shared by the modules whose tests break a Redis server (the dashboard's outage test).
 */
public final class RedisProcess implements AutoCloseable {
    private static final Set<RedisProcess> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(RedisProcess::close),
                "redis-process-cleanup"));
    }

    private final Path dir;
    private final int port;
    private final boolean plainPort;
    private final List<String> args;
    private int starts;
    private Process wrapper;
    private long pid;

    private RedisProcess(Path dir, int port, boolean plainPort, List<String> args) {
        this.dir = dir;
        this.port = port;
        this.plainPort = plainPort;
        this.args = args;
    }

    /**
     * Starts redis-server on a free port of 127.0.0.1 with {@code extraArgs} after the basic ones
     * ({@code --port}, {@code --bind}, {@code --dir}, {@code --logfile}, no RDB snapshots, no AOF unless the
     * extra arguments ask for it).
     */
    public static RedisProcess start(String... extraArgs) {
        return start(true, extraArgs);
    }

    /** Starts redis-server with TLS only: {@code --port 0 --tls-port <free port>} plus {@code extraArgs}. */
    public static RedisProcess startTls(String... extraArgs) {
        return start(false, extraArgs);
    }

    private static RedisProcess start(boolean plain, String... extraArgs) {
        Path dir;
        try {
            dir = Files.createTempDirectory("redeye-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        RedisProcess p = new RedisProcess(dir, freePort(), plain, List.of(extraArgs));
        LIVE.add(p);
        try {
            p.launch();
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
        return p;
    }

    public int port() {
        return port;
    }

    public Path dir() {
        return dir;
    }

    public long pid() {
        return pid;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /**
     * SIGKILL: the server dies at once, like a crash (the wrapper sends it and reaps the process); returns
     * once it is gone and its port is free.
     */
    public synchronized void kill() {
        endWrapper();
    }

    /** Starts the server again on the same port, directory and arguments (it reloads its AOF if it has one). */
    public synchronized void restart() {
        launch();
    }

    /** SIGSTOP: the process stops answering, its sockets stay open (a frozen server). */
    public void freeze() {
        signal("-STOP");
    }

    /** SIGCONT after {@link #freeze()}. */
    public void thaw() {
        signal("-CONT");
    }

    /** Kills the server (also a frozen one) and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        LIVE.remove(this);
        endWrapper();
        deleteQuietly(dir);
    }

    private void launch() {
        starts++;
        Path log = dir.resolve("redis-" + starts + ".log");
        List<String> cmd = new ArrayList<>(List.of("sh", "-c",
                "redis-server \"$@\" & echo $!; read x; kill -9 $! 2>/dev/null; wait", "sh"));
        if (plainPort) {
            cmd.addAll(List.of("--port", Integer.toString(port)));
        } else {
            cmd.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port)));
        }
        cmd.addAll(List.of("--bind", "127.0.0.1", "--dir", dir.toString(), "--logfile", log.toString(),
                "--save", "", "--protected-mode", "no"));
        cmd.addAll(args);
        try {
            wrapper = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(wrapper.getInputStream(),
                    StandardCharsets.UTF_8));
            String line = out.readLine();
            if (line == null) {
                throw new IllegalStateException("redis-server did not start (is it installed? scripts/test.sh installs it)");
            }
            pid = Long.parseLong(line.trim());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server", e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!ready(log)) {
            if (System.nanoTime() > deadline || ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true)) {
                throw new IllegalStateException("redis-server on port " + port + " did not become ready: "
                        + tail(log));
            }
            sleep(20);
        }
    }

    private boolean ready(Path log) {
        try {
            if (!Files.exists(log) || !Files.readString(log).contains("Ready to accept connections")) {
                return false;
            }
        } catch (IOException e) {
            return false;
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Closes the wrapper's stdin: it sends SIGKILL to redis-server, reaps it and exits. */
    private void endWrapper() {
        Process w = wrapper;
        wrapper = null;
        if (w != null) {
            try {
                w.getOutputStream().close();
            } catch (IOException ignored) {
                // already gone
            }
            try {
                if (!w.waitFor(10, TimeUnit.SECONDS)) {
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                    w.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void signal(String sig) {
        try {
            Process k = new ProcessBuilder("kill", sig, Long.toString(pid)).redirectErrorStream(true).start();
            if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
                throw new IllegalStateException("kill " + sig + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private String tail(Path log) {
        try {
            String s = Files.exists(log) ? Files.readString(log) : "(no log)";
            return s.length() > 2_000 ? s.substring(s.length() - 2_000) : s;
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** A free TCP port whose cluster bus port (+10000) is free too. */
    public static int freePort() {
        for (int i = 0; i < 50; i++) {
            int p;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                p = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (p + 10_000 > 65_535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(p + 10_000, 1, InetAddress.getLoopbackAddress())) {
                return p;
            } catch (IOException e) {
                // bus port taken: try another
            }
        }
        throw new IllegalStateException("no free port pair found");
    }

    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort
                }
            });
        } catch (IOException ignored) {
            // best effort
        }
    }
}

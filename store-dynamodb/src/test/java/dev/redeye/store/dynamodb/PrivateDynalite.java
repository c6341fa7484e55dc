package dev.redeye.store.dynamodb;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A dynalite process of one test's own, on a port the kernel picks (kept across a restart), started through {@code scripts/dynalite.js} from the
 * dynalite that {@code scripts/services.sh} installed ({@code REDEYE_DYNALITE_HOME}, else the checkout's
 * {@code .redeye-services/dynalite}). Fault tests kill, freeze and restart it by its own pid: never the shared
 * server. With a data folder it keeps its tables across a restart (LevelDB), as a real endpoint would.
 */
final class PrivateDynalite implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("Dynalite listening at: http://[^:]+:(\\d+)");
    private final Path root;
    private final Path home;
    private final Path data;
    private int port;
    private final File log;
    private Process process;

    private PrivateDynalite(Path root, Path home, Path data, int port) throws IOException {
        this.root = root;
        this.home = home;
        this.data = data;
        this.port = port;
        this.log = Files.createTempFile("redeye-private-dynalite", ".log").toFile();
    }

    /** Starts one on a free port, persisting to a temporary folder when {@code persistent}. */
    static PrivateDynalite start(boolean persistent) throws IOException, InterruptedException {
        Path root = checkoutRoot();
        String env = System.getenv("REDEYE_DYNALITE_HOME");
        Path home = env != null && !env.isBlank() ? Path.of(env) : root.resolve(".redeye-services/dynalite");
        if (!Files.exists(home.resolve("node_modules/dynalite/cli.js"))) {
            throw new IllegalStateException("The fault tests start private dynalite processes and need dynalite "
                    + "installed: run '. scripts/services.sh' (npm install into .redeye-services/dynalite) or set "
                    + "REDEYE_DYNALITE_HOME to a folder holding node_modules/dynalite.");
        }
        Path data = persistent ? Files.createTempDirectory("redeye-dynalite-data") : null;
        PrivateDynalite d = new PrivateDynalite(root, home, data, 0); // port 0: the kernel picks a free one
        d.startProcess();
        return d;
    }

    void startProcess() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("node", root.resolve("scripts/dynalite.js").toString(),
                home.toString(), "--host", "127.0.0.1", "--port", Integer.toString(port),
                "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"));
        if (data != null) {
            cmd.add("--path");
            cmd.add(data.toString());
        }
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (port == 0) { // the first start: read the port dynalite reports
            Matcher m = LISTENING.matcher(Files.readString(log.toPath()));
            if (m.find()) {
                port = Integer.parseInt(m.group(1));
            } else if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("private dynalite did not start: " + Files.readString(log.toPath()));
            } else {
                Thread.sleep(50);
            }
        }
        while (!listening()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("private dynalite did not start on port " + port + ": "
                        + Files.readString(log.toPath()));
            }
            Thread.sleep(50);
        }
    }

    String url() {
        return "http://127.0.0.1:" + port;
    }

    long pid() {
        return process.pid();
    }

    /** SIGKILL, by the handle of the process this test started. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP / SIGCONT of this process only (by its pid). */
    void signal(String sig) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed");
        }
    }

    private boolean listening() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static Path checkoutRoot() {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("scripts/dynalite.js"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("scripts/dynalite.js not found above " + System.getProperty("user.dir"));
        }
        return p;
    }

    @Override
    public void close() throws Exception {
        if (process != null && process.isAlive()) {
            try {
                signal("CONT"); // a frozen process cannot die of SIGTERM
            } catch (RuntimeException | IOException e) {
                // already gone
            }
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        if (data != null) {
            try (var files = Files.walk(data)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        log.delete();
    }
}

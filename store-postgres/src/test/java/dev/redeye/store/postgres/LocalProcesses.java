package dev.redeye.store.postgres;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What {@link PrivatePostgres} and {@link PrivatePgBouncer} share to run a server process of the test's own: a free
 * loopback port, short commands run to completion, and the clean-up of the launcher, the directory and the JVM
 * shutdown hook.
 */
final class LocalProcesses {
    private LocalProcesses() {
    }

    /** A step of starting a server. */
    interface Step {
        /** Runs the step. */
        void run() throws IOException, InterruptedException;
    }

    /**
     * Registers the shutdown {@code hook}, then runs {@code start}; if that fails, runs {@code close} (which
     * removes the hook) and rethrows.
     */
    static void startOrClose(Thread hook, Step start, Runnable close) throws IOException, InterruptedException {
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            start.run();
        } catch (IOException | InterruptedException | RuntimeException e) {
            close.run();
            throw e;
        }
    }

    /** A loopback port nothing listens on at the moment. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Whether the tests run as root, where the servers (which refuse root) run as the {@code postgres} user. */
    static boolean asRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** {@code cmd}, run as the {@code postgres} user through {@code runuser} when {@code asRoot}. */
    static List<String> asPostgres(List<String> cmd, boolean asRoot) {
        if (!asRoot) {
            return cmd;
        }
        List<String> out = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
        out.addAll(cmd);
        return out;
    }

    /** Starts {@code cmd} (see {@link #asPostgres}) in the background, its output appended to {@code log}. */
    static Process startLogged(List<String> cmd, boolean asRoot, Path log) throws IOException {
        return new ProcessBuilder(asPostgres(cmd, asRoot)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    /** Runs {@code cmd} to completion; fails with its output if it exits non-zero or outlasts the timeout. */
    static void run(List<String> cmd, long timeoutSeconds) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed:\n" + out);
        }
    }

    /** Whether a starting server is ready. */
    interface Probe {
        /** Whether the server is ready now. */
        boolean ready() throws IOException, InterruptedException;
    }

    /**
     * Asks {@code probe} every 50 ms until the server is ready; fails, with the server's {@code log}, once its
     * {@code process} has exited or {@code timeoutMillis} have passed. {@code server} and {@code readiness} name
     * them in the message: "{@code server} did not {@code readiness} within ...".
     */
    static void awaitStarted(Process process, Probe probe, long timeoutMillis, String server, String readiness,
            Supplier<String> log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            if (!process.isAlive()) {
                throw new IllegalStateException(server + " exited at start; its log:\n" + log.get());
            }
            if (probe.ready()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(server + " did not " + readiness + " within " + timeoutMillis
                        + " ms; its log:\n" + log.get());
            }
            Thread.sleep(50);
        }
    }

    /** Waits for the launcher {@code process} (if any) to end, killing it if it does not within 10 seconds. */
    static void awaitLauncher(Process process) throws InterruptedException {
        if (process != null && !process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly(); // never leave a launcher behind
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Deletes {@code root} and everything below it, if it exists. */
    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Runs {@code stop}, then removes {@code hook} (which runs it too) unless the JVM is shutting down. */
    static void stopAndUnhook(Runnable stop, Thread hook) {
        stop.run();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran
        }
    }
}

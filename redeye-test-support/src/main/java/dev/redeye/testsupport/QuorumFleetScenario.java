package dev.redeye.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.api.BreakerStatus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Quorum opening across two JVM processes, the scenario every store with quorum support runs (issue 26): instance
 * A is a {@link QuorumInstance} in a JVM this scenario starts, instance B a breaker in the test's JVM, both over the
 * same store (their own clients), consecutive failures with a threshold of {@value #THRESHOLD}, quorum 2,
 * {@code OutlierPolicy.REJECT}.
 * <ol>
 * <li>A alone fails 100 calls: {@value #THRESHOLD} run, the rest are rejected by A's local trip, A reports one
 * outlier and is one; the fleet stays closed, and B's calls are admitted.</li>
 * <li>On another operation A fails {@value #THRESHOLD} (an outlier, the fleet closed); B's first failure makes
 * the quorum and opens the fleet at that failure, which A then reads from the store.</li>
 * </ol>
 * The child JVM runs this JVM's class path and is stopped by its process handle.
 */
public final class QuorumFleetScenario {
    static final int THRESHOLD = 5;
    private static final long ANSWER_SECONDS = 120;

    private QuorumFleetScenario() {
    }

    /**
     * Runs both steps.
     *
     * @param uri     a URI {@code Stores.open} opens in both JVMs, to one backend
     * @param backend the backend's name in messages ("Redis", ...)
     */
    public static void run(String uri, String backend) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        List<Outlier> outliersB = new CopyOnWriteArrayList<>();
        try (Child a = new Child(uri, "instance-a-" + suffix);
                CircuitBreaker b = QuorumInstance.breaker(uri, "instance-b-" + suffix, THRESHOLD, 2, outliersB)) {
            String solo = "quorum-solo-" + suffix;
            Map<String, String> r = a.ask("fail " + solo + " 100");
            assertEquals(String.valueOf(THRESHOLD), r.get("ran"), backend + ": A's calls run to its threshold " + r);
            assertEquals(String.valueOf(100 - THRESHOLD), r.get("rejected"), "then A's local trip rejects " + r);
            assertEquals("1", r.get("outliers"), "one onOutlier event in A " + r);
            assertEquals("true", r.get("outlier"), "A is an outlier " + r);
            assertEquals("CLOSED", r.get("status"), "the fleet stays closed below the quorum " + r);
            for (int i = 0; i < 20; i++) {
                assertEquals("ok", b.execute(solo, () -> "ok"), "B's calls are admitted");
            }
            assertEquals(BreakerStatus.CLOSED, b.status(solo));
            assertFalse(b.isOutlier(solo));
            assertTrue(outliersB.isEmpty(), "B is no outlier: " + outliersB);

            String pair = "quorum-pair-" + suffix;
            r = a.ask("fail " + pair + " " + THRESHOLD);
            assertEquals(String.valueOf(THRESHOLD), r.get("ran"), r.toString());
            assertEquals("true", r.get("outlier"), "A alone at the threshold is an outlier " + r);
            assertEquals("CLOSED", r.get("status"), r.toString());
            assertEquals(BreakerStatus.CLOSED, b.status(pair), backend + ": closed before B's failure");
            int[] ran = QuorumInstance.fail(b, pair, 1);
            assertEquals(1, ran[0], "B's first failure runs");
            assertEquals(BreakerStatus.OPEN, b.status(pair), backend + ": B's failure makes the quorum and opens");
            assertTrue(outliersB.isEmpty(), "the fleet opened: B is no outlier " + outliersB);
            r = a.ask("status " + pair);
            assertEquals("OPEN", r.get("status"), "A reads the fleet's opening " + r);
            assertEquals("false", r.get("outlier"), "the fleet's opening ends A's local trip " + r);
        }
    }

    /** Instance A: a {@link QuorumInstance} in a JVM of its own. */
    private static final class Child implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BufferedReader out;
        private final ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "quorum-child-reader");
            t.setDaemon(true);
            return t;
        });
        private final Path log;

        Child(String uri, String instance) throws Exception {
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            Path dir = Paths.get("target", "quorum-child");
            Files.createDirectories(dir);
            log = dir.resolve(instance + ".log");
            process = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    QuorumInstance.class.getName(), uri, instance, String.valueOf(THRESHOLD), "2")
                    .redirectError(log.toFile()).start();
            in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            try {
                String ready = line();
                if (!"ready".equals(ready)) {
                    throw new AssertionError("instance A did not start: " + ready + "; its log: " + tail());
                }
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        /** Sends {@code command}; its answer as key=value pairs. */
        Map<String, String> ask(String command) throws Exception {
            in.write(command + "\n");
            in.flush();
            String answer = line();
            if (answer == null || answer.startsWith("error")) {
                throw new AssertionError("instance A answered '" + command + "' with " + answer + "; its log: "
                        + tail());
            }
            Map<String, String> m = new HashMap<>();
            for (String kv : answer.split(" ")) {
                int eq = kv.indexOf('=');
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
            return m;
        }

        private String line() throws Exception {
            Future<String> f = reader.submit(out::readLine);
            try {
                return f.get(ANSWER_SECONDS, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                f.cancel(true);
                throw new AssertionError("instance A did not answer within " + ANSWER_SECONDS + " s; its log: "
                        + tail(), e);
            }
        }

        private String tail() {
            try {
                String s = Files.readString(log);
                return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        @Override
        public void close() throws Exception {
            try {
                if (process.isAlive()) {
                    in.write("quit\n");
                    in.flush();
                }
            } catch (IOException ignored) {
                // the child is gone already: destroyed below
            }
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            reader.shutdownNow();
        }
    }
}

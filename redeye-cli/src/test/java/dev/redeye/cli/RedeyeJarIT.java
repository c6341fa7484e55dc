package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The shaded jar as a user runs it ({@code java -jar redeye-cli/target/redeye.jar}), in its own JVM: the
 * merged service files (every store provider, the JUnit engine the TCK needs), the manifest's main class,
 * the default WARN log level and clean stdout. Runs in the integration-test phase, after the jar is built.
 */
class RedeyeJarIT {

    record Proc(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
        }
    }

    static Proc java(String... args) throws IOException, InterruptedException {
        Path jar = Paths.get(System.getProperty("redeye.jar", "target/redeye.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar must exist: " + jar.toAbsolutePath());
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-jar");
        cmd.add(jar.toString());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("redeye-out", ".txt");
        Path err = Files.createTempFile("redeye-err", ".txt");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("redeye " + String.join(" ", args) + " did not finish in 60 s");
            }
            return new Proc(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    @Test
    void theTcksOwnInjectedFaultsAreLabelledAsSuch() throws Exception {
        Proc p = java("tck", "--store", "memory:", "--rule", "R7.9");
        assertEquals(0, p.exit(), p::toString);
        List<String> warnings = p.err().lines().filter(l -> l.contains("WARN")).toList();
        assertFalse(warnings.isEmpty(), "R7.9 makes claimTrial fail on purpose, and the engine logs it: " + p);
        for (String w : warnings) {
            assertTrue(w.contains("injected by the TCK on purpose"), () -> "an unlabelled warning: " + w);
        }
    }

    @Test
    void versionFromTheManifestMainClass() throws Exception {
        Proc p = java("--version");
        assertEquals(0, p.exit(), p::toString);
        assertTrue(p.out().startsWith("redeye 0."), p::toString);
    }

    @Test
    void everyStoreProviderSurvivesShading() throws Exception {
        Proc p = java("status", "--store", "nosuch://x", "op");
        assertEquals(2, p.exit(), p::toString);
        for (String scheme : new String[] {"memory", "redis", "rediss", "postgresql", "jdbc:postgresql",
            "dynamodb", "hazelcast"}) {
            assertTrue(p.err().contains(scheme), () -> scheme + " missing: " + p);
        }
    }

    /** The shaded Hazelcast client (and its own service files) works from the jar, quietly. */
    @Test
    void hazelcastCommandsWorkFromTheJar() throws Exception {
        String uri = HazelcastMember.uri();
        String op = "jar-" + System.nanoTime();
        Proc open = java("force-open", "--store", uri, op);
        assertEquals(0, open.exit(), open::toString);
        assertTrue(open.out().contains("CLOSED -> FORCED_OPEN"), open::toString);
        Proc status = java("status", "--store", uri, "--json", op);
        assertEquals(0, status.exit(), status::toString);
        assertEquals("FORCED_OPEN", Json.mapper().readTree(status.out()).get(0).get("status").asText(), status::toString);
        assertEquals("", status.err(), status::toString);
        assertEquals(0, java("reset", "--store", uri, op).exit());
    }

    @Test
    void tckRunsThroughTheJUnitEngineInsideTheJar() throws Exception {
        Proc p = java("tck", "--store", "memory:", "--rule", "R1.1,R4.4,R7.2");
        assertEquals(0, p.exit(), p::toString);
        assertTrue(p.out().contains("3 passed, 0 failed, 0 skipped"), p::toString);
    }

    @Test
    void theAwsSdkWorksInsideTheJarAgainstDynalite() throws Exception {
        // The SDK's HTTP client, endpoint rules and service resources must survive shading.
        String table = "redeye_jar_" + Long.toString(System.nanoTime(), 36);
        String uri = Cli.dynamodbUri(table);
        assertTrue(uri != null, "REDEYE_DYNAMODB_URL is not set: run scripts/test.sh, which starts dynalite");
        Proc open = java("force-open", "--store", uri, "jar op");
        assertEquals(0, open.exit(), open::toString);
        Proc status = java("status", "--store", uri, "--json", "jar op");
        assertEquals(0, status.exit(), status::toString);
        assertTrue(status.out().contains("FORCED_OPEN"), status::toString);
        Proc tck = java("tck", "--store", uri, "--rule", "R1.2,R4.4,R6.1");
        assertEquals(0, tck.exit(), tck::toString);
        assertTrue(tck.out().contains("3 passed, 0 failed, 0 skipped"), tck::toString);
        for (Proc p : List.of(open, status, tck)) {
            assertFalse(p.out().contains("s3cretkey") || p.err().contains("s3cretkey"), p::toString);
        }
    }

    @Test
    void simulateJsonKeepsStdoutPureJson() throws Exception {
        Proc p = java("simulate", "--json", "--instances", "3", "--threads-per-instance", "1", "--duration", "1500ms",
                "--down-at", "300ms", "--up-at", "1s", "--reset-timeout", "300ms");
        assertEquals(0, p.exit(), p::toString);
        JsonNode r = Json.mapper().readTree(p.out());
        assertEquals(1, r.get("maxConcurrentTrials").asInt(), p::toString);
        assertEquals("", p.err(), p::toString);
    }

    @Test
    void errorsAreOneLineWithoutLogNoiseUnlessVerbose() throws Exception {
        Proc quiet = java("status", "--store", "redis://u:s3cretpw@127.0.0.1:1", "op");
        assertEquals(1, quiet.exit(), quiet::toString);
        assertEquals(2, quiet.err().strip().lines().count(), quiet::toString);
        assertFalse(quiet.err().contains("s3cretpw"), quiet::toString);
        Proc verbose = java("--verbose", "status", "--store", "redis://u:s3cretpw@127.0.0.1:1", "op");
        assertEquals(1, verbose.exit(), verbose::toString);
        assertTrue(verbose.err().contains("\tat "), verbose::toString);
        assertTrue(verbose.err().lines().count() > quiet.err().lines().count(), verbose::toString);
        assertFalse(verbose.err().contains("s3cretpw"), verbose::toString);
    }
}

package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The {@code ./redeye} launcher as a store author uses it: their store's jar (here: this module's test
 * classes, which register the {@code nofeed:} fixture provider) added with {@code --classpath} or
 * {@code REDEYE_CLASSPATH} is found by {@code redeye tck}; a class path hidden in {@code REDEYE_JAVA_OPTS} is
 * refused with the way to do it rather than silently ignored. Runs the built jar ({@code REDEYE_JAR}), so the
 * launcher never builds here.
 */
class RedeyeLauncherIT {
    private static final Path LAUNCHER = Paths.get("..", "redeye").toAbsolutePath().normalize();
    private static final String STORE_CLASSES = Paths.get("target", "test-classes").toAbsolutePath().toString();

    static RedeyeJarIT.Proc launch(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", LAUNCHER.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("REDEYE_CLASSPATH");
        pb.environment().remove("REDEYE_JAVA_OPTS");
        pb.environment().put("REDEYE_JAR", System.getProperty("redeye.jar", "target/redeye.jar"));
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Path out = Files.createTempFile("redeye-out", ".txt");
        Path err = Files.createTempFile("redeye-err", ".txt");
        try {
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("redeye " + String.join(" ", args) + " did not finish in 120 s");
            }
            return new RedeyeJarIT.Proc(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    @Test
    void classpathOptionAddsAStoreForTheTck() throws Exception {
        RedeyeJarIT.Proc p = launch(Map.of(), "--classpath", STORE_CLASSES, "tck", "--store", "nofeed:shared",
                "--rule", "R0.1,R1.1", "--expect", "none");
        assertEquals(0, p.exit(), p::toString);
        assertTrue(p.out().contains("PASSED   R1.1"), p::toString);
    }

    @Test
    void environmentVariableAddsAStoreForTheTck() throws Exception {
        RedeyeJarIT.Proc p = launch(Map.of("REDEYE_CLASSPATH", STORE_CLASSES), "tck", "--store", "nofeed:shared",
                "--rule", "R1.1", "--expect", "none");
        assertEquals(0, p.exit(), p::toString);
        assertTrue(p.out().contains("1 passed, 0 failed, 0 skipped"), p::toString);
    }

    @Test
    void withoutTheStoreOnTheClassPathTheSchemeIsUnknown() throws Exception {
        RedeyeJarIT.Proc p = launch(Map.of(), "tck", "--store", "nofeed:shared", "--rule", "R1.1");
        assertTrue(p.exit() != 0, p::toString);
        assertTrue(p.err().contains("nofeed"), p::toString);
    }

    @Test
    void aClassPathEntryThatDoesNotExistFailsNamingIt() throws Exception {
        String missing = Paths.get("target", "no-such-store.jar").toAbsolutePath().toString();
        RedeyeJarIT.Proc p = launch(Map.of(), "--classpath", STORE_CLASSES + ":" + missing, "--version");
        assertEquals(2, p.exit(), p::toString);
        assertTrue(p.err().contains(missing), p::toString);
        assertTrue(p.err().contains("--classpath"), p::toString);
        RedeyeJarIT.Proc env = launch(Map.of("REDEYE_CLASSPATH", missing), "--version");
        assertEquals(2, env.exit(), env::toString);
        assertTrue(env.err().contains(missing) && env.err().contains("REDEYE_CLASSPATH"), env::toString);
        RedeyeJarIT.Proc wildcard = launch(Map.of(), "--classpath", STORE_CLASSES + "/*", "--version");
        assertEquals(0, wildcard.exit(), "a directory's jars (dir/*) is a class path entry Java takes: " + wildcard);
    }

    @Test
    void aClassPathInJavaOptionsIsRefusedWithTheWayToDoIt() throws Exception {
        RedeyeJarIT.Proc p = launch(Map.of("REDEYE_JAVA_OPTS", "-Xmx256m -cp " + STORE_CLASSES), "--version");
        assertEquals(2, p.exit(), p::toString);
        assertTrue(p.err().contains("REDEYE_CLASSPATH"), p::toString);
    }
}

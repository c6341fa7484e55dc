package dev.redeye.tck.example;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** The READMEs show {@link MapStore} as it is compiled here and run through the TCK ({@link MapStoreTckTest}). */
class MapStoreReadmeTest {
    private static final Path SOURCE = Paths.get("src/test/java/dev/redeye/tck/example/MapStore.java");

    @Test
    void theTckReadmeShowsTheMinimalStoreAsCompiled() throws Exception {
        assertShown("README.md");
    }

    @Test
    void theRootReadmeShowsTheMinimalStoreAsCompiled() throws Exception {
        assertShown("../README.md");
    }

    private static void assertShown(String readme) throws Exception {
        String source = Files.readString(SOURCE);
        String shown = source.substring(source.indexOf("import ")); // a user's package differs
        String text = Files.readString(Paths.get(readme));
        assertTrue(text.contains(shown), readme + " does not show " + SOURCE + " from its first import to its end,"
                + " as it is (update the README from the file)");
    }
}

package dev.redeye.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Runs the README's example against its local server and checks what it prints; the README shows this code. */
class ReadmeExampleTest {

    @Test
    void theReadmeExampleRunsAsDocumented() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            ReadmeExample.run(out);
        }
        List<String> lines = List.of(bytes.toString(StandardCharsets.UTF_8).split("\n"));
        assertEquals("/payments/v1/charges?id=1 -> 503", lines.get(0));
        assertEquals("/payments/v1/charges?id=2 -> 503", lines.get(1));
        assertEquals("PAGE payments on-call: endpoint:charges CLOSED -> OPEN (opened)", lines.get(2),
                "the rule's own callback first");
        assertEquals("breaker endpoint:charges CLOSED -> OPEN (opened)", lines.get(3), "then the registry-wide one");
        assertEquals("/payments/v1/charges?id=3 -> 503", lines.get(4));
        assertTrue(lines.get(5).matches("/payments/v1/charges\\?id=4 -> rejected by ENDPOINT charges, retry after "
                + "(1[789]|2[0-2]) s"), lines.get(5)); // 20 s with the default jitter of 10%
        assertEquals("/payments/v1/refunds/7 -> 200", lines.get(6));
        assertEquals("/payments/health -> 200", lines.get(7));
        assertEquals("service   /payments  CLOSED       failures 2/5", lines.get(8));
        assertTrue(lines.get(9).startsWith("endpoint  charges  OPEN         failures 3/3  retry in "), lines.get(9));
        assertEquals(10, lines.size(), lines.toString());
    }

    @Test
    void theReadmeShowsTheExampleCode() throws Exception {
        String source = Files.readString(Path.of("src/test/java/dev/redeye/http/ReadmeExample.java"));
        String code = source.substring(source.indexOf("// --8<-- [readme]") + "// --8<-- [readme]".length(),
                source.indexOf("// --8<-- [/readme]")).stripTrailing();
        String readme = Files.readString(Path.of("README.md"));
        assertTrue(readme.contains(code.stripIndent().strip()), "README.md must show the example of ReadmeExample.java "
                + "between its --8<-- markers, unindented:\n" + code.stripIndent().strip());
    }
}

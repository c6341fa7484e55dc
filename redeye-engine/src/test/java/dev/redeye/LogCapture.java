package dev.redeye;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Captures what slf4j-simple writes (it writes to the current {@code System.err} on every call) while also
 * passing it on. Tests in this module run sequentially, so one capture at a time sees only its own test's
 * output plus, at worst, late lines from a feed thread, which the assertions tolerate by matching exact text.
 */
final class LogCapture implements AutoCloseable {
    private final PrintStream original = System.err;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

    private LogCapture() {
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (buffer) {
                    buffer.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (buffer) {
                    buffer.write(b, off, len);
                }
                original.write(b, off, len);
            }
        };
        System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
    }

    static LogCapture start() {
        return new LogCapture();
    }

    String text() {
        synchronized (buffer) {
            return buffer.toString(StandardCharsets.UTF_8);
        }
    }

    /** How many WARN lines contain {@code fragment}. */
    int warnings(String fragment) {
        int n = 0;
        for (String line : text().split("\n")) {
            if (line.contains("WARN") && line.contains(fragment)) {
                n++;
            }
        }
        return n;
    }

    int count(String regex) {
        Matcher m = Pattern.compile(regex).matcher(text());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}

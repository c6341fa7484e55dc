package dev.redeye.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The page's files, served from this jar by every host of the dashboard ({@link DashboardServer}, the Spring Boot
 * endpoint): {@code index.html}, {@code dashboard.js} and {@code dashboard.css}. The page names its script, style,
 * stream and actions by relative URLs, so it works under any path that ends with {@code /}.
 */
public final class DashboardAssets {
    /** The Content-Security-Policy every asset is served with: nothing from another origin. */
    public static final String CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:";
    private static final String ROOT = "/dev/redeye/dashboard/assets/";
    private static final Map<String, String> TYPES = Map.of("index.html", "text/html; charset=utf-8",
            "dashboard.js", "text/javascript; charset=utf-8", "dashboard.css", "text/css; charset=utf-8");

    private DashboardAssets() {
    }

    /** An asset of the page. */
    public record Asset(String contentType, byte[] body) {
    }

    /**
     * The asset {@code name} ({@code index.html}, {@code dashboard.js} or {@code dashboard.css}); the page says
     * whether actions are shown ({@code readOnly}) and how they authenticate ({@code tokenActions}: the operator's
     * token field, or none where the host authenticates the request itself).
     *
     * @return empty for any other name
     * @throws UncheckedIOException if the jar lacks it
     */
    public static Optional<Asset> get(String name, boolean readOnly, boolean tokenActions) {
        String type = TYPES.get(name);
        if (type == null) {
            return Optional.empty();
        }
        byte[] body;
        try (InputStream in = DashboardAssets.class.getResourceAsStream(ROOT + name)) {
            if (in == null) {
                throw new IOException("the dashboard asset " + name + " is missing from the jar");
            }
            body = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (name.equals("index.html")) {
            body = new String(body, StandardCharsets.UTF_8).replace("{{readOnly}}", Boolean.toString(readOnly))
                    .replace("{{tokenActions}}", Boolean.toString(tokenActions)).getBytes(StandardCharsets.UTF_8);
        }
        return Optional.of(new Asset(type, body));
    }
}

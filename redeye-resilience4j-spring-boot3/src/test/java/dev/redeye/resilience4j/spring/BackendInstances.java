package dev.redeye.resilience4j.spring;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.resilience4j.spring.app.BackendApplication;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What the tests share: starting {@link BackendApplication} (profile {@code backend}, plus any other profile
 * and properties), the build's real Redis ({@code REDEYE_REDIS_URL}; a test fails saying how to provide it, never
 * skips) under a fresh key prefix, and HTTP GETs.
 */
final class BackendInstances {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private BackendInstances() {
    }

    /** {@code redeye.store} for the build's Redis under a prefix no other run uses. */
    static String freshRedisStore() {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            fail("No REDEYE_REDIS_URL: source scripts/services.sh, or export REDEYE_REDIS_URL=redis://127.0.0.1:6379");
        }
        String prefix = "redeye-test:r4j-boot:" + UUID.randomUUID().toString().substring(0, 12) + ":";
        return url.trim() + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
    }

    /** Starts the application on a random port with the profiles {@code backend} and {@code profiles}. */
    static ConfigurableApplicationContext startWeb(List<String> profiles, String... properties) {
        return start(WebApplicationType.SERVLET, profiles, properties);
    }

    /** Starts the application without a web server. */
    static ConfigurableApplicationContext startNoWeb(List<String> profiles, String... properties) {
        return start(WebApplicationType.NONE, profiles, properties);
    }

    private static ConfigurableApplicationContext start(WebApplicationType type, List<String> profiles,
            String... properties) {
        List<String> all = new ArrayList<>(List.of("backend"));
        all.addAll(profiles);
        List<String> props = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1"));
        props.addAll(List.of(properties));
        return new SpringApplicationBuilder(BackendApplication.class).web(type)
                .profiles(all.toArray(String[]::new)).properties(props.toArray(String[]::new)).run();
    }

    /** The base URL of a started web application. */
    static String url(ConfigurableApplicationContext context) {
        return "http://127.0.0.1:" + context.getEnvironment().getRequiredProperty("local.server.port");
    }

    /** A GET of {@code url}, answered within 10 s. */
    static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}

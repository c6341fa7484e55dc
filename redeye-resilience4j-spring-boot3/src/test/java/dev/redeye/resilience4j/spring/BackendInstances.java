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
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * What the tests share: starting {@link BackendApplication} (profile {@code backend}, plus any other profile
 * and properties, and any further configuration class), the build's real Redis ({@code REDEYE_REDIS_URL}; a test
 * fails saying how to provide it, never skips) under a fresh key prefix, and HTTP GETs.
 */
final class BackendInstances {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private BackendInstances() {
    }

    /** A Redis key prefix no other run uses. */
    static String newPrefix() {
        return "redeye-test:r4j-boot:" + UUID.randomUUID().toString().substring(0, 12) + ":";
    }

    /** {@code redeye.store} for the build's Redis under {@code prefix}. */
    static String redisStore(String prefix) {
        String url = redisUrl();
        return url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
    }

    /** Deletes the build's Redis keys under {@code prefix}. */
    static void deleteRedisKeys(String prefix) {
        try (JedisPooled jedis = new JedisPooled(URI.create(redisUrl()))) {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = jedis.scan(cursor, new ScanParams().match(prefix + "*").count(100));
                page.getResult().forEach(jedis::del);
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        }
    }

    private static String redisUrl() {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            fail("No REDEYE_REDIS_URL: source scripts/services.sh, or export REDEYE_REDIS_URL=redis://127.0.0.1:6379");
        }
        return url.trim();
    }

    /** Starts the application on a random port with the profiles {@code backend} and {@code profiles}. */
    static ConfigurableApplicationContext startWeb(List<String> profiles, String... properties) {
        return start(WebApplicationType.SERVLET, profiles, properties);
    }

    /** Starts the application without a web server. */
    static ConfigurableApplicationContext startNoWeb(List<String> profiles, String... properties) {
        return start(WebApplicationType.NONE, profiles, properties);
    }

    /** Starts the application without a web server, with {@code extra} configuration beside it. */
    static ConfigurableApplicationContext startNoWeb(Class<?> extra, List<String> profiles, String... properties) {
        return start(WebApplicationType.NONE, profiles, properties, extra);
    }

    private static ConfigurableApplicationContext start(WebApplicationType type, List<String> profiles,
            String[] properties, Class<?>... extra) {
        List<String> all = new ArrayList<>(List.of("backend"));
        all.addAll(profiles);
        List<String> props = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1"));
        props.addAll(List.of(properties));
        return new SpringApplicationBuilder(BackendApplication.class).sources(extra).web(type)
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

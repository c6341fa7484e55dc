package dev.redeye.spring.boot;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.CircuitBreaker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * What the tests share: the build's real Redis and PostgreSQL ({@code REDEYE_REDIS_URL},
 * {@code REDEYE_POSTGRES_URL}, exported by {@code scripts/services.sh}; a test fails saying how to provide
 * them, never skips), fresh names so runs sharing the servers never meet, calls that fail, and HTTP requests
 * to the applications the tests start.
 */
public final class TestServices {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private TestServices() {
    }

    public static String redisUrl() {
        return env("REDEYE_REDIS_URL", "redis://127.0.0.1:6379");
    }

    public static String postgresUrl() {
        return env("REDEYE_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
    }

    /** dynalite, the open-source DynamoDB server, which {@code scripts/services.sh} installs and starts. */
    public static String dynamoDbUrl() {
        return env("REDEYE_DYNAMODB_URL", "http://127.0.0.1:4567 (npx dynalite --port 4567)");
    }

    private static String env(String name, String example) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            fail("No " + name + ": source scripts/services.sh, or export " + name + "=" + example);
        }
        return v.trim();
    }

    /** A fresh Redis key prefix. */
    public static String newPrefix() {
        return "redeye-test:spring:" + UUID.randomUUID().toString().substring(0, 12) + ":";
    }

    /** {@code redeye.store} for the build's Redis under a fresh prefix. */
    public static String redisStoreUri(String prefix) {
        String url = redisUrl();
        return url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix;
    }

    /** The keys of the build's Redis under {@code prefix}. */
    public static List<String> redisKeys(String prefix) {
        try (JedisPooled jedis = new JedisPooled(URI.create(redisUrl()))) {
            List<String> out = new ArrayList<>();
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = jedis.scan(cursor, new ScanParams().match(prefix + "*").count(100));
                out.addAll(page.getResult());
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            return out;
        }
    }

    /** Deletes the keys of the build's Redis under {@code prefix}. */
    public static void deleteRedisKeys(String prefix) {
        List<String> keys = redisKeys(prefix);
        try (JedisPooled jedis = new JedisPooled(URI.create(redisUrl()))) {
            keys.forEach(jedis::del);
        }
    }

    /** A GET of {@code url}, answered within 10 s. */
    public static HttpResponse<String> httpGet(String url) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(url)).GET());
    }

    /** A POST to {@code url} of {@code json}, or of no body if it is null, answered within 10 s. */
    public static HttpResponse<String> httpPost(String url, String json) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url));
        return send(json == null ? request.POST(HttpRequest.BodyPublishers.noBody())
                : request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return HTTP.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A fresh name (schemas, maps, in-memory stores, operations). */
    public static String newName(String head) {
        return head + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** The dependency's failure in these tests. */
    public static final class Boom extends IOException {
        private static final long serialVersionUID = 1L;

        public Boom() {
            super("dependency failed", null);
        }
    }

    /** Runs one call of {@code operation} through {@code breaker} that fails with {@link Boom}. */
    public static void failCall(CircuitBreaker breaker, String operation) {
        try {
            breaker.execute(operation, () -> {
                throw new Boom();
            });
        } catch (Boom expected) {
            return;
        }
        throw new AssertionError("the failing call did not fail");
    }
}

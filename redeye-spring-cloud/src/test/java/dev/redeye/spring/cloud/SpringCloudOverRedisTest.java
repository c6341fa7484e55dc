package dev.redeye.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.cloud.app.CatalogApplication;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Two instances of one Boot application that uses only Spring Cloud CircuitBreaker's API
 * ({@link CatalogApplication}), sharing the breaker through the real Redis, asked over real HTTP: failures
 * through A's {@code CircuitBreakerFactory} open it, and B's circuit breakers, blocking and reactive, answer with
 * their fallbacks without calling B's healthy dependency.
 */
@SpringBootTest(classes = CatalogApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"redeye.breakers.catalog.failure-threshold=2", "spring.main.banner-mode=off"})
class SpringCloudOverRedisTest {
    private static final String PREFIX = "redeye-test:spring-cloud:" + UUID.randomUUID().toString().substring(0, 12) + ":";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static ConfigurableApplicationContext instanceB;
    private static String b;

    @LocalServerPort
    int portA;

    static String redisUrl() {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            Assertions.fail("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh)");
        }
        return url.trim();
    }

    static String store() {
        String url = redisUrl();
        return url + (url.contains("?") ? "&" : "?") + "prefix=" + PREFIX;
    }

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("redeye.store", SpringCloudOverRedisTest::store);
    }

    @BeforeAll
    static void startInstanceB() {
        instanceB = new SpringApplicationBuilder(CatalogApplication.class)
                .properties("server.port=0", "redeye.store=" + store(), "redeye.breakers.catalog.failure-threshold=2",
                        "spring.main.banner-mode=off")
                .run();
        b = "http://127.0.0.1:" + instanceB.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    static void stopInstanceBAndDeleteKeys() {
        if (instanceB != null) {
            instanceB.close();
        }
        try (JedisPooled jedis = new JedisPooled(URI.create(redisUrl()))) {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = jedis.scan(cursor, new ScanParams().match(PREFIX + "*").count(100));
                page.getResult().forEach(jedis::del);
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        }
    }

    private String a() {
        return "http://127.0.0.1:" + portA;
    }

    @Test
    void failuresThroughOneInstanceOpenTheBreakerForTheOthersBlockingAndReactiveCircuitBreakers() throws Exception {
        assertThat(get(a() + "/item/1")).isEqualTo("item 1");
        assertThat(get(b + "/reactive/1")).isEqualTo("item 1");

        post(a() + "/test/catalog?down=true");
        assertThat(get(a() + "/item/2")).isEqualTo("fallback (UncheckedIOException)");
        assertThat(get(a() + "/reactive/2")).isEqualTo("reactive fallback (UncheckedIOException)");

        int calls = Integer.parseInt(get(b + "/test/catalog/calls"));
        assertThat(get(b + "/item/3")).isEqualTo("fallback (CircuitOpenException)");
        assertThat(get(b + "/reactive/3")).isEqualTo("reactive fallback (CircuitOpenException)");
        assertThat(Integer.parseInt(get(b + "/test/catalog/calls"))).as("B's dependency was not called")
                .isEqualTo(calls);

        RedeyeCircuitBreakers breakersB = instanceB.getBean(RedeyeCircuitBreakers.class);
        assertThat(breakersB.get("catalog").metrics("catalog-items").rejections()).isEqualTo(2);
        assertThat(breakersB.getDefault().allMetrics()).as("the group chose the catalog breaker").isEmpty();
        breakersB.get("catalog").reset("catalog-items");
        post(a() + "/test/catalog?down=false");
        assertThat(get(b + "/item/4")).isEqualTo("item 4");
    }

    private static String get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void post(String url) throws IOException, InterruptedException {
        HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }
}

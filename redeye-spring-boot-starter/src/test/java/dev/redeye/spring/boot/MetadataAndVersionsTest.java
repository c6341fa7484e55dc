package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerConfig;
import java.io.InputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.convert.DurationStyle;

/**
 * What an IDE shows and what the module runs on: the generated configuration metadata covers every builder
 * option with a description, its default values are the engine's own, and this module's class path keeps each
 * library family (Jackson, Micrometer) on one version, Spring Boot's.
 */
class MetadataAndVersionsTest {
    private static final String[] OPTIONS = {"strategy", "failure-threshold", "error-rate-threshold",
        "minimum-calls", "error-rate-decay", "reset-timeout", "backoff-multiplier", "max-reset-timeout", "jitter",
        "success-threshold", "half-open-permits", "trial-timeout", "max-gap-between-failures", "call-timeout",
        "store-error-policy", "open-cache-refresh", "local-cache.enabled", "local-cache.stale-tolerance",
        "max-operations", "record-batching", "writable-stack-traces", "record-exceptions", "ignore-exceptions"};

    private static Map<String, JsonNode> metadata() throws Exception {
        try (InputStream in = MetadataAndVersionsTest.class.getResourceAsStream(
                "/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("spring-boot-configuration-processor's output").isNotNull();
            Map<String, JsonNode> out = new HashMap<>();
            for (JsonNode p : new ObjectMapper().readTree(in).path("properties")) {
                out.put(p.path("name").asText(), p);
            }
            return out;
        }
    }

    @Test
    void everyBuilderOptionHasADescribedProperty() throws Exception {
        Map<String, JsonNode> m = metadata();
        for (String o : OPTIONS) {
            JsonNode p = m.get("redeye.defaults." + o);
            assertThat(p).as("redeye.defaults." + o).isNotNull();
            assertThat(p.path("description").asText()).as(o).isNotBlank();
        }
        for (String other : new String[] {"redeye.store", "redeye.breakers", "redeye.enabled", "redeye.redis.prefix",
            "redeye.postgres.schema", "redeye.hazelcast.map", "redeye.dynamodb.table", "redeye.metrics.enabled",
            "redeye.annotation.enabled", "management.health.redeye.enabled"}) {
            assertThat(m.get(other)).as(other).isNotNull();
            assertThat(m.get(other).path("description").asText()).as(other).isNotBlank();
        }
    }

    @Test
    void theDefaultsAnIdeShowsAreTheEnginesOwn() throws Exception {
        Map<String, JsonNode> m = metadata();
        CircuitBreakerConfig c = CircuitBreaker.builder().build().config();
        assertThat(text(m, "strategy")).isEqualTo(c.strategy().wireName());
        assertThat(m.get("redeye.defaults.failure-threshold").path("defaultValue").asInt()).isEqualTo(c.failureThreshold());
        assertThat(number(m, "error-rate-threshold")).isEqualTo(c.errorRateThreshold());
        assertThat(m.get("redeye.defaults.minimum-calls").path("defaultValue").asInt()).isEqualTo(c.minimumCalls());
        assertThat(number(m, "error-rate-decay")).isEqualTo(c.errorRateDecay());
        assertThat(duration(m, "reset-timeout")).isEqualTo(c.resetTimeout());
        assertThat(number(m, "backoff-multiplier")).isEqualTo(c.backoffMultiplier());
        assertThat(number(m, "jitter")).isEqualTo(c.jitter());
        assertThat(m.get("redeye.defaults.success-threshold").path("defaultValue").asInt()).isEqualTo(c.successThreshold());
        assertThat(m.get("redeye.defaults.half-open-permits").path("defaultValue").asInt()).isEqualTo(c.halfOpenPermits());
        assertThat(text(m, "store-error-policy")).isEqualTo(c.storeErrorPolicy().name().toLowerCase(Locale.ROOT));
        assertThat(duration(m, "open-cache-refresh")).isEqualTo(c.openCacheRefresh());
        assertThat(m.get("redeye.defaults.writable-stack-traces").path("defaultValue").asBoolean())
                .isEqualTo(c.writableStackTraces());
        assertThat(m.get("redeye.defaults.local-cache.enabled").path("defaultValue").asBoolean())
                .isEqualTo(c.localCacheStaleTolerance().isPresent());
        assertThat(duration(m, "local-cache.stale-tolerance")).isEqualTo(
                CircuitBreaker.builder().localCache().build().config().localCacheStaleTolerance().orElseThrow());
    }

    private static String text(Map<String, JsonNode> m, String option) {
        return m.get("redeye.defaults." + option).path("defaultValue").asText();
    }

    private static double number(Map<String, JsonNode> m, String option) {
        return m.get("redeye.defaults." + option).path("defaultValue").asDouble();
    }

    private static Duration duration(Map<String, JsonNode> m, String option) {
        return DurationStyle.detectAndParse(text(m, option));
    }

    @Test
    void eachLibraryFamilyIsOnSpringBootsVersion() {
        assertThat(SpringBootVersion.getVersion()).isEqualTo("3.5.7");
        // jackson-databind beside jackson-core of another minor version is the mix the pom's properties prevent
        assertThat(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString()).isEqualTo("2.19.2")
                .isEqualTo(com.fasterxml.jackson.core.json.PackageVersion.VERSION.toString());
        String core = io.micrometer.core.instrument.MeterRegistry.class.getPackage().getImplementationVersion();
        String commons = io.micrometer.common.KeyValue.class.getPackage().getImplementationVersion();
        String observation = io.micrometer.observation.Observation.class.getPackage().getImplementationVersion();
        assertThat(core).isEqualTo("1.15.5").isEqualTo(commons).isEqualTo(observation);
        assertThat(org.junit.jupiter.api.Test.class.getPackage().getImplementationVersion()).isEqualTo("5.12.2");
        // redeye-reactor is built with Reactor 3.8 and runs here on Boot's 3.7, as a Boot 3.5.7 application runs it
        assertThat(reactor.core.publisher.Mono.class.getPackage().getImplementationVersion()).isEqualTo("3.7.12");
    }
}

package dev.redeye.spring.boot;

import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.CircuitBreaker;
import java.io.IOException;
import java.util.UUID;

/**
 * What the tests share: the build's real Redis and PostgreSQL ({@code REDEYE_REDIS_URL},
 * {@code REDEYE_POSTGRES_URL}, exported by {@code scripts/services.sh}; a test fails saying how to provide
 * them, never skips), fresh names so runs sharing the servers never meet, and calls that fail.
 */
public final class TestServices {
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

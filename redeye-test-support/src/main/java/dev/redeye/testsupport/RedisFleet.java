package dev.redeye.testsupport;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.Stores;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assertions;

/**
 * Breakers standing for the instances of one fleet over the real Redis ({@code REDEYE_REDIS_URL}): each over a
 * client of its own, all under one random key prefix. {@link #close()}, after each test, deletes the
 * operation's state and closes every breaker, and with it its client. Not thread-safe: one test's fixture.
 */
public final class RedisFleet implements AutoCloseable {
    private final String prefix;
    private final String operation;
    private final List<CircuitBreaker> breakers = new ArrayList<>();

    /**
     * @param module    names the calling module in the key prefix ({@code redeye-test:<module>:<random>:})
     * @param operation the operation whose state {@link #close()} deletes
     */
    public RedisFleet(String module, String operation) {
        this.prefix = "redeye-test:" + module + ":" + UUID.randomUUID().toString().substring(0, 12) + ":";
        this.operation = operation;
    }

    /**
     * One more instance: {@code builder} over a new client of the fleet's store, built and kept for
     * {@link #close()}.
     *
     * @throws AssertionError if {@code REDEYE_REDIS_URL} is not set
     */
    public CircuitBreaker instance(CircuitBreakerBuilder builder) {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            Assertions.fail("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh)");
        }
        CircuitBreaker b = builder.store(Stores.open(url.trim() + "?prefix=" + prefix)).build();
        breakers.add(b);
        return b;
    }

    /** Deletes the operation's state through each instance's store, and closes the instance. */
    @Override
    public void close() {
        for (CircuitBreaker b : breakers) {
            try {
                b.config().store().orElseThrow().delete(operation);
            } finally {
                b.close();
            }
        }
    }
}

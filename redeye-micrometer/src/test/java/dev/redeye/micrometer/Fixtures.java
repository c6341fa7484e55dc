package dev.redeye.micrometer;

import org.junit.jupiter.api.Assertions;

import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.tck.MutableClock;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/** What the micrometer tests share: a virtual clock, the real Redis, calls that succeed or fail, meter reads. */
final class Fixtures {
    private Fixtures() {
    }

    /** A virtual clock (the TCK's) at a fixed start; it moves only when told. */
    static MutableClock clock() {
        return new MutableClock(1_700_000_000_000L);
    }

    /**
     * The shared Redis of the build ({@code REDEYE_REDIS_URL}, which {@code scripts/services.sh} exports); the
     * test fails saying how to provide one when it is missing: never a mock, never a silent skip.
     */
    static String redisUrl() {
        String url = System.getenv("REDEYE_REDIS_URL");
        if (url == null || url.isBlank()) {
            Assertions.fail("No Redis: set REDEYE_REDIS_URL (source scripts/services.sh, or export "
                    + "REDEYE_REDIS_URL=redis://127.0.0.1:6379 with a redis-server running)");
        }
        return url.trim();
    }

    /** A fresh key prefix, so that runs sharing the server never meet. */
    static String newPrefix() {
        return "redeye-test:micrometer:" + UUID.randomUUID().toString().substring(0, 12) + ":";
    }

    /** A new Redis client under {@code prefix} (two of them stand for two instances). */
    static Store redis(String prefix) {
        String url = redisUrl();
        return Stores.open(url + (url.contains("?") ? "&" : "?") + "prefix=" + prefix);
    }

    static final class Boom extends IOException {
        private static final long serialVersionUID = 1L;

        Boom() {
            super("dependency failed", null);
        }
    }

    static String succeed(CircuitBreaker b, String op) throws IOException {
        return b.execute(op, () -> "ok");
    }

    static void failing(CircuitBreaker b, String op) {
        try {
            b.execute(op, () -> {
                throw new Boom();
            });
        } catch (Boom expected) {
            return;
        }
        throw new AssertionError("the failing call did not fail");
    }

    static RequiredSearch meter(MeterRegistry r, String name, String op) {
        return r.get(name).tag("name", op);
    }

    static double gauge(MeterRegistry r, String name, String op, String... tags) {
        Gauge g = meter(r, name, op).tags(tags).gauge();
        return g.value();
    }

    static double counter(MeterRegistry r, String name, String op, String... tags) {
        FunctionCounter c = meter(r, name, op).tags(tags).functionCounter();
        return c.count();
    }

    static FunctionTimer calls(MeterRegistry r, String op, String kind) {
        return meter(r, RedeyeMetrics.CALLS, op).tag("kind", kind).functionTimer();
    }

    /** Waits (real time: the feed is a real Redis stream) until {@code condition} holds, or fails. */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                Assertions.fail("gave up after 10 s waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }
}

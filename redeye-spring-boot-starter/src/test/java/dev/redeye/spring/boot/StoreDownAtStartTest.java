package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.StoreException;
import dev.redeye.spring.boot.actuate.RedeyeHealthIndicator;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A store that cannot be reached when the application starts does not fail the start: a context over a Redis
 * URL whose port has nothing listening starts, its breakers follow their store error policy and the health
 * is DOWN; once a redis-server of this test's own starts on that port, the breakers use it and the health is
 * UP. {@code redeye.store-open-mode=strict} keeps the failing start.
 */
class StoreDownAtStartTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL);

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort(); // closed again: nothing listens there
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 30 s: " + what);
            }
            Thread.sleep(20);
        }
    }

    /** A redis-server of this test's own on {@code port}; stopped by its process handle. */
    private static Process redisServer(int port) throws IOException, InterruptedException {
        File log = File.createTempFile("redeye-spring-redis", ".log");
        Process p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return p;
            } catch (IOException notYet) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    p.destroyForcibly();
                    throw new IllegalStateException("redis-server did not start on " + port + " (see " + log + ")");
                }
                Thread.sleep(50);
            }
        }
    }

    @Test
    void aContextOverARedisThatIsDownStartsFollowsThePolicyAndUsesRedisOnceItIsUp() throws Exception {
        int port = freePort();
        String prefix = TestServices.newPrefix();
        runner.withPropertyValues("redeye.store=redis://127.0.0.1:" + port + "?timeout=500&prefix=" + prefix,
                "redeye.defaults.store-error-policy=allow", "redeye.defaults.failure-threshold=2").run(context -> {
                    assertThat(context).hasNotFailed();
                    CircuitBreaker b = context.getBean(CircuitBreaker.class);
                    AtomicInteger ran = new AtomicInteger();
                    for (int i = 0; i < 3; i++) {
                        assertThat(b.execute("op", () -> ran.incrementAndGet())).isEqualTo(i + 1);
                    }
                    assertThat(b.metrics("op").storeErrors()).isGreaterThanOrEqualTo(3);
                    RedeyeHealthIndicator health = context.getBean(RedeyeHealthIndicator.class);
                    assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);

                    Process redis = redisServer(port);
                    try {
                        await(() -> {
                            try {
                                b.state("op");
                                return true;
                            } catch (StoreException notYet) {
                                return false;
                            }
                        }, "the breaker reaches Redis once it is up");
                        b.recordFailure("op");
                        b.recordFailure("op");
                        assertThat(b.status("op")).isEqualTo(BreakerStatus.OPEN);
                        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                    } finally {
                        redis.destroyForcibly();
                        redis.waitFor(10, TimeUnit.SECONDS);
                    }
                });
    }

    @Test
    void strictOpenModeKeepsTheFailingStart() throws Exception {
        int port = freePort();
        runner.withPropertyValues("redeye.store=redis://127.0.0.1:" + port + "?timeout=500",
                "redeye.store-open-mode=strict").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("cannot be opened")
                            .hasStackTraceContaining("cannot reach Redis");
                });
    }
}

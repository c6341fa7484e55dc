package dev.redeye.spring.boot;

import static dev.redeye.spring.boot.TestServices.failCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spring.boot.actuate.RedeyeEndpoint;
import dev.redeye.spring.boot.actuate.RedeyeEndpointWebExtension;
import dev.redeye.spring.boot.actuate.RedeyeHealthIndicator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import redis.clients.jedis.JedisPooled;

/**
 * The health indicator, the {@code redeye} endpoint's operations (called as beans; over HTTP in
 * {@link TwoInstancesOverRedisTest}) and the Micrometer binding, with their conditions.
 */
class ActuatorAndMetricsTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL);

    @Test
    void healthIsUpWithOpenBreakersListedNeverDownBecauseOfThem() {
        runner.withPropertyValues("redeye.store=memory://" + TestServices.newName("health"),
                "redeye.breakers.payments.failure-threshold=1").run(context -> {
                    RedeyeHealthIndicator indicator = context.getBean(RedeyeHealthIndicator.class);
                    Health before = indicator.health();
                    assertThat(before.getStatus()).isEqualTo(Status.UP);
                    assertThat(before.getDetails()).doesNotContainKey("open").containsKey("store");

                    CircuitBreaker payments = RedeyeAutoConfigurationTest.qualified(context, "payments");
                    failCall(payments, "charge");
                    context.getBean(CircuitBreaker.class).forceOpen("inventory");
                    Health after = indicator.health();
                    assertThat(after.getStatus()).isEqualTo(Status.UP);
                    assertThat(after.getDetails().get("open")).isEqualTo(Map.of(
                            "payments", Map.of("charge", BreakerStatus.OPEN),
                            "default", Map.of("inventory", BreakerStatus.FORCED_OPEN)));
                });
    }

    @Test
    void healthIsUpInLocalMode() {
        runner.run(context -> {
            Health h = context.getBean(RedeyeHealthIndicator.class).health();
            assertThat(h.getStatus()).isEqualTo(Status.UP);
            assertThat(h.getDetails()).containsEntry("store", "none (local mode)");
        });
    }

    @Test
    void healthIsDownWhenTheStoreDoesNotAnswer() throws IOException {
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort(); // closed again: nothing listens there
        }
        int port = dead;
        runner.withBean("jedis", JedisPooled.class, () -> new JedisPooled("127.0.0.1", port))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Health h = context.getBean(RedeyeHealthIndicator.class).health();
                    assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(h.getDetails()).containsEntry("store", "JedisPooled bean 'jedis'");
                    assertThat((String) h.getDetails().get("error")).contains("StoreException");
                });
    }

    @Test
    void healthIndicatorCanBeTurnedOffAndNeedsActuator() {
        runner.withPropertyValues("management.health.redeye.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedeyeHealthIndicator.class));
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(RedeyeCircuitBreakers.class)
                        .doesNotHaveBean(RedeyeHealthIndicator.class).doesNotHaveBean(RedeyeEndpoint.class));
    }

    @Test
    void theEndpointExistsOnlyWhenExposed() {
        runner.run(context -> assertThat(context).doesNotHaveBean(RedeyeEndpoint.class)
                .doesNotHaveBean(RedeyeEndpointWebExtension.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=redeye")
                .run(context -> assertThat(context).hasSingleBean(RedeyeEndpoint.class)
                        .hasSingleBean(RedeyeEndpointWebExtension.class));
    }

    @Test
    void theEndpointListsReadsAndForcesOperations() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=redeye",
                "redeye.store=memory://" + TestServices.newName("endpoint"),
                "redeye.breakers.payments.failure-threshold=2").run(context -> {
                    RedeyeEndpoint endpoint = context.getBean(RedeyeEndpoint.class);
                    CircuitBreaker payments = RedeyeAutoConfigurationTest.qualified(context, "payments");
                    payments.execute("charge", () -> "ok");
                    failCall(payments, "charge");

                    RedeyeEndpoint.BreakersDescriptor all = endpoint.breakers();
                    assertThat(all.store()).startsWith("memory://");
                    assertThat(all.breakers()).containsOnlyKeys("default", "payments");
                    assertThat(all.breakers().get("payments").config().failureThreshold()).isEqualTo(2);
                    RedeyeEndpoint.OperationSummary charge = all.breakers().get("payments").operations().get("charge");
                    assertThat(charge.status()).isEqualTo(BreakerStatus.CLOSED);
                    assertThat(charge.calls()).isEqualTo(2);
                    assertThat(charge.failures()).isEqualTo(1);

                    RedeyeEndpoint.OperationDescriptor read = endpoint.operation("payments", "charge");
                    assertThat(read.status()).isEqualTo(BreakerStatus.CLOSED);
                    assertThat(read.failures()).isEqualTo(1);
                    assertThat(endpoint.operation("nope", "charge")).isNull();

                    assertThat(read.retryAfter()).isNull();
                    failCall(payments, "charge"); // the second failure opens it
                    RedeyeEndpoint.OperationDescriptor open = endpoint.operation("payments", "charge");
                    assertThat(open.status()).isEqualTo(BreakerStatus.OPEN);
                    assertThat(java.time.Duration.parse(open.retryAfter()))
                            .isPositive().isLessThanOrEqualTo(payments.config().resetTimeout());

                    RedeyeEndpoint.OperationDescriptor forced = endpoint.change("payments", "charge", "force-open", null);
                    assertThat(forced.status()).isEqualTo(BreakerStatus.FORCED_OPEN);
                    assertThat(forced.forced()).isTrue();
                    assertThat(forced.retryAfter()).as("no trial until a reset: no retry time").isNull();
                    assertThat(endpoint.operation("payments", "charge").retryAfter()).isNull();
                    assertThat(payments.localStatus("charge")).isEqualTo(BreakerStatus.FORCED_OPEN);
                    RedeyeEndpoint.OperationDescriptor half = endpoint.change("payments", "charge", "force-half-open", null);
                    assertThat(half.status()).isEqualTo(BreakerStatus.HALF_OPEN);
                    assertThat(half.retryAfter()).isEqualTo("PT0S");
                    assertThat(endpoint.change("payments", "charge", "reset", null).status()).isEqualTo(BreakerStatus.CLOSED);
                    assertThat(payments.execute("charge", () -> "ok")).isEqualTo("ok");

                    assertThatThrownBy(() -> endpoint.change("payments", "charge", "explode", null))
                            .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("force-open");
                    assertThatThrownBy(() -> endpoint.change("nope", "charge", "reset", null))
                            .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("nope");

                    RedeyeEndpoint.OperationDescriptor metricsOnly = endpoint.change("payments", "charge", "force-mode",
                            "metrics_only");
                    assertThat(metricsOnly.mode()).isEqualTo("metrics_only");
                    failCall(payments, "charge");
                    failCall(payments, "charge");
                    failCall(payments, "charge");
                    assertThat(payments.execute("charge", () -> "ok")).as("metrics only never rejects")
                            .isEqualTo("ok");
                    assertThatThrownBy(() -> endpoint.change("payments", "charge", "force-mode", null))
                            .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("missing mode");
                    assertThatThrownBy(() -> endpoint.change("payments", "charge", "force-mode", "sleepy"))
                            .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("sleepy");
                    assertThat(endpoint.change("payments", "charge", "reset", null).mode()).isEqualTo("default");
                });
    }

    private static final AutoConfigurations BOOT_METRICS = AutoConfigurations.of(MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class);

    @Test
    void breakersAreMeteredThroughBootsMetricsTaggedWithTheirName() {
        runner.withConfiguration(BOOT_METRICS)
                .withPropertyValues("redeye.breakers.payments.failure-threshold=3").run(context -> {
                    assertThat(context).hasNotFailed();
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    CircuitBreaker payments = RedeyeAutoConfigurationTest.qualified(context, "payments");
                    payments.execute("charge", () -> "ok");
                    failCall(payments, "charge");
                    assertThat(registry.get("redeye.circuitbreaker.calls").tag("breaker", "payments")
                            .tag("name", "charge").tag("kind", "failed").functionTimer().count()).isEqualTo(1);
                    assertThat(registry.get("redeye.circuitbreaker.calls").tag("breaker", "payments")
                            .tag("name", "charge").tag("kind", "successful").functionTimer().count()).isEqualTo(1);
                    assertThat(registry.find("redeye.circuitbreaker.calls").tag("breaker", "default").meters())
                            .isEmpty(); // the default breaker has no operation yet
                });
    }

    @Test
    void resilience4jNamingIsAProperty() {
        runner.withConfiguration(BOOT_METRICS).withPropertyValues("redeye.metrics.naming=resilience4j")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(CircuitBreaker.class).execute("op", () -> "ok");
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("resilience4j.circuitbreaker.calls").tag("breaker", "default")
                            .tag("name", "op").tag("kind", "successful").functionTimer().count()).isEqualTo(1);
                    assertThat(registry.find("redeye.circuitbreaker.calls").meters()).isEmpty();
                });
    }

    @Test
    void withoutBootsMetricsTheApplicationsOneRegistryIsBound() {
        runner.withClassLoader(new FilteredClassLoader(MetricsAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(CircuitBreaker.class).execute("op", () -> "ok");
                    assertThat(context.getBean(MeterRegistry.class).get("redeye.circuitbreaker.calls")
                            .tag("breaker", "default").tag("name", "op").tag("kind", "successful").functionTimer()
                            .count()).isEqualTo(1);
                });
    }

    @Test
    void noMeterBindingWithoutMicrometerOrRegistryOrWhenOff() {
        runner.run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean("redeyeMeterBinder")); // Micrometer present, no registry bean
        runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(RedeyeCircuitBreakers.class)
                        .doesNotHaveBean("redeyeMeterBinder"));
        runner.withConfiguration(BOOT_METRICS).withPropertyValues("redeye.metrics.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("redeyeMeterBinder"));
    }
}

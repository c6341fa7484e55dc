package dev.redeye.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redeye.Permit;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.autoconfigure.RedeyeAutoConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.circuitbreaker.CircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.Customizer;
import org.springframework.cloud.client.circuitbreaker.NoFallbackAvailableException;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The two factories, their conditions, ids, groups and configuration, and what run does with each outcome. */
class FactoriesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedeyeAutoConfiguration.class,
                    RedeyeSpringCloudAutoConfiguration.class))
            .withPropertyValues("redeye.defaults.failure-threshold=1", "redeye.defaults.jitter=0",
                    "redeye.breakers.payments.failure-threshold=2");

    private static RedeyeCircuitBreakers breakers(AssertableApplicationContext c) {
        return c.getBean(RedeyeCircuitBreakers.class);
    }

    private static <T> T down() {
        throw new UncheckedIOException(new IOException("down"));
    }

    @Test
    void bothFactoriesExistUnlessTheApplicationHasItsOwnOrTurnsThemOff() {
        runner.run(c -> assertThat(c).hasNotFailed().hasSingleBean(RedeyeCircuitBreakerFactory.class)
                .hasSingleBean(ReactiveRedeyeCircuitBreakerFactory.class));
        runner.withPropertyValues("spring.cloud.circuitbreaker.redeye.enabled=false")
                .run(c -> assertThat(c).doesNotHaveBean(CircuitBreakerFactory.class)
                        .doesNotHaveBean(ReactiveCircuitBreakerFactory.class));
        runner.withBean("mine", CircuitBreakerFactory.class, () -> new RedeyeCircuitBreakerFactory(
                new RedeyeCircuitBreakers(java.util.Map.of("default", dev.redeye.CircuitBreaker.ofDefaults()), "x")))
                .run(c -> assertThat(c).hasSingleBean(CircuitBreakerFactory.class).hasBean("mine"));
        runner.withClassLoader(new FilteredClassLoader("reactor.core"))
                .run(c -> assertThat(c).hasNotFailed().hasSingleBean(RedeyeCircuitBreakerFactory.class)
                        .doesNotHaveBean(ReactiveCircuitBreakerFactory.class));
    }

    @Test
    void theIdIsTheOperationAndTheGroupNamesTheBreaker() {
        runner.run(c -> {
            CircuitBreakerFactory<?, ?> f = c.getBean(CircuitBreakerFactory.class);
            assertThat(f.create("stock").run(() -> "ok")).isEqualTo("ok");
            assertThat(breakers(c).getDefault().metrics("stock").successes()).isEqualTo(1);
            assertThat(f.create("charge", "payments").run(() -> "ok")).isEqualTo("ok");
            assertThat(breakers(c).get("payments").metrics("charge").successes()).isEqualTo(1);
            assertThat(f.create("other", "no-such-breaker").run(() -> "ok")).isEqualTo("ok");
            assertThat(breakers(c).getDefault().metrics("other").successes()).as("an unknown group: the default")
                    .isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class PaymentsCustomizer {
        @Bean
        Customizer<RedeyeCircuitBreakerFactory> paymentsCustomizer() {
            return f -> f.configure(b -> b.breaker("payments").operation("payment-gateway"), "charge", "refund");
        }
    }

    @Test
    void configurationAndCustomizersMapIdsToBreakersAndOperations() {
        runner.withUserConfiguration(PaymentsCustomizer.class).run(c -> {
            RedeyeCircuitBreakerFactory f = c.getBean(RedeyeCircuitBreakerFactory.class);
            f.create("charge").run(() -> "ok");
            f.create("refund", "ignored: configured").run(() -> "ok");
            assertThat(breakers(c).get("payments").metrics("payment-gateway").successes()).isEqualTo(2);
            f.configure(b -> b.breaker("nope"), "broken");
            assertThatThrownBy(() -> f.create("broken")).isInstanceOf(NoSuchElementException.class)
                    .hasMessageContaining("no redeye breaker named 'nope'");
            f.configureDefault(id -> RedeyeCircuitBreakerConfig.builder(id).operation("all:" + id).build());
            f.create("fresh").run(() -> "ok");
            assertThat(breakers(c).getDefault().metrics("all:fresh").successes()).isEqualTo(1);
        });
        assertThatThrownBy(() -> RedeyeCircuitBreakerConfig.builder("x").operation(""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("operation");
    }

    @Test
    void runGivesTheFallbackTheFailureAndThenTheRejectionAndWithoutOneWrapsThem() {
        runner.run(c -> {
            CircuitBreaker cb = c.getBean(CircuitBreakerFactory.class).create("stock");
            assertThat(cb.<String>run(FactoriesTest::down, t -> t.getClass().getSimpleName()))
                    .isEqualTo("UncheckedIOException");
            assertThat(cb.<String>run(() -> "never runs", t -> t.getClass().getSimpleName()))
                    .isEqualTo("CircuitOpenException");
            assertThatThrownBy(() -> cb.run(() -> "x")).isInstanceOf(NoFallbackAvailableException.class)
                    .hasCauseInstanceOf(CircuitOpenException.class);
            CircuitBreaker closed = c.getBean(CircuitBreakerFactory.class).create("other");
            assertThatThrownBy(() -> closed.run(() -> {
                throw new StackOverflowError();
            }, t -> "a VirtualMachineError never reaches a fallback")).isInstanceOf(StackOverflowError.class);
        });
    }

    @Test
    void theReactiveFactoryGuardsEachSubscriptionAndACancelBeforeAValueGivesTheTrialBack() {
        runner.withPropertyValues("redeye.defaults.reset-timeout=1ms", "redeye.defaults.trial-timeout=5m").run(c -> {
            ReactiveCircuitBreaker cb = c.getBean(ReactiveCircuitBreakerFactory.class).create("quotes");
            StepVerifier.create(cb.run(Flux.just("a", "b"))).expectNext("a", "b").verifyComplete();
            StepVerifier.create(cb.run(Mono.<String>error(new IOException("down")),
                    t -> Mono.just(t.getClass().getSimpleName()))).expectNext("IOException").verifyComplete();
            dev.redeye.CircuitBreaker breaker = breakers(c).getDefault();
            assertThat(breaker.metrics("quotes").failures()).isEqualTo(1);
            Thread.sleep(5); // the 1 ms reset window passes in real time
            StepVerifier.create(cb.run(Mono.<String>never())).expectSubscription().thenCancel().verify(WAIT);
            assertThat(breaker.metrics("quotes").trials()).as("the cancelled subscription held the trial")
                    .isEqualTo(1);
            Permit next = breaker.tryAcquire("quotes");
            assertThat(next.isTrial()).as("given back at once, not after trial-timeout: " + next).isTrue();
            next.release();
            StepVerifier.create(cb.run(Mono.just("x"))).expectNext("x").verifyComplete();
        });
    }
}

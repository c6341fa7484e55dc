package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redeye.api.CircuitOpenException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@link CircuitBreakerGuarded} methods run through their breaker; mistakes fail the start. */
class GuardedAnnotationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL)
            .withPropertyValues("redeye.defaults.failure-threshold=2", "redeye.breakers.payments.failure-threshold=1");

    /** A client of a dependency that fails while {@code down}. State through methods: the bean is a proxy. */
    public static class Client {
        private final AtomicInteger calls = new AtomicInteger();
        private volatile boolean down;

        public void down(boolean v) {
            down = v;
        }

        public int calls() {
            return calls.get();
        }

        @CircuitBreakerGuarded("inventory")
        public String stock(String item) throws IOException {
            calls.incrementAndGet();
            if (down) {
                throw new TestServices.Boom();
            }
            return item + ":7";
        }

        @CircuitBreakerGuarded(value = "refunds", breaker = "payments")
        public CompletableFuture<String> refund(String order) {
            calls.incrementAndGet();
            return down ? CompletableFuture.failedFuture(new TestServices.Boom())
                    : CompletableFuture.completedFuture("refunded " + order);
        }

        public String unguarded() {
            calls.incrementAndGet();
            throw new IllegalStateException("not guarded");
        }
    }

    /** The annotation on an interface method guards the implementation. */
    public interface Catalog {
        @CircuitBreakerGuarded("catalog")
        CompletionStage<String> find(String id);
    }

    public static class CatalogImpl implements Catalog {
        volatile boolean down;

        @Override
        public CompletionStage<String> find(String id) {
            if (down) {
                throw new IllegalStateException("thrown before any stage existed");
            }
            return CompletableFuture.completedFuture(id);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Client client() {
            return new Client();
        }

        @Bean
        Catalog catalog() {
            return new CatalogImpl();
        }
    }

    @Test
    void aGuardedMethodRunsThroughTheDefaultBreakerAndIsRejectedOnceOpen() {
        runner.withUserConfiguration(Beans.class).run(context -> {
            assertThat(context).hasNotFailed();
            Client client = context.getBean(Client.class);
            assertThat(AopUtils.isAopProxy(client)).isTrue();
            assertThat(client.stock("apple")).isEqualTo("apple:7");
            client.down(true);
            assertThatThrownBy(() -> client.stock("apple")).isInstanceOf(TestServices.Boom.class);
            assertThatThrownBy(() -> client.stock("apple")).isInstanceOf(TestServices.Boom.class);
            int before = client.calls();
            assertThatThrownBy(() -> client.stock("apple")).isInstanceOf(CircuitOpenException.class);
            assertThat(client.calls()).isEqualTo(before); // rejected: the method never ran
            RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
            assertThat(breakers.getDefault().metrics("inventory").failures()).isEqualTo(2);
            assertThat(breakers.getDefault().metrics("inventory").rejections()).isEqualTo(1);
            // a method without the annotation is left alone
            assertThatThrownBy(client::unguarded).isInstanceOf(IllegalStateException.class);
            assertThat(breakers.getDefault().allMetrics()).containsOnlyKeys("inventory");
        });
    }

    @Test
    void aCompletableFutureIsGuardedByItsOutcomeOnTheNamedBreaker() {
        runner.withUserConfiguration(Beans.class).run(context -> {
            Client client = context.getBean(Client.class);
            RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
            assertThat(client.refund("o-1").join()).isEqualTo("refunded o-1");
            client.down(true);
            assertThatThrownBy(() -> client.refund("o-2").join()).hasCauseInstanceOf(TestServices.Boom.class);
            assertThat(breakers.get("payments").metrics("refunds").failures()).isEqualTo(1);
            assertThatThrownBy(() -> client.refund("o-3").join()).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(CircuitOpenException.class);
            assertThat(breakers.getDefault().allMetrics()).isEmpty();
        });
    }

    @Test
    void anAnnotatedInterfaceMethodIsGuardedAndASynchronousThrowFailsTheStage() {
        runner.withUserConfiguration(Beans.class).run(context -> {
            Catalog catalog = context.getBean(Catalog.class);
            assertThat(catalog.find("a").toCompletableFuture().join()).isEqualTo("a");
            ((CatalogImpl) AopTestUtilsBridge.target(catalog)).down = true;
            assertThatThrownBy(() -> catalog.find("b").toCompletableFuture().join())
                    .hasCauseInstanceOf(IllegalStateException.class);
            assertThat(context.getBean(RedeyeCircuitBreakers.class).getDefault().metrics("catalog").failures())
                    .isEqualTo(1);
        });
    }

    public static class UnknownBreaker {
        @CircuitBreakerGuarded(value = "x", breaker = "nope")
        public String call() {
            return "x";
        }
    }

    /** A Reactive Streams Publisher that is neither Reactor's Mono nor Flux. */
    public interface Stream<T> extends Publisher<T> {
    }

    public static class ReactiveClient {
        @CircuitBreakerGuarded("stream")
        public Stream<String> stream() {
            return s -> { };
        }
    }

    @Test
    void mistakesFailTheStart() {
        runner.withBean(UnknownBreaker.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context))
                    .contains("no redeye breaker named 'nope'", "UnknownBreaker.call()");
        });
        runner.withBean(ReactiveClient.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context)).contains("Reactive Streams Publisher",
                    "Mono or Flux", "tryAcquire");
        });
    }

    @Test
    void theAnnotationCanBeTurnedOff() {
        runner.withUserConfiguration(Beans.class).withPropertyValues("redeye.annotation.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(AopUtils.isAopProxy(context.getBean(Client.class))).isFalse();
                });
    }

    /** Spring's AopTestUtils, kept behind one name. */
    static final class AopTestUtilsBridge {
        static Object target(Object proxy) {
            return org.springframework.test.util.AopTestUtils.getUltimateTargetObject(proxy);
        }
    }
}

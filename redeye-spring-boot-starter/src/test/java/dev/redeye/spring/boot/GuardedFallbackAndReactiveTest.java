package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.CircuitOpenException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code fallbackMethod} resolution and dispatch (rejections and the call's own failures, the closest exception
 * parameter wins, as Resilience4j documents), and Mono, Flux and CompletionStage methods guarded without
 * blocking, each with its fallback. Mistakes fail the start.
 */
class GuardedFallbackAndReactiveTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL)
            .withPropertyValues("redeye.defaults.failure-threshold=2",
                    "redeye.defaults.ignore-exceptions=java.lang.IllegalArgumentException")
            .withUserConfiguration(Beans.class);

    /** Where each fallback was told what. */
    public static class Base {
        final List<String> answered = new CopyOnWriteArrayList<>();

        /** A superclass's fallback for what no closer one takes. */
        String quote(String item, Exception e) {
            answered.add("Exception:" + e.getClass().getSimpleName());
            return "base fallback";
        }
    }

    public static class Pricing extends Base {
        final AtomicInteger calls = new AtomicInteger();
        volatile Throwable next;

        public List<String> answered() {
            return answered;
        }

        public int calls() {
            return calls.get();
        }

        public void failWith(Throwable t) {
            next = t;
        }

        private <T> T run(T value) throws Exception {
            calls.incrementAndGet();
            Throwable t = next;
            if (t instanceof Exception e) {
                throw e;
            }
            if (t instanceof Error e) {
                throw e;
            }
            return value;
        }

        @CircuitBreakerGuarded(value = "quote", fallbackMethod = "quote")
        public String quote(String item) throws Exception {
            return run("price of " + item);
        }

        private String quote(String item, CircuitOpenException rejected) {
            answered.add("rejected:" + rejected.operation());
            return "cached price";
        }

        String quote(String item, IOException e) {
            answered.add("IOException:" + e.getClass().getSimpleName());
            if (e instanceof FileNotFoundException) {
                throw new IllegalStateException("the fallback's own failure");
            }
            return "io fallback";
        }

        /** Same name, not a fallback shape: ignored (no trailing exception). */
        String quote(String item, int i) {
            return "never";
        }

        @CircuitBreakerGuarded(value = "narrow", fallbackMethod = "narrow")
        public String narrow() throws Exception {
            return run("narrow");
        }

        String narrow(IOException e) {
            return "narrow fallback";
        }

        @CircuitBreakerGuarded(value = "stage", fallbackMethod = "stageFallback")
        public CompletableFuture<String> stage(String id) {
            calls.incrementAndGet();
            Throwable t = next;
            return t != null ? CompletableFuture.failedFuture(t) : CompletableFuture.completedFuture("stage " + id);
        }

        CompletableFuture<String> stageFallback(String id, Throwable t) {
            answered.add("stage:" + t.getClass().getSimpleName());
            return CompletableFuture.completedFuture("stage fallback");
        }

        @CircuitBreakerGuarded(value = "mono", fallbackMethod = "monoFallback")
        public Mono<String> mono(String id) {
            return Mono.fromCallable(() -> run("mono " + id));
        }

        Mono<String> monoFallback(String id, CircuitOpenException rejected) {
            return Mono.just("mono rejected");
        }

        @CircuitBreakerGuarded("flux")
        public Flux<String> flux() {
            return Flux.defer(() -> {
                calls.incrementAndGet();
                Throwable t = next;
                return t != null ? Flux.just("a").concatWith(Flux.error(t)) : Flux.just("a", "b");
            });
        }

        @CircuitBreakerGuarded(value = "publisher", fallbackMethod = "publisherFallback")
        public Publisher<String> publisher() {
            return Flux.error(new IOException("down"));
        }

        Publisher<String> publisherFallback(IOException e) {
            return Flux.just("publisher fallback");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        Pricing pricing() {
            return new Pricing();
        }
    }

    private static CircuitBreaker breaker(org.springframework.context.ApplicationContext context) {
        return context.getBean(RedeyeCircuitBreakers.class).getDefault();
    }

    @Test
    void theClosestExceptionParameterWinsForFailuresAndRejections() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            Pricing p = context.getBean(Pricing.class);
            assertThat(p.quote("apple")).isEqualTo("price of apple");
            p.failWith(new java.net.SocketTimeoutException("slow"));
            assertThat(p.quote("apple")).isEqualTo("io fallback"); // an IOException subclass: (String, IOException)
            p.failWith(new IllegalArgumentException("bad item")); // ignored by the breaker, still a fallback's
            assertThat(p.quote("apple")).isEqualTo("base fallback");
            assertThat(breaker(context).metrics("quote").failures()).isEqualTo(1);
            assertThat(breaker(context).metrics("quote").ignored()).isEqualTo(1);
            p.failWith(new IOException("down"));
            assertThat(p.quote("apple")).isEqualTo("io fallback");
            assertThat(p.quote("apple")).isEqualTo("io fallback"); // two in a row open it
            int calls = p.calls();
            assertThat(p.quote("apple")).isEqualTo("cached price"); // a rejection: (String, CircuitOpenException)
            assertThat(p.calls()).isEqualTo(calls);
            assertThat(p.answered()).containsExactly("IOException:SocketTimeoutException",
                    "Exception:IllegalArgumentException", "IOException:IOException", "IOException:IOException",
                    "rejected:quote");
        });
    }

    @Test
    void whatNoFallbackTakesIsRethrownAndAFallbacksOwnExceptionIsTheCallers() {
        runner.withPropertyValues("redeye.defaults.failure-threshold=10").run(context -> {
            Pricing p = context.getBean(Pricing.class);
            p.failWith(new IllegalStateException("not an IOException"));
            assertThatThrownBy(p::narrow).isInstanceOf(IllegalStateException.class).hasMessage("not an IOException");
            p.failWith(new FileNotFoundException("gone"));
            assertThatThrownBy(() -> p.quote("x")).isInstanceOf(IllegalStateException.class)
                    .hasMessage("the fallback's own failure");
            p.failWith(new StackOverflowError("a VirtualMachineError is never a fallback's"));
            assertThatThrownBy(() -> p.quote("x")).isInstanceOf(StackOverflowError.class);
            p.failWith(new AssertionError("an Error a fallback takes (Exception does not)"));
            assertThatThrownBy(() -> p.quote("x")).isInstanceOf(AssertionError.class);
        });
    }

    @Test
    void aStageIsGuardedWithoutBlockingAndItsFallbackReplacesTheFailedOutcome() {
        runner.run(context -> {
            Pricing p = context.getBean(Pricing.class);
            assertThat(p.stage("1").join()).isEqualTo("stage 1");
            p.failWith(new IOException("down"));
            assertThat(p.stage("2").join()).isEqualTo("stage fallback");
            assertThat(p.stage("3").join()).isEqualTo("stage fallback");
            int calls = p.calls();
            assertThat(p.stage("4").join()).isEqualTo("stage fallback");
            assertThat(p.calls()).isEqualTo(calls);
            assertThat(p.answered()).containsExactly("stage:IOException", "stage:IOException",
                    "stage:CircuitOpenException");
        });
    }

    @Test
    void aMonoIsGuardedPerSubscriptionWithItsFallback() {
        runner.run(context -> {
            Pricing p = context.getBean(Pricing.class);
            Mono<String> assembled = p.mono("1");
            assertThat(p.calls()).as("a Mono does nothing until subscribed").isZero();
            StepVerifier.create(assembled).expectNext("mono 1").verifyComplete();
            p.failWith(new IOException("down"));
            for (int i = 0; i < 2; i++) {
                StepVerifier.create(p.mono("2")).expectError(IOException.class).verify(WAIT); // no fallback for it
            }
            int calls = p.calls();
            StepVerifier.create(assembled).expectNext("mono rejected").verifyComplete(); // resubscribed: asks again
            assertThat(p.calls()).isEqualTo(calls);
            assertThat(breaker(context).metrics("mono").rejections()).isEqualTo(1);
        });
    }

    @Test
    void aFluxIsGuardedPerSubscriptionAndAPublisherAsAFlux() {
        runner.run(context -> {
            Pricing p = context.getBean(Pricing.class);
            StepVerifier.create(p.flux()).expectNext("a", "b").verifyComplete();
            StepVerifier.create(p.flux().take(1)).expectNext("a").verifyComplete();
            assertThat(breaker(context).metrics("flux").successes()).isEqualTo(2);
            p.failWith(new IOException("down"));
            StepVerifier.create(p.flux()).expectNext("a").expectError(IOException.class).verify(WAIT);
            assertThat(breaker(context).metrics("flux").failures()).isEqualTo(1);
            Publisher<String> pub = p.publisher();
            assertThat(pub).isInstanceOf(Flux.class);
            StepVerifier.create(pub).expectNext("publisher fallback").verifyComplete();
            assertThat(breaker(context).metrics("publisher").failures()).isEqualTo(1);
        });
    }

    public static class MissingFallback {
        @CircuitBreakerGuarded(value = "x", fallbackMethod = "nope")
        public String call(String a) {
            return a;
        }
    }

    public static class WrongShape {
        @CircuitBreakerGuarded(value = "x", fallbackMethod = "fb")
        public String call(String a) {
            return a;
        }

        String fb(String a) {
            return "no exception parameter";
        }

        Integer fb(String a, Exception e) {
            return 1; // wrong return type
        }
    }

    @Test
    void aFallbackThatDoesNotResolveOrAnotherPublisherFailsTheStart() {
        ApplicationContextRunner bare = new ApplicationContextRunner().withConfiguration(RedeyeAutoConfigurationTest.ALL);
        bare.withBean(MissingFallback.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context)).contains("fallbackMethod 'nope'",
                    "String nope(String, <a Throwable type>)", "no method of that name");
        });
        bare.withBean(WrongShape.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context)).contains("fallbackMethod 'fb'",
                    "found only ", "String fb(String)", "Integer fb(String, Exception)");
        });
        bare.withBean(GuardedAnnotationTest.ReactiveClient.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context)).contains("Mono or Flux", "tryAcquire");
        });
    }
}

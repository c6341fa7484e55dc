package dev.redeye.spring.boot;

import static dev.redeye.spring.boot.TestServices.failCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerConfig;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.Strategy;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.autoconfigure.RedeyeActuatorAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeAnnotationAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeMetricsAutoConfiguration;
import dev.redeye.spring.boot.autoconfigure.RedeyeStoreClientsAutoConfiguration;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

/**
 * The auto-configuration without any client bean: local mode, a store from {@code redeye.store}, a user's
 * {@link Store} bean, property binding and overrides, named breakers as beans, customizers, and invalid values
 * failing the start with the property named.
 */
class RedeyeAutoConfigurationTest {
    static final AutoConfigurations ALL = AutoConfigurations.of(RedeyeStoreClientsAutoConfiguration.class,
            RedeyeAutoConfiguration.class, RedeyeMetricsAutoConfiguration.class,
            RedeyeActuatorAutoConfiguration.class, RedeyeAnnotationAutoConfiguration.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(ALL);

    @Test
    void withoutPropertiesEveryBreakerRunsInLocalMode() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(Store.class);
            RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
            assertThat(breakers.names()).containsExactly("default");
            assertThat(breakers.storeDescription()).isEqualTo("none (local mode)");
            CircuitBreaker b = context.getBean(CircuitBreaker.class);
            assertThat(b).isSameAs(breakers.getDefault());
            assertThat(b.config().store()).isEmpty();
            // the engine's defaults, untouched by properties nobody set
            assertThat(b.config().failureThreshold()).isEqualTo(5);
            assertThat(b.config().resetTimeout()).isEqualTo(Duration.ofSeconds(60));
            for (int i = 0; i < 5; i++) {
                failCall(b, "op");
            }
            assertThatThrownBy(() -> b.execute("op", () -> "never")).isInstanceOf(CircuitOpenException.class);
        });
    }

    @Test
    void aStoreUriGivesEveryBreakerTheStoreBeanClosedOnceAfterTheBreakers() {
        String name = TestServices.newName("close");
        AtomicBoolean breakersClosedFirst = new AtomicBoolean();
        List<CircuitBreaker> seen = new ArrayList<>();
        runner.withPropertyValues("redeye.store=closecount://" + name, "redeye.breakers.payments.failure-threshold=2")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Store.class);
                    Store store = context.getBean(Store.class);
                    assertThat(store).isSameAs(CloseCountingStoreProvider.OPENED.get(name));
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(breakers.storeDescription()).isEqualTo("closecount://" + name + " (redeye.store)");
                    for (CircuitBreaker b : breakers.asMap().values()) {
                        assertThat(b.config().store()).containsSame(store);
                        assertThat(b.config().closeStore()).isFalse();
                        seen.add(b);
                    }
                    // a write through a breaker lands in the shared store
                    failCall(breakers.get("payments"), "charge");
                    failCall(breakers.get("payments"), "charge");
                    assertThat(Stores.open("memory://" + name).get("charge")).get()
                            .satisfies(s -> assertThat(s.open()).isTrue());
                    CloseCountingStoreProvider.OPENED.get(name).onFirstClose = () -> breakersClosedFirst.set(
                            seen.stream().allMatch(RedeyeAutoConfigurationTest::isClosed));
                });
        assertThat(CloseCountingStoreProvider.OPENED.get(name).closes).hasValue(1);
        assertThat(breakersClosedFirst).as("every breaker was closed before the store").isTrue();
        assertThat(seen).allMatch(RedeyeAutoConfigurationTest::isClosed);
    }

    private static boolean isClosed(CircuitBreaker b) {
        try {
            b.metrics("x");
            b.execute("closed-probe", () -> "ok");
            return false;
        } catch (IllegalStateException closed) {
            return true;
        }
    }

    @Test
    void aStoreBeanOfTheApplicationWinsAndIsClosedOnlyBySpring() {
        String name = TestServices.newName("user");
        runner.withUserConfiguration(UserStore.class)
                .withPropertyValues("redeye.store=memory://ignored", "test.store=" + name)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(Store.class).doesNotHaveBean("redeyeStore");
                    Store mine = context.getBean(Store.class);
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(breakers.getDefault().config().store()).containsSame(mine);
                    assertThat(breakers.storeDescription()).isEqualTo("Store bean 'myStore' (Counting)");
                });
        assertThat(UserStore.last.closes).hasValue(1);
    }

    @Configuration(proxyBeanMethods = false)
    static class UserStore {
        static volatile CloseCountingStoreProvider.Counting last;

        @Bean
        Store myStore(org.springframework.core.env.Environment env) {
            last = new CloseCountingStoreProvider.Counting(Stores.open("memory://" + env.getProperty("test.store")));
            return last;
        }
    }

    @Test
    void everyOptionBindsFromTheDefaultsAndANamedBreakerOverridesThemOneByOne() {
        runner.withPropertyValues(
                "redeye.defaults.strategy=error-rate",
                "redeye.defaults.failure-threshold=7",
                "redeye.defaults.error-rate-threshold=0.25",
                "redeye.defaults.minimum-calls=20",
                "redeye.defaults.error-rate-decay=0.8",
                "redeye.defaults.reset-timeout=30s",
                "redeye.defaults.backoff-multiplier=1.5",
                "redeye.defaults.max-reset-timeout=2m",
                "redeye.defaults.jitter=0.2",
                "redeye.defaults.success-threshold=2",
                "redeye.defaults.half-open-permits=3",
                "redeye.defaults.trial-timeout=5s",
                "redeye.defaults.max-gap-between-failures=10s",
                "redeye.defaults.call-timeout=3s",
                "redeye.defaults.store-error-policy=reject",
                "redeye.defaults.open-cache-refresh=500ms",
                "redeye.defaults.local-cache.enabled=true",
                "redeye.defaults.local-cache.stale-tolerance=250ms",
                "redeye.defaults.max-operations=1000",
                "redeye.defaults.writable-stack-traces=true",
                "redeye.defaults.record-exceptions=java.io.IOException,java.lang.IllegalStateException",
                "redeye.breakers.payments.strategy=consecutive",
                "redeye.breakers.payments.failure-threshold=3",
                "redeye.breakers.payments.store-error-policy=LOCAL",
                "redeye.breakers.payments.reset-timeout=PT1M",
                "redeye.breakers.payments.local-cache.stale-tolerance=50ms",
                "redeye.breakers.payments.ignore-exceptions=java.io.FileNotFoundException")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(breakers.names()).containsExactly("default", "payments");
                    CircuitBreakerConfig d = breakers.getDefault().config();
                    assertThat(d.strategy()).isEqualTo(Strategy.ERROR_RATE);
                    assertThat(d.failureThreshold()).isEqualTo(7);
                    assertThat(d.errorRateThreshold()).isEqualTo(0.25);
                    assertThat(d.minimumCalls()).isEqualTo(20);
                    assertThat(d.errorRateDecay()).isEqualTo(0.8);
                    assertThat(d.resetTimeout()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(d.backoffMultiplier()).isEqualTo(1.5);
                    assertThat(d.maxResetTimeout()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(d.jitter()).isEqualTo(0.2);
                    assertThat(d.successThreshold()).isEqualTo(2);
                    assertThat(d.halfOpenPermits()).isEqualTo(3);
                    assertThat(d.trialTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(d.maxGapBetweenFailures()).contains(Duration.ofSeconds(10));
                    assertThat(d.callTimeout()).contains(Duration.ofSeconds(3));
                    assertThat(d.storeErrorPolicy()).isEqualTo(StoreErrorPolicy.REJECT);
                    assertThat(d.openCacheRefresh()).isEqualTo(Duration.ofMillis(500));
                    assertThat(d.localCacheStaleTolerance()).contains(Duration.ofMillis(250));
                    assertThat(d.maxOperations()).hasValue(1000);
                    assertThat(d.writableStackTraces()).isTrue();
                    assertThat(d.recordFailure().test(new IOException())).isTrue();
                    assertThat(d.recordFailure().test(new IllegalStateException())).isTrue();
                    assertThat(d.recordFailure().test(new IllegalArgumentException())).isFalse();

                    CircuitBreakerConfig p = breakers.get("payments").config();
                    assertThat(p.strategy()).isEqualTo(Strategy.CONSECUTIVE);
                    assertThat(p.failureThreshold()).isEqualTo(3);
                    assertThat(p.storeErrorPolicy()).isEqualTo(StoreErrorPolicy.LOCAL);
                    assertThat(p.resetTimeout()).isEqualTo(Duration.ofMinutes(1));
                    assertThat(p.localCacheStaleTolerance()).contains(Duration.ofMillis(50));
                    // the rest is the defaults'
                    assertThat(p.maxResetTimeout()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(p.halfOpenPermits()).isEqualTo(3);
                    assertThat(p.callTimeout()).contains(Duration.ofSeconds(3));
                    assertThat(p.maxOperations()).hasValue(1000);
                    // ignore wins over record; record still applies
                    assertThat(p.recordFailure().test(new IOException())).isTrue();
                    assertThat(p.recordFailure().test(new java.io.FileNotFoundException())).isFalse();
                    assertThat(p.recordFailure().test(new IllegalArgumentException())).isFalse();
                });
    }

    @Test
    void namedBreakersAreBeansByNameAndQualifierAndTheDefaultIsPrimary() {
        runner.withPropertyValues("redeye.breakers.payments.failure-threshold=2",
                "redeye.breakers.inventory.failure-threshold=4", "redeye.breakers.default.failure-threshold=9")
                .withUserConfiguration(Injected.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(breakers.names()).containsExactly("default", "payments", "inventory");
                    assertThat(context.getBeansOfType(CircuitBreaker.class)).hasSize(3);
                    assertThat(context.getBean("redeyeCircuitBreaker.payments", CircuitBreaker.class))
                            .isSameAs(breakers.get("payments"));
                    assertThat(context.getBean("redeyeCircuitBreaker.inventory", CircuitBreaker.class))
                            .isSameAs(breakers.get("inventory"));
                    assertThat(qualified(context, "payments")).isSameAs(breakers.get("payments"));
                    Injected i = context.getBean(Injected.class);
                    assertThat(i.primary).isSameAs(breakers.getDefault());
                    assertThat(i.primary.config().failureThreshold()).isEqualTo(9); // redeye.breakers.default.*
                    assertThat(i.payments).isSameAs(breakers.get("payments"));
                    assertThat(i.payments.config().failureThreshold()).isEqualTo(2);
                    assertThat(i.byDefaultQualifier).isSameAs(breakers.getDefault());
                    assertThatThrownBy(() -> breakers.get("nope")).hasMessageContaining("no redeye breaker named 'nope'")
                            .hasMessageContaining("[default, payments, inventory]");
                });
    }

    /** The breaker bean with {@code qualifier}, as {@code @Qualifier(qualifier) CircuitBreaker} finds it. */
    static CircuitBreaker qualified(org.springframework.context.ApplicationContext context, String qualifier) {
        return org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                context.getAutowireCapableBeanFactory(), CircuitBreaker.class, qualifier);
    }

    /** An application's own bean named like a breaker ({@code @Service class Payments} is bean "payments"). */
    static class Payments {
    }

    @Test
    void aBreakerNamedLikeAnApplicationBeanDoesNotCollideWithIt() {
        runner.withPropertyValues("redeye.breakers.payments.failure-threshold=2")
                .withBean("payments", Payments.class, Payments::new)
                .withUserConfiguration(Injected.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean("payments")).isInstanceOf(Payments.class);
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(context.getBean(Injected.class).payments).isSameAs(breakers.get("payments"));
                    assertThat(qualified(context, "payments").config().failureThreshold()).isEqualTo(2);
                });
    }

    static class Injected {
        @Autowired
        CircuitBreaker primary;
        @Autowired
        @Qualifier("payments")
        CircuitBreaker payments;
        @Autowired
        @Qualifier("default")
        CircuitBreaker byDefaultQualifier;
    }

    @Test
    void customizersRunForEveryBreakerAfterTheProperties() {
        runner.withPropertyValues("redeye.breakers.payments.failure-threshold=1")
                .withUserConfiguration(Customized.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(Customized.names).containsExactly("default", "payments");
                    CircuitBreaker p = breakers.get("payments");
                    failCall(p, "charge");
                    // the fallback set by the customizer answers the rejection
                    assertThat(p.execute("charge", () -> "ran")).isEqualTo("fallback:payments");
                    assertThat(p.localStatus("charge")).isEqualTo(BreakerStatus.OPEN);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class Customized {
        static final List<String> names = new ArrayList<>();

        @Bean
        RedeyeBreakerCustomizer fallbacks() {
            return (name, builder) -> {
                names.add(name);
                builder.fallback((op, rejection) -> "fallback:" + name);
            };
        }
    }

    @Test
    void redeyeEnabledFalseTurnsEverythingOff() {
        runner.withPropertyValues("redeye.enabled=false", "redeye.store=memory://off").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(RedeyeCircuitBreakers.class)
                    .doesNotHaveBean(CircuitBreaker.class).doesNotHaveBean(Store.class);
        });
    }

    @Test
    void anInvalidValueFailsTheStartNamingTheProperty() {
        assertInvalid("redeye.defaults.failure-threshold", "0", "must be >= 1, was 0");
        assertInvalid("redeye.breakers.payments.failure-threshold", "0", "must be >= 1, was 0");
        assertInvalid("redeye.breakers.payments.jitter", "1.5", "must be in [0, 1), was 1.5");
        assertInvalid("redeye.defaults.reset-timeout", "0s", "must be");
        assertInvalid("redeye.breakers.payments.local-cache.stale-tolerance", "0ms", "must be",
                "redeye.breakers.payments.local-cache.enabled=true");
        assertInvalid("redeye.breakers.payments.max-reset-timeout", "10s", "must be >= resetTimeout",
                "redeye.defaults.reset-timeout=30s");
        assertInvalid("redeye.defaults.error-rate-decay", "1", "must be in (0, 1)");
    }

    /**
     * Every option the starter binds: a bad value fails the start naming the property, found from the option the
     * engine's {@code InvalidOptionException} names (its field, not its message), with the engine's reason.
     */
    @Test
    void everyOptionsBadValueNamesItsProperty() {
        String[][] bad = {
            {"failure-threshold", "0", "must be >= 1"},
            {"error-rate-threshold", "2", "must be in (0, 1]"},
            {"minimum-calls", "0", "must be >= 1"},
            {"error-rate-decay", "0", "must be in (0, 1)"},
            {"reset-timeout", "0ms", "at least 1 ms"},
            {"backoff-multiplier", "0.5", "finite number >= 1"},
            {"max-reset-timeout", "0s", "at least 1 ms"},
            {"jitter", "1", "must be in [0, 1)"},
            {"half-open-permits", "0", "must be >= 1"},
            {"trial-timeout", "0s", "at least 1 ms"},
            {"max-gap-between-failures", "0s", "at least 1 ms"},
            {"call-timeout", "400d", "at most 365 days"},
            {"open-cache-refresh", "0s", "at least 1 ms"},
            {"max-operations", "0", "must be >= 1"},
            {"failure-rate-threshold", "0", "percentage in (0, 100]"},
            {"minimum-number-of-calls", "0", "must be >= 1"},
            {"slow-call-rate-threshold", "101", "percentage in (0, 100]"},
            {"slow-call-duration-threshold", "400d", "at most 365 days"},
            {"sliding-window-size", "1001", "at most 1000 outcomes"},
        };
        for (String[] b : bad) {
            assertInvalid("redeye.breakers.payments." + b[0], b[1], b[2]);
        }
        // (assertInvalid sets redeye.breakers.payments.success-threshold itself)
        assertInvalid("redeye.defaults.success-threshold", "0", "must be >= 1");
        assertInvalid("redeye.defaults.local-cache.stale-tolerance", "0ms", "at least 1 ms",
                "redeye.defaults.local-cache.enabled=true");
    }

    @Test
    void theSlidingWindowSlowCallsAndModeBindFromProperties() {
        runner.withPropertyValues("redeye.defaults.sliding-window-type=time-based",
                "redeye.breakers.payments.sliding-window-size=10", "redeye.breakers.payments.failure-rate-threshold=40",
                "redeye.breakers.payments.minimum-number-of-calls=20",
                "redeye.breakers.payments.slow-call-rate-threshold=80",
                "redeye.breakers.payments.slow-call-duration-threshold=2s", "redeye.defaults.mode=metrics-only")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CircuitBreaker payments = qualified(context, "payments");
                    dev.redeye.api.Policy p = payments.config().policy();
                    assertThat(p.strategy()).isEqualTo(dev.redeye.api.Strategy.SLIDING_WINDOW);
                    assertThat(p.slidingWindowType()).isEqualTo(dev.redeye.api.SlidingWindowType.TIME_BASED);
                    assertThat(p.slidingWindowSize()).isEqualTo(10);
                    assertThat(p.failureRateThreshold()).isEqualTo(40.0);
                    assertThat(p.minimumNumberOfCalls()).isEqualTo(20);
                    assertThat(p.slowCallRateThreshold()).isEqualTo(80.0);
                    assertThat(p.mode()).isEqualTo(dev.redeye.api.BreakerMode.METRICS_ONLY);
                    assertThat(payments.config().slowCallDurationThreshold()).contains(java.time.Duration.ofSeconds(2));
                });
    }

    @Test
    void theQuorumBindsFromPropertiesAndNeedsAStore() {
        runner.withPropertyValues("redeye.store=memory://quorum-" + System.nanoTime(),
                "redeye.breakers.payments.quorum=3", "redeye.breakers.payments.instance-id=pod-7")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CircuitBreaker payments = qualified(context, "payments");
                    assertThat(payments.config().policy().quorum()).isEqualTo(3);
                    assertThat(payments.config().instanceId()).isEqualTo("pod-7");
                });
        assertInvalid("redeye.breakers.payments.quorum", "2", "needs a shared store");
        assertInvalid("redeye.breakers.payments.quorum-fraction", "1.5", "must be in [0, 1]");
        assertInvalid("redeye.breakers.payments.instance-id", "a b", "instance id");
    }

    /** A value a customizer set is not a property's: the start fails naming the option and the customizer. */
    @Test
    void aBadValueFromACustomizerNamesTheOptionNotAProperty() {
        runner.withPropertyValues("redeye.defaults.failure-threshold=3")
                .withBean(RedeyeBreakerCustomizer.class, () -> (name, builder) -> builder.halfOpenPermits(0))
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable root = NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
                    assertThat(root).isNotInstanceOf(InvalidConfigurationPropertyValueException.class);
                    assertThat(allMessages(context)).contains("halfOpenPermits must be >= 1, was 0")
                            .contains("RedeyeBreakerCustomizer");
                });
    }

    private void assertInvalid(String property, String value, String reason, String... more) {
        runner.withPropertyValues(property + "=" + value, "redeye.breakers.payments.success-threshold=1")
                .withPropertyValues(more)
                .run(context -> {
                    assertThat(context).as(property + "=" + value).hasFailed();
                    InvalidConfigurationPropertyValueException e = find(context,
                            InvalidConfigurationPropertyValueException.class);
                    assertThat(e.getName()).isEqualTo(property);
                    assertThat(e.getValue()).isEqualTo(value);
                    assertThat(e.getMessage()).contains(property).contains(reason);
                });
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void springBootsStartupReportNamesThePropertyAndWhereItCameFrom(CapturedOutput output) {
        SpringApplication app = new SpringApplication(Minimal.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.setBannerMode(Banner.Mode.OFF);
        assertThatThrownBy(() -> app.run("--redeye.breakers.payments.failure-threshold=0")).isNotNull();
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("Invalid value '0' for configuration property 'redeye.breakers.payments.failure-threshold'")
                .contains("originating from").contains("commandLineArgs")
                .contains("must be >= 1, was 0");
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({RedeyeStoreClientsAutoConfiguration.class, RedeyeAutoConfiguration.class})
    static class Minimal {
    }

    @Test
    void aValueSpringCannotBindFailsTheStartNamingTheProperty() {
        runner.withPropertyValues("redeye.breakers.payments.failure-threshold=many").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context)).contains("redeye.breakers.payments.failure-threshold");
        });
        runner.withPropertyValues("redeye.defaults.strategy=sometimes").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context)).contains("redeye.defaults.strategy");
        });
        runner.withPropertyValues("redeye.breakers.payments.outlier-policy=sometimes").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context)).contains("redeye.breakers.payments.outlier-policy");
        });
    }

    @Test
    void aBadStoreUriNamesRedeyeStoreAndNeverShowsThePassword() {
        runner.withPropertyValues("redeye.store=nosuchstore://app:hunter22@somewhere").run(context -> {
            assertThat(context).hasFailed();
            InvalidConfigurationPropertyValueException e = find(context, InvalidConfigurationPropertyValueException.class);
            assertThat(e.getName()).isEqualTo("redeye.store");
            assertThat(e.getReason()).contains("no store provider");
            assertThat(allMessages(context)).doesNotContain("hunter22");
        });
        // a known scheme but no server, strict: the start fails naming redeye.store, without the password
        runner.withPropertyValues("redeye.store=redis://app:hunter22@127.0.0.1:1", "redeye.store-open-mode=strict")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(allMessages(context)).contains("redeye.store=redis://app:***@127.0.0.1:1")
                            .doesNotContain("hunter22");
                });
        // lazy (the default): the start goes on; the store's errors name it without the password either
        runner.withPropertyValues("redeye.store=redis://app:hunter22@127.0.0.1:1").run(context -> {
            assertThat(context).hasNotFailed();
            assertThatThrownBy(() -> context.getBean(Store.class).get("op")).isInstanceOf(StoreException.class)
                    .hasMessageContaining("redis://app:***@127.0.0.1:1").hasMessageNotContaining("hunter22");
        });
    }

    /** The root cause of the failed start, which must be of {@code type} (what a FailureAnalyzer reports). */
    static <T extends Throwable> T find(AssertableApplicationContext context, Class<T> type) {
        Throwable root = NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
        assertThat(root).isInstanceOf(type);
        return type.cast(root);
    }

    static String allMessages(AssertableApplicationContext context) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            sb.append(t).append('\n');
        }
        return sb.toString() + NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
    }
}

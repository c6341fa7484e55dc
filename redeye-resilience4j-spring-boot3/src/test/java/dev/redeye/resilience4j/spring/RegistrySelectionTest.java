package dev.redeye.resilience4j.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.redeye.resilience4j.RedeyeBackedCircuitBreaker;
import dev.redeye.resilience4j.RedeyeCircuitBreakerRegistry;
import dev.redeye.spi.Store;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.circuitbreaker.internal.InMemoryCircuitBreakerRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Which registry an application gets: redeye's with {@code redeye.store}; Resilience4j's own, untouched, without
 * it or with {@code redeye.enabled=false}; the application's own when it defines one. And an option redeye cannot
 * honour fails the start. The application is the same as {@link FleetWideRegistryOverRedisTest}'s, started
 * without a web server; the store, where one is set, is an in-process one ({@code memory://NAME}).
 */
class RegistrySelectionTest {

    private static String memoryStore() {
        return "redeye.store=memory://r4j-boot-" + UUID.randomUUID();
    }

    private static void assertResilience4jsOwn(ConfigurableApplicationContext context) {
        CircuitBreakerRegistry registry = context.getBean(CircuitBreakerRegistry.class);
        assertThat(registry).isInstanceOf(InMemoryCircuitBreakerRegistry.class);
        CircuitBreaker backend = registry.find("backend").orElseThrow();
        assertThat(backend.getClass().getSimpleName()).isEqualTo("CircuitBreakerStateMachine");
        assertThat(backend.getCircuitBreakerConfig().getMinimumNumberOfCalls()).isEqualTo(4);
    }

    @Test
    void withoutRedeyeStoreTheRegistryIsResilience4jsOwn() {
        try (ConfigurableApplicationContext context = BackendInstances.startNoWeb(List.of())) {
            assertResilience4jsOwn(context);
            assertThat(context.getBeansOfType(Store.class)).as("local mode: no store bean").isEmpty();
        }
    }

    @Test
    void withRedeyeDisabledTheRegistryIsResilience4jsOwn() {
        try (ConfigurableApplicationContext context = BackendInstances.startNoWeb(List.of(), memoryStore(),
                "redeye.enabled=false")) {
            assertResilience4jsOwn(context);
        }
    }

    /** An application that defines its own registry. */
    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {
        static final CircuitBreakerRegistry REGISTRY = CircuitBreakerRegistry.ofDefaults();

        @Bean
        CircuitBreakerRegistry ownRegistry() {
            return REGISTRY;
        }
    }

    @Test
    void anApplicationsOwnRegistryWins() {
        try (ConfigurableApplicationContext context = BackendInstances.startNoWeb(OwnRegistry.class, List.of(),
                memoryStore())) {
            assertThat(context.getBean(CircuitBreakerRegistry.class)).isSameAs(OwnRegistry.REGISTRY);
            assertThat(context.getBeansOfType(Store.class)).as("the redeye starter still opened its store")
                    .hasSize(1);
        }
    }

    @Test
    void withRedeyeStoreTheRegistryIsRedeyes() {
        try (ConfigurableApplicationContext context = BackendInstances.startNoWeb(List.of(), memoryStore())) {
            assertThat(context.getBean(CircuitBreakerRegistry.class)).isInstanceOf(RedeyeCircuitBreakerRegistry.class);
            assertThat(context.getBean(CircuitBreakerRegistry.class).find("backend").orElseThrow())
                    .isInstanceOf(RedeyeBackedCircuitBreaker.class);
        }
    }

    @Test
    void anOptionRedeyeRefusesFailsTheStartNamingTheInstanceAndTheOption() {
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> BackendInstances.startNoWeb(List.of("refused"), memoryStore()).close());
        List<String> messages = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            messages.add(String.valueOf(t.getMessage()));
        }
        assertThat(messages).as("the causes' messages").anySatisfy(m -> assertThat(m)
                .contains("resilience4j.circuitbreaker.instances.backend")
                .contains("maxWaitDurationInHalfOpenState"));
    }
}

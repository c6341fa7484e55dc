package dev.redeye.resilience4j;

import static dev.redeye.resilience4j.TestCalls.fail;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.Stores;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.ConfigurationNotFoundException;
import io.github.resilience4j.core.registry.EntryAddedEvent;
import io.github.resilience4j.core.registry.EntryRemovedEvent;
import io.github.resilience4j.core.registry.EntryReplacedEvent;
import io.github.resilience4j.core.registry.RegistryEventConsumer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RedeyeCircuitBreakerRegistry}: every overload of Resilience4j's registry builds a redeye-backed breaker,
 * configurations, tags and registry events behave as in Resilience4j's in-memory registry; over a shared
 * in-process store ({@code memory://NAME}) two registries standing for two instances share each name's state,
 * and removing a breaker from one closes that instance's breaker without touching the fleet's state.
 */
class RedeyeCircuitBreakerRegistryTest {
    private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        toClose.add(c);
        return c;
    }

    private static CircuitBreakerConfig countWindow(int minimumCalls) {
        return CircuitBreakerConfig.custom()
                .slidingWindow(10, minimumCalls, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofMinutes(5))
                .permittedNumberOfCallsInHalfOpenState(1)
                .build();
    }

    @Test
    void everyOverloadBuildsARedeyeBackedBreakerOncePerName() {
        CircuitBreakerConfig byDefault = countWindow(4);
        CircuitBreakerConfig named = countWindow(6);
        CircuitBreakerConfig given = countWindow(8);
        RedeyeCircuitBreakerRegistry registry = closing(RedeyeCircuitBreakerRegistry.builder(Resilience4jBreakers.local())
                .withCircuitBreakerConfig(byDefault).addCircuitBreakerConfig("named", named).build());

        CircuitBreaker a = registry.circuitBreaker("a");
        CircuitBreaker b = registry.circuitBreaker("b", Map.of("team", "b"));
        CircuitBreaker c = registry.circuitBreaker("c", given);
        CircuitBreaker d = registry.circuitBreaker("d", given, Map.of("team", "d"));
        CircuitBreaker e = registry.circuitBreaker("e", "named");
        CircuitBreaker f = registry.circuitBreaker("f", "named", Map.of("team", "f"));
        CircuitBreaker g = registry.circuitBreaker("g", () -> given);
        CircuitBreaker h = registry.circuitBreaker("h", () -> given, Map.of("team", "h"));

        for (CircuitBreaker cb : List.of(a, b, c, d, e, f, g, h)) {
            RedeyeBackedCircuitBreaker redeye = assertInstanceOf(RedeyeBackedCircuitBreaker.class, cb);
            assertEquals(cb.getName(), redeye.getName());
        }
        assertSame(byDefault, a.getCircuitBreakerConfig());
        assertSame(byDefault, b.getCircuitBreakerConfig());
        assertSame(given, c.getCircuitBreakerConfig());
        assertSame(given, d.getCircuitBreakerConfig());
        assertSame(named, e.getCircuitBreakerConfig());
        assertSame(named, f.getCircuitBreakerConfig());
        assertSame(given, g.getCircuitBreakerConfig());
        assertSame(given, h.getCircuitBreakerConfig());
        assertEquals(Map.of("team", "f"), f.getTags());
        assertEquals(Map.of(), e.getTags());

        AtomicInteger supplierCalls = new AtomicInteger();
        assertSame(a, registry.circuitBreaker("a", () -> {
            supplierCalls.incrementAndGet();
            return given;
        }), "a name already registered answers its breaker");
        assertEquals(0, supplierCalls.get(), "the supplier is called only to build");
        assertSame(a, registry.circuitBreaker("a", given));
        assertSame(a, registry.circuitBreaker("a", "no-such-config"), "the config name is looked up only to build");
        assertSame(c, registry.find("c").orElseThrow());
        assertEquals(Set.of("a", "b", "c", "d", "e", "f", "g", "h"),
                registry.getAllCircuitBreakers().stream().map(CircuitBreaker::getName).collect(Collectors.toSet()));
        assertEquals(Set.copyOf(registry.getAllCircuitBreakers()), Set.copyOf(registry.breakers().all()),
                "the registry's breakers are its factory's");
    }

    @Test
    void configurationsAndTagsAsInResilience4j() {
        RedeyeCircuitBreakerRegistry registry = closing(RedeyeCircuitBreakerRegistry.builder(
                        Resilience4jBreakers.builder().tags(Map.of("app", "shop", "env", "factory")).build())
                .withTags(Map.of("env", "registry", "region", "eu")).build());
        assertSame(registry.breakers().defaultConfig(), registry.getDefaultConfig(),
                "without a default config, the factory's");
        assertSame(registry.getDefaultConfig(), registry.getConfiguration("default").orElseThrow());
        assertThrows(IllegalArgumentException.class, () -> registry.addConfiguration("default", countWindow(4)));
        assertThrows(IllegalArgumentException.class, () -> registry.removeConfiguration("default"));

        CircuitBreakerConfig slow = countWindow(5);
        registry.addConfiguration("slow", slow);
        assertSame(slow, registry.getConfiguration("slow").orElseThrow());
        assertSame(slow, registry.circuitBreaker("x", "slow").getCircuitBreakerConfig());
        assertSame(slow, registry.removeConfiguration("slow"));
        assertTrue(registry.getConfiguration("slow").isEmpty());

        List<String> added = new CopyOnWriteArrayList<>();
        registry.getEventPublisher().onEntryAdded(ev -> added.add(ev.getAddedEntry().getName()));
        assertThrows(ConfigurationNotFoundException.class, () -> registry.circuitBreaker("y", "slow"));
        assertTrue(registry.find("y").isEmpty(), "nothing registered for a missing configuration");
        assertTrue(registry.breakers().find("y").isEmpty(), "nor built");
        assertEquals(List.of(), added);

        assertEquals(Map.of("env", "registry", "region", "eu"), registry.getTags());
        assertEquals(Map.of("app", "shop", "env", "call", "region", "eu"),
                registry.circuitBreaker("z", Map.of("env", "call")).getTags(),
                "the factory's tags, then the registry's, then the call's");
    }

    @Test
    void registryEventsForAddedRemovedAndReplacedBreakers() {
        List<String> seen = new CopyOnWriteArrayList<>();
        RegistryEventConsumer<CircuitBreaker> consumer = new RegistryEventConsumer<>() {
            @Override
            public void onEntryAddedEvent(EntryAddedEvent<CircuitBreaker> event) {
                seen.add("added " + event.getAddedEntry().getName());
            }

            @Override
            public void onEntryRemovedEvent(EntryRemovedEvent<CircuitBreaker> event) {
                seen.add("removed " + event.getRemovedEntry().getName());
            }

            @Override
            public void onEntryReplacedEvent(EntryReplacedEvent<CircuitBreaker> event) {
                seen.add("replaced " + event.getOldEntry().getName() + " by " + event.getNewEntry().getClass()
                        .getSimpleName());
            }
        };
        RedeyeCircuitBreakerRegistry registry = closing(RedeyeCircuitBreakerRegistry.builder(
                Resilience4jBreakers.local()).addRegistryEventConsumer(consumer).build());
        List<String> published = new CopyOnWriteArrayList<>();
        registry.getEventPublisher().onEntryAdded(ev -> published.add("added " + ev.getAddedEntry().getName()));

        CircuitBreaker first = registry.circuitBreaker("inventory");
        registry.circuitBreaker("inventory");
        assertEquals(List.of("added inventory"), seen, "one event per name built");
        assertEquals(List.of("added inventory"), published);

        assertSame(first, registry.remove("inventory").orElseThrow());
        assertTrue(registry.remove("inventory").isEmpty());
        CircuitBreaker second = registry.circuitBreaker("inventory");
        assertNotSame(first, second, "a removed name is built anew");

        CircuitBreaker inMemory = CircuitBreaker.ofDefaults("inventory");
        assertSame(second, registry.replace("inventory", inMemory).orElseThrow());
        assertSame(inMemory, registry.find("inventory").orElseThrow());
        assertTrue(registry.breakers().find("inventory").isEmpty(), "the replaced breaker left the factory");
        assertThrows(IllegalStateException.class, second::tryAcquirePermission,
                "the replaced breaker's redeye breaker is closed");
        assertTrue(registry.replace("absent", inMemory).isEmpty(), "replace never adds");
        assertEquals(List.of("added inventory", "removed inventory", "added inventory",
                "replaced inventory by CircuitBreakerStateMachine"), seen);
    }

    @Test
    void anOptionRedeyeRefusesRegistersNothing() {
        RedeyeCircuitBreakerRegistry registry = closing(RedeyeCircuitBreakerRegistry.of(Resilience4jBreakers.local()));
        List<String> added = new CopyOnWriteArrayList<>();
        registry.getEventPublisher().onEntryAdded(ev -> added.add(ev.getAddedEntry().getName()));
        CircuitBreakerConfig refused = CircuitBreakerConfig.custom()
                .maxWaitDurationInHalfOpenState(Duration.ofSeconds(5)).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> registry.circuitBreaker("payments", refused));
        assertTrue(e.getMessage().contains("'payments'") && e.getMessage().contains("maxWaitDurationInHalfOpenState"),
                e.getMessage());
        assertTrue(registry.find("payments").isEmpty());
        assertEquals(List.of(), added);
        assertInstanceOf(RedeyeBackedCircuitBreaker.class, registry.circuitBreaker("payments"),
                "the name is still free");
    }

    @Test
    void closeClosesTheFactoryAndItsBreakers() {
        RedeyeCircuitBreakerRegistry registry = RedeyeCircuitBreakerRegistry.of(Resilience4jBreakers.local());
        CircuitBreaker cb = registry.circuitBreaker("inventory");
        registry.close();
        assertThrows(IllegalStateException.class, cb::tryAcquirePermission);
        assertThrows(IllegalStateException.class, () -> registry.circuitBreaker("other"));
    }

    @Test
    void twoRegistriesOverOneStoreShareEachNamesState() throws Exception {
        String uri = "memory://r4j-registry-" + System.nanoTime();
        CircuitBreakerConfig config = countWindow(4);
        RedeyeCircuitBreakerRegistry one = closing(RedeyeCircuitBreakerRegistry.builder(
                Resilience4jBreakers.builder().store(Stores.open(uri)).build())
                .withCircuitBreakerConfig(config).build());
        RedeyeCircuitBreakerRegistry two = closing(RedeyeCircuitBreakerRegistry.builder(
                Resilience4jBreakers.builder().store(Stores.open(uri)).build())
                .withCircuitBreakerConfig(config).build());
        CircuitBreaker inOne = one.circuitBreaker("inventory");
        CircuitBreaker inTwo = two.circuitBreaker("inventory");
        for (int i = 0; i < 4; i++) {
            fail(inOne);
        }
        assertEquals(State.OPEN, inOne.getState());
        TestStores.eventually(() -> inTwo.getState() == State.OPEN,
                "instance two, which never called the breaker, reports the fleet's state from the feed");
        assertThrows(CallNotPermittedException.class, () -> inTwo.executeSupplier(() -> "never called"),
                "failures through one instance open the other");
        CircuitBreaker other = two.circuitBreaker("other");
        assertTrue(other.tryAcquirePermission(), "another name keeps its own state");
        other.releasePermission();

        one.remove("inventory");
        assertThrows(IllegalStateException.class, inOne::tryAcquirePermission, "this instance's breaker is closed");
        assertThrows(CallNotPermittedException.class, () -> inTwo.executeSupplier(() -> "never called"),
                "the fleet's state is not deleted");
        CircuitBreaker again = one.circuitBreaker("inventory");
        assertNotSame(inOne, again);
        assertFalse(again.tryAcquirePermission(), "a breaker built again joins the fleet's open state");
    }
}

package dev.redeye.resilience4j;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.core.ConfigurationNotFoundException;
import io.github.resilience4j.core.registry.AbstractRegistry;
import io.github.resilience4j.core.registry.RegistryEventConsumer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Resilience4j's {@link CircuitBreakerRegistry} whose breakers are {@link RedeyeBackedCircuitBreaker}s built by a
 * {@link Resilience4jBreakers} factory: code and integrations written against Resilience4j's registry (the
 * Spring Boot starter's aspect and endpoints, the Micrometer publishers, {@code EventConsumerRegistry} wiring)
 * run unchanged, and over a shared store every instance of the fleet that asks for a name shares that breaker's
 * state.
 *
 * <pre>{@code
 * RedeyeCircuitBreakerRegistry registry = RedeyeCircuitBreakerRegistry.builder(
 *                 Resilience4jBreakers.builder().store(Stores.open("redis://127.0.0.1:6379?prefix=myapp:")).build())
 *         .withCircuitBreakerConfig(CircuitBreakerConfig.custom().failureRateThreshold(50).build())
 *         .addCircuitBreakerConfig("slow", slowConfig)
 *         .build();
 * CircuitBreaker backend = registry.circuitBreaker("backend", "slow");
 * }</pre>
 *
 * <p>As in Resilience4j's in-memory registry: every {@code circuitBreaker(...)} overload returns the breaker
 * already registered under the name if there is one, whatever config is passed, and otherwise builds one (a
 * supplier is called, a configuration name is looked up, only then), publishing
 * {@link io.github.resilience4j.core.registry.EntryAddedEvent}; the tags a breaker answers are the factory's,
 * then the registry's, then the ones passed (the later win on a shared key). Configurations ({@code default}
 * included) are this registry's; {@code addConfiguration("default", ...)} is refused as Resilience4j refuses it.
 * A config an option of which redeye cannot honour makes {@code circuitBreaker(...)} throw
 * {@link IllegalArgumentException} naming the breaker and the option, and registers nothing.
 *
 * <p><b>Removal and replacement with a shared state.</b> The registry holds this instance's breakers, not the
 * fleet's state: {@link #remove(String)} closes this instance's redeye breaker for the name (its store
 * subscription and caches) and forgets it, but never deletes the state in the store, which the rest of the fleet
 * keeps using; asking for the name again builds a new breaker over that same state. {@link #replace} does the same
 * for the breaker it replaces, then registers the one given as it is: a breaker that is not redeye-backed (or that
 * another factory built) shares nothing through this registry's store, and is not closed by {@link #close()}.
 *
 * <p>The registry owns the factory: hand it one of its own (breakers the factory built for other callers would
 * be invisible here), and {@link #close()} closes it, and with it the store unless the factory was built with
 * {@code closeStore(false)}. Thread-safe.
 */
public final class RedeyeCircuitBreakerRegistry extends AbstractRegistry<CircuitBreaker, CircuitBreakerConfig>
        implements CircuitBreakerRegistry, AutoCloseable {
    private final Resilience4jBreakers breakers;

    private RedeyeCircuitBreakerRegistry(Builder b) {
        super(b.defaultConfig != null ? b.defaultConfig : b.breakers.defaultConfig(), b.consumers, b.tags);
        this.breakers = b.breakers;
        this.configurations.putAll(b.configs);
    }

    /** A registry over {@code breakers} with its default config and no other configuration, tag or consumer. */
    public static RedeyeCircuitBreakerRegistry of(Resilience4jBreakers breakers) {
        return builder(breakers).build();
    }

    /** A builder of a registry over {@code breakers}, which the registry will own and close. */
    public static Builder builder(Resilience4jBreakers breakers) {
        return new Builder(breakers);
    }

    /** The factory the breakers are built with. */
    public Resilience4jBreakers breakers() {
        return breakers;
    }

    /** Every breaker registered, in no particular order. */
    @Override
    public Set<CircuitBreaker> getAllCircuitBreakers() {
        return new HashSet<>(entryMap.values());
    }

    /** The breaker named {@code name}, built with the default configuration if absent. */
    @Override
    public CircuitBreaker circuitBreaker(String name) {
        return circuitBreaker(name, getDefaultConfig(), Map.of());
    }

    /** The breaker named {@code name}, built with the default configuration and {@code tags} if absent. */
    @Override
    public CircuitBreaker circuitBreaker(String name, Map<String, String> tags) {
        return circuitBreaker(name, getDefaultConfig(), tags);
    }

    /** The breaker named {@code name}, built with {@code config} if absent. */
    @Override
    public CircuitBreaker circuitBreaker(String name, CircuitBreakerConfig config) {
        return circuitBreaker(name, config, Map.of());
    }

    /** The breaker named {@code name}, built with {@code config} and {@code tags} if absent. */
    @Override
    public CircuitBreaker circuitBreaker(String name, CircuitBreakerConfig config, Map<String, String> tags) {
        Objects.requireNonNull(config, CONFIG_MUST_NOT_BE_NULL);
        return build(name, () -> config, tags);
    }

    /**
     * The breaker named {@code name}, built with the configuration named {@code configName} if absent.
     *
     * @throws ConfigurationNotFoundException if the breaker is absent and no such configuration was added
     */
    @Override
    public CircuitBreaker circuitBreaker(String name, String configName) {
        return circuitBreaker(name, configName, Map.of());
    }

    /**
     * The breaker named {@code name}, built with the configuration named {@code configName} and {@code tags} if
     * absent.
     *
     * @throws ConfigurationNotFoundException if the breaker is absent and no such configuration was added
     */
    @Override
    public CircuitBreaker circuitBreaker(String name, String configName, Map<String, String> tags) {
        return build(name, () -> getConfiguration(configName)
                .orElseThrow(() -> new ConfigurationNotFoundException(configName)), tags);
    }

    /** The breaker named {@code name}, built with the supplied config if absent (the supplier is called then). */
    @Override
    public CircuitBreaker circuitBreaker(String name, Supplier<CircuitBreakerConfig> configSupplier) {
        return circuitBreaker(name, configSupplier, Map.of());
    }

    /** The breaker named {@code name}, built with the supplied config and {@code tags} if absent. */
    @Override
    public CircuitBreaker circuitBreaker(String name, Supplier<CircuitBreakerConfig> configSupplier,
            Map<String, String> tags) {
        Objects.requireNonNull(configSupplier, SUPPLIER_MUST_NOT_BE_NULL);
        return build(name, () -> Objects.requireNonNull(configSupplier.get(), CONFIG_MUST_NOT_BE_NULL), tags);
    }

    private CircuitBreaker build(String name, Supplier<CircuitBreakerConfig> config, Map<String, String> tags) {
        Objects.requireNonNull(tags, TAGS_MUST_NOT_BE_NULL);
        return computeIfAbsent(name, () -> breakers.circuitBreaker(name, config.get(), getAllTags(tags)));
    }

    /**
     * Removes the breaker named {@code name} from this registry and closes this instance's redeye breaker for it
     * (publishing {@link io.github.resilience4j.core.registry.EntryRemovedEvent}). The fleet's state in the
     * store is not deleted: other instances go on with it, and a later {@code circuitBreaker(name, ...)} here
     * builds a new breaker over it.
     */
    @Override
    public Optional<CircuitBreaker> remove(String name) {
        breakers.remove(name); // first: a concurrent circuitBreaker(name) then finds the entry, never the closed one
        return super.remove(name);
    }

    /**
     * Registers {@code newEntry} under {@code name} in place of the breaker there (if none, nothing happens and
     * the answer is empty), closing this instance's redeye breaker for the name, never the fleet's state, and
     * publishing {@link io.github.resilience4j.core.registry.EntryReplacedEvent}. {@code newEntry} is kept as
     * given: its state is shared only if it is itself a breaker over the fleet's store.
     */
    @Override
    public Optional<CircuitBreaker> replace(String name, CircuitBreaker newEntry) {
        Objects.requireNonNull(newEntry, "newEntry");
        Optional<CircuitBreaker> replaced = super.replace(name, newEntry);
        replaced.filter(old -> old != newEntry)
                .ifPresent(old -> breakers.find(name).filter(ours -> ours == old)
                        .ifPresent(ours -> breakers.remove(name)));
        return replaced;
    }

    /** Closes the factory: every redeye breaker it built, then its store unless built with closeStore(false). */
    @Override
    public void close() {
        breakers.close();
    }

    @Override
    public String toString() {
        return "RedeyeCircuitBreakerRegistry" + configurations.keySet();
    }

    /** Builder of {@link RedeyeCircuitBreakerRegistry}, after Resilience4j's registry builder. Not thread-safe. */
    public static final class Builder {
        private final Resilience4jBreakers breakers;
        private CircuitBreakerConfig defaultConfig;
        private final Map<String, CircuitBreakerConfig> configs = new HashMap<>();
        private final List<RegistryEventConsumer<CircuitBreaker>> consumers = new ArrayList<>();
        private Map<String, String> tags = Map.of();

        private Builder(Resilience4jBreakers breakers) {
            this.breakers = Objects.requireNonNull(breakers, "breakers");
        }

        /** The default configuration; when not set, the factory's default config. */
        public Builder withCircuitBreakerConfig(CircuitBreakerConfig config) {
            defaultConfig = Objects.requireNonNull(config, CONFIG_MUST_NOT_BE_NULL);
            return this;
        }

        /**
         * A named configuration ({@code circuitBreaker(name, configName)}).
         *
         * @throws IllegalArgumentException for {@code "default"}: set it with {@link #withCircuitBreakerConfig}
         */
        public Builder addCircuitBreakerConfig(String configName, CircuitBreakerConfig config) {
            if (DEFAULT_CONFIG.equals(Objects.requireNonNull(configName, "configName"))) {
                throw new IllegalArgumentException("'default' is the default configuration's name: set it with "
                        + "withCircuitBreakerConfig");
            }
            configs.put(configName, Objects.requireNonNull(config, CONFIG_MUST_NOT_BE_NULL));
            return this;
        }

        /**
         * Every configuration of {@code named}; an entry {@code "default"} becomes the default configuration, as
         * in Resilience4j's {@code CircuitBreakerRegistry.of(Map, ...)}.
         */
        public Builder withConfigurations(Map<String, CircuitBreakerConfig> named) {
            named.forEach((name, config) -> {
                if (DEFAULT_CONFIG.equals(name)) {
                    withCircuitBreakerConfig(config);
                } else {
                    addCircuitBreakerConfig(name, config);
                }
            });
            return this;
        }

        /** A consumer of the registry's entry added / removed / replaced events. */
        public Builder addRegistryEventConsumer(RegistryEventConsumer<CircuitBreaker> consumer) {
            consumers.add(Objects.requireNonNull(consumer, CONSUMER_MUST_NOT_BE_NULL));
            return this;
        }

        /** The registry's tags, which every breaker it builds answers (above the factory's). */
        public Builder withTags(Map<String, String> v) {
            tags = Map.copyOf(Objects.requireNonNull(v, TAGS_MUST_NOT_BE_NULL));
            return this;
        }

        /** The registry. */
        public RedeyeCircuitBreakerRegistry build() {
            return new RedeyeCircuitBreakerRegistry(this);
        }
    }
}

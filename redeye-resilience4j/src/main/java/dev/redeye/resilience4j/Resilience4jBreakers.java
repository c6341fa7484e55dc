package dev.redeye.resilience4j;

import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds Resilience4j {@link CircuitBreaker}s over redeye, one per name, each from a Resilience4j
 * {@link CircuitBreakerConfig}: a redeye breaker of its own (redeye's policy is per breaker) whose one operation
 * is the Resilience4j name, over the shared {@link Store} when one is given (every instance of the fleet that
 * builds the same name shares its state), else in local mode.
 *
 * <pre>{@code
 * Resilience4jBreakers breakers = Resilience4jBreakers.builder()
 *         .store(Stores.open("redis://127.0.0.1:6379?prefix=myapp:"))   // omit for local mode
 *         .redeyeOptions(b -> b.localCache())                           // redeye-only options, optional
 *         .build();
 * CircuitBreaker backend = breakers.circuitBreaker("backend", CircuitBreakerConfig.custom()
 *         .failureRateThreshold(50).slidingWindowSize(20).minimumNumberOfCalls(10)
 *         .waitDurationInOpenState(Duration.ofSeconds(30)).build());
 * String answer = backend.executeSupplier(client::call);            // Resilience4j's API, unchanged
 * }</pre>
 *
 * <p>The mapping of each option, and the options refused (an {@link IllegalArgumentException} when the breaker
 * is built, naming the option and why), are in the module README; see also {@link RedeyeBackedCircuitBreaker}.
 *
 * <p>Not to be confused with the Spring Boot starter's {@code RedeyeCircuitBreakers}, which holds redeye's own
 * breakers by name.
 *
 * <p>Over a store, building a breaker reads its stored state once, so that {@code getState()} follows the
 * fleet's state from the start, before this instance calls it. Like Resilience4j's registry, asking again for a
 * name returns the breaker built the first time, whatever config is passed. Thread-safe. {@link #close()} closes every redeye breaker and then the store.
 */
public final class Resilience4jBreakers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Resilience4jBreakers.class);

    private final Store store;
    private final boolean closeStore;
    private final Consumer<CircuitBreakerBuilder> redeyeOptions;
    private final CircuitBreakerConfig defaultConfig;
    private final Map<String, String> tags;
    private final ConcurrentHashMap<String, RedeyeBackedCircuitBreaker> breakers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private Resilience4jBreakers(Builder b) {
        this.store = b.store;
        this.closeStore = b.closeStore;
        this.redeyeOptions = b.redeyeOptions;
        this.defaultConfig = b.defaultConfig;
        this.tags = Map.copyOf(b.tags);
    }

    /** A builder: local mode, Resilience4j's default config, no redeye options. */
    public static Builder builder() {
        return new Builder();
    }

    /** Local mode with Resilience4j's default config: each breaker's state lives in this process only. */
    public static Resilience4jBreakers local() {
        return builder().build();
    }

    /** The breaker named {@code name}, built with the default config the first time it is asked for. */
    public RedeyeBackedCircuitBreaker circuitBreaker(String name) {
        return circuitBreaker(name, defaultConfig);
    }

    /**
     * The breaker named {@code name}: built from {@code config} the first time, the same instance afterwards.
     *
     * @throws IllegalArgumentException if the name is not a valid redeye operation name, or an option of
     *                                  {@code config} cannot be honoured (the message names it and says why)
     * @throws IllegalStateException    if this factory is closed
     */
    public RedeyeBackedCircuitBreaker circuitBreaker(String name, CircuitBreakerConfig config) {
        return circuitBreaker(name, config, Map.of());
    }

    /**
     * The breaker named {@code name}: built from {@code config} the first time, answering the factory's tags and
     * {@code tags} (which win on a shared key) in {@code getTags()}; the same instance afterwards, whatever config
     * and tags are passed.
     *
     * @throws IllegalArgumentException if the name is not a valid redeye operation name, or an option of
     *                                  {@code config} cannot be honoured (the message names it and says why)
     * @throws IllegalStateException    if this factory is closed
     */
    public RedeyeBackedCircuitBreaker circuitBreaker(String name, CircuitBreakerConfig config,
            Map<String, String> tags) {
        OperationNames.requireValid(Objects.requireNonNull(name, "name"));
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(tags, "tags");
        RedeyeBackedCircuitBreaker existing = breakers.get(name);
        if (existing != null) {
            return existing;
        }
        synchronized (breakers) { // one build per name, and none after close()
            if (closed) {
                throw new IllegalStateException("Resilience4jBreakers is closed");
            }
            return breakers.computeIfAbsent(name, n -> build(n, config, tags));
        }
    }

    private RedeyeBackedCircuitBreaker build(String name, CircuitBreakerConfig config, Map<String, String> own) {
        CircuitBreakerBuilder b = dev.redeye.CircuitBreaker.builder();
        redeyeOptions.accept(b); // first: the mapped options below win over anything set here
        BreakerMode mode = ConfigMapping.apply(name, config, b);
        if (store != null) {
            b.store(store).closeStore(false); // one store for every name; closed by close()
        }
        dev.redeye.CircuitBreaker breaker;
        try {
            breaker = b.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("circuit breaker '" + name + "': the options mapped from its "
                    + "Resilience4j config cannot be honoured by redeye: " + e.getMessage(), e);
        }
        Map<String, String> allTags = new HashMap<>(tags);
        allTags.putAll(own);
        RedeyeBackedCircuitBreaker adapter = new RedeyeBackedCircuitBreaker(name, config, breaker, mode, allTags);
        if (store != null) {
            holdFromTheStart(name, breaker);
        }
        return adapter;
    }

    /**
     * Reads the stored state once, after the adapter registered its observer: redeye keeps a local view (what
     * {@code getState()} and the gauges read) and follows the feed only for an operation it holds, and an
     * instance that has not called the breaker yet would otherwise report CLOSED while the fleet's is open. A
     * store that fails here costs nothing more: the breaker learns the state on its first call.
     */
    private static void holdFromTheStart(String name, dev.redeye.CircuitBreaker breaker) {
        try {
            breaker.state(name);
        } catch (StoreException e) {
            LOG.debug("circuit breaker '{}': the stored state could not be read at build ({}); it is read on the "
                    + "first call", name, e.getMessage());
        }
    }

    /**
     * Forgets the breaker named {@code name} and closes its redeye breaker: this instance's breaker only. The
     * state in the shared store is not deleted (the rest of the fleet goes on with it), and asking for the name
     * again builds a new breaker over that same state.
     *
     * @return the breaker removed, if there was one
     */
    public Optional<RedeyeBackedCircuitBreaker> remove(String name) {
        RedeyeBackedCircuitBreaker removed;
        synchronized (breakers) {
            removed = breakers.remove(Objects.requireNonNull(name, "name"));
        }
        if (removed != null) {
            removed.redeye().close();
        }
        return Optional.ofNullable(removed);
    }

    /** The config {@link #circuitBreaker(String)} builds with. */
    public CircuitBreakerConfig defaultConfig() {
        return defaultConfig;
    }

    /** The tags every breaker of this factory answers in {@code getTags()}. */
    public Map<String, String> tags() {
        return tags;
    }

    /** The breaker named {@code name}, if built. */
    public Optional<RedeyeBackedCircuitBreaker> find(String name) {
        return Optional.ofNullable(breakers.get(name));
    }

    /** Every breaker built so far. */
    public List<RedeyeBackedCircuitBreaker> all() {
        return new ArrayList<>(breakers.values());
    }

    /** Closes every redeye breaker, then the store (unless {@code closeStore(false)}). Idempotent. */
    @Override
    public void close() {
        synchronized (breakers) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (RedeyeBackedCircuitBreaker b : breakers.values()) {
            b.redeye().close();
        }
        if (store != null && closeStore) {
            store.close();
        }
    }

    /** Builder of {@link Resilience4jBreakers}. Not thread-safe. */
    public static final class Builder {
        private Store store;
        private boolean closeStore = true;
        private Consumer<CircuitBreakerBuilder> redeyeOptions = b -> { };
        private CircuitBreakerConfig defaultConfig = CircuitBreakerConfig.ofDefaults();
        private Map<String, String> tags = Map.of();

        private Builder() {
        }

        /** The shared store (distributed mode); default none: local mode. */
        public Builder store(Store v) {
            store = Objects.requireNonNull(v, "store");
            return this;
        }

        /** Whether {@link Resilience4jBreakers#close()} closes the store; default true. */
        public Builder closeStore(boolean v) {
            closeStore = v;
            return this;
        }

        /**
         * redeye options for every breaker built (storeErrorPolicy, localCache, clock, ticker, listeners, ...),
         * applied to each redeye builder before the options mapped from the Resilience4j config, which win: set
         * the trip rules in the Resilience4j config, not here.
         */
        public Builder redeyeOptions(Consumer<CircuitBreakerBuilder> v) {
            redeyeOptions = Objects.requireNonNull(v, "redeyeOptions");
            return this;
        }

        /** The config of {@link Resilience4jBreakers#circuitBreaker(String)}; default Resilience4j's defaults. */
        public Builder defaultConfig(CircuitBreakerConfig v) {
            defaultConfig = Objects.requireNonNull(v, "defaultConfig");
            return this;
        }

        /** Tags every breaker answers in {@code getTags()}; default none. */
        public Builder tags(Map<String, String> v) {
            tags = Map.copyOf(v);
            return this;
        }

        /** The factory; breakers are built when first asked for. */
        public Resilience4jBreakers build() {
            return new Resilience4jBreakers(this);
        }
    }
}

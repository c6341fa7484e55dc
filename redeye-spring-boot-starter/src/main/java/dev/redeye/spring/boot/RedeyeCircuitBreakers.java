package dev.redeye.spring.boot;

import dev.redeye.CircuitBreaker;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The breakers of an application by name: {@value #DEFAULT} and one per {@code redeye.breakers.<name>}. The
 * auto-configuration builds it as a bean and also registers each breaker as a {@link CircuitBreaker} bean
 * (the default one primary); this registry is for code that picks a breaker by a name it holds at run time,
 * and for the Actuator endpoint and health indicator.
 *
 * <p>It owns its breakers: {@link #close()} (called by Spring at shutdown) closes each of them once. The
 * breakers are built with {@code closeStore(false)}: the store is a bean of its own, closed once by Spring
 * after every breaker.
 *
 * <p>Immutable after construction and thread-safe; lookups are one hash-map read.
 */
public final class RedeyeCircuitBreakers implements AutoCloseable {
    /** The name of the default breaker. */
    public static final String DEFAULT = "default";

    private static final Logger LOG = LoggerFactory.getLogger(RedeyeCircuitBreakers.class);

    private final Map<String, CircuitBreaker> breakers;
    private final String storeDescription;

    /**
     * A registry of {@code breakers}, which must include {@value #DEFAULT}.
     *
     * @param breakers         the breakers by name, in the order to list them
     * @param storeDescription what the breakers share, for people (never a password): a redacted URI, a
     *                         client bean's name, or "none (local mode)"
     * @throws IllegalArgumentException if there is no {@value #DEFAULT} breaker
     */
    public RedeyeCircuitBreakers(Map<String, CircuitBreaker> breakers, String storeDescription) {
        Map<String, CircuitBreaker> copy = new LinkedHashMap<>(breakers);
        if (!copy.containsKey(DEFAULT)) {
            throw new IllegalArgumentException("a '" + DEFAULT + "' breaker is required, got " + copy.keySet());
        }
        this.breakers = Collections.unmodifiableMap(copy);
        this.storeDescription = Objects.requireNonNull(storeDescription, "storeDescription");
    }

    /** The default breaker (built from {@code redeye.defaults.*} and {@code redeye.breakers.default.*}). */
    public CircuitBreaker getDefault() {
        return breakers.get(DEFAULT);
    }

    /**
     * The breaker named {@code name}.
     *
     * @throws NoSuchElementException naming the breakers there are, if none has that name
     */
    public CircuitBreaker get(String name) {
        CircuitBreaker b = breakers.get(name);
        if (b == null) {
            throw new NoSuchElementException("no redeye breaker named '" + name + "'; configured: " + names()
                    + " (add redeye.breakers." + name + ".* properties)");
        }
        return b;
    }

    /** The breaker named {@code name}, if there is one. */
    public Optional<CircuitBreaker> find(String name) {
        return Optional.ofNullable(breakers.get(name));
    }

    /** The names of every breaker, {@value #DEFAULT} first. */
    public Set<String> names() {
        return breakers.keySet();
    }

    /** Every breaker by name, {@value #DEFAULT} first; unmodifiable. */
    public Map<String, CircuitBreaker> asMap() {
        return breakers;
    }

    /** What the breakers share (see the constructor); never contains a password. */
    public String storeDescription() {
        return storeDescription;
    }

    /** Closes every breaker (not the store). Idempotent; a breaker that fails to close is logged. */
    @Override
    public void close() {
        for (Map.Entry<String, CircuitBreaker> e : breakers.entrySet()) {
            try {
                e.getValue().close();
            } catch (RuntimeException ex) {
                LOG.warn("closing redeye breaker '{}' failed", e.getKey(), ex);
            }
        }
    }

    @Override
    public String toString() {
        return "RedeyeCircuitBreakers" + names() + " over " + storeDescription;
    }
}

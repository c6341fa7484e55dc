package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.Store;
import dev.redeye.spring.boot.BreakerProperties;
import dev.redeye.spring.boot.RedeyeBreakerCustomizer;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;

/**
 * Builds one breaker from {@code redeye.defaults.*} and {@code redeye.breakers.<name>.*}: each option comes
 * from the named breaker if set there, else from the defaults, else stays the engine's default. The engine
 * validates (one set of rules, in {@code CircuitBreakerConfig}); this class only translates the builder
 * option its {@link IllegalArgumentException} names back into the property that set it.
 */
final class BreakerFactory {
    private static final String DEFAULTS = "redeye.defaults.";

    /** One builder option: its name in the engine's messages, its property, how to read and apply it. */
    private record Option<T>(String builderName, String property, Function<BreakerProperties, T> get,
            BiConsumer<CircuitBreakerBuilder, T> set) {
    }

    private static final List<Option<?>> OPTIONS = List.of(
            new Option<>("strategy", "strategy", BreakerProperties::getStrategy, CircuitBreakerBuilder::strategy),
            new Option<>("failureThreshold", "failure-threshold", BreakerProperties::getFailureThreshold,
                    CircuitBreakerBuilder::failureThreshold),
            new Option<>("errorRateThreshold", "error-rate-threshold", BreakerProperties::getErrorRateThreshold,
                    CircuitBreakerBuilder::errorRateThreshold),
            new Option<>("minimumCalls", "minimum-calls", BreakerProperties::getMinimumCalls,
                    CircuitBreakerBuilder::minimumCalls),
            new Option<>("errorRateDecay", "error-rate-decay", BreakerProperties::getErrorRateDecay,
                    CircuitBreakerBuilder::errorRateDecay),
            new Option<>("resetTimeout", "reset-timeout", BreakerProperties::getResetTimeout,
                    CircuitBreakerBuilder::resetTimeout),
            new Option<>("backoffMultiplier", "backoff-multiplier", BreakerProperties::getBackoffMultiplier,
                    CircuitBreakerBuilder::backoffMultiplier),
            new Option<>("maxResetTimeout", "max-reset-timeout", BreakerProperties::getMaxResetTimeout,
                    CircuitBreakerBuilder::maxResetTimeout),
            new Option<>("jitter", "jitter", BreakerProperties::getJitter, CircuitBreakerBuilder::jitter),
            new Option<>("successThreshold", "success-threshold", BreakerProperties::getSuccessThreshold,
                    CircuitBreakerBuilder::successThreshold),
            new Option<>("halfOpenPermits", "half-open-permits", BreakerProperties::getHalfOpenPermits,
                    CircuitBreakerBuilder::halfOpenPermits),
            new Option<>("trialTimeout", "trial-timeout", BreakerProperties::getTrialTimeout,
                    CircuitBreakerBuilder::trialTimeout),
            new Option<>("maxGapBetweenFailures", "max-gap-between-failures",
                    BreakerProperties::getMaxGapBetweenFailures, CircuitBreakerBuilder::maxGapBetweenFailures),
            new Option<>("callTimeout", "call-timeout", BreakerProperties::getCallTimeout,
                    CircuitBreakerBuilder::callTimeout),
            new Option<>("storeErrorPolicy", "store-error-policy", BreakerProperties::getStoreErrorPolicy,
                    CircuitBreakerBuilder::storeErrorPolicy),
            new Option<>("openCacheRefresh", "open-cache-refresh", BreakerProperties::getOpenCacheRefresh,
                    CircuitBreakerBuilder::openCacheRefresh),
            new Option<>("maxOperations", "max-operations", BreakerProperties::getMaxOperations,
                    CircuitBreakerBuilder::maxOperations),
            new Option<>("writableStackTraces", "writable-stack-traces", BreakerProperties::getWritableStackTraces,
                    CircuitBreakerBuilder::writableStackTraces));

    /** The engine's name for the local cache's option in its messages. */
    private static final String STALE_TOLERANCE = "localCache staleTolerance";

    /** The property that set a builder option, and the value bound from it. */
    private record Source(String property, Object value) {
    }

    private final BreakerProperties defaults;
    private final Map<String, BreakerProperties> named;
    private final Store store;
    private final List<RedeyeBreakerCustomizer> customizers;
    private final Environment environment;

    BreakerFactory(BreakerProperties defaults, Map<String, BreakerProperties> named, Store store,
            List<RedeyeBreakerCustomizer> customizers, Environment environment) {
        this.defaults = defaults;
        this.named = named;
        this.store = store;
        this.customizers = customizers;
        this.environment = environment;
    }

    /**
     * Builds the breaker {@code name} (over the store, if any, with {@code closeStore(false)}).
     *
     * @throws InvalidConfigurationPropertyValueException naming the property whose value the engine rejected
     * @throws IllegalArgumentException                   if a customizer set the rejected value
     */
    CircuitBreaker build(String name) {
        BreakerProperties own = named.get(name);
        String ownPrefix = "redeye.breakers." + name + ".";
        CircuitBreakerBuilder b = CircuitBreaker.builder();
        Map<String, Source> sources = new HashMap<>(); // builder option -> the property that set it
        for (Option<?> o : OPTIONS) {
            apply(o, b, own, ownPrefix, sources);
        }
        Boolean cacheOn = pick(own, defaults, p -> p.getLocalCache().getEnabled());
        Duration tolerance = pick(own, defaults, p -> p.getLocalCache().getStaleTolerance());
        if (Boolean.TRUE.equals(cacheOn)) {
            if (tolerance != null) {
                b.localCache(tolerance);
                boolean ownValue = own != null && own.getLocalCache().getStaleTolerance() != null;
                sources.put(STALE_TOLERANCE, new Source((ownValue ? ownPrefix : DEFAULTS)
                        + "local-cache.stale-tolerance", tolerance));
            } else {
                b.localCache();
            }
        }
        Predicate<Throwable> recorded = recordFailure(pick(own, defaults, BreakerProperties::getRecordExceptions),
                pick(own, defaults, BreakerProperties::getIgnoreExceptions));
        if (recorded != null) {
            b.recordFailure(recorded);
        }
        if (store != null) {
            b.store(store).closeStore(false);
        }
        for (RedeyeBreakerCustomizer c : customizers) {
            c.customize(name, b);
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw translate(name, e, sources);
        }
    }

    private <T> void apply(Option<T> o, CircuitBreakerBuilder b, BreakerProperties own, String ownPrefix,
            Map<String, Source> sources) {
        T v = own == null ? null : o.get().apply(own);
        String property = ownPrefix + o.property();
        if (v == null) {
            v = o.get().apply(defaults);
            property = DEFAULTS + o.property();
        }
        if (v != null) {
            o.set().accept(b, v);
            sources.put(o.builderName(), new Source(property, v));
        }
    }

    private <T> T pick(BreakerProperties own, BreakerProperties defaults, Function<BreakerProperties, T> get) {
        T v = own == null ? null : get.apply(own);
        return v != null ? v : get.apply(defaults);
    }

    /** Resilience4j's semantics: ignored classes never count; if record classes are given, only they count. */
    private static Predicate<Throwable> recordFailure(List<Class<? extends Throwable>> record,
            List<Class<? extends Throwable>> ignore) {
        if ((record == null || record.isEmpty()) && (ignore == null || ignore.isEmpty())) {
            return null;
        }
        List<Class<? extends Throwable>> rec = record == null ? List.of() : List.copyOf(record);
        List<Class<? extends Throwable>> ign = ignore == null ? List.of() : List.copyOf(ignore);
        return t -> {
            for (Class<? extends Throwable> c : ign) {
                if (c.isInstance(t)) {
                    return false;
                }
            }
            if (rec.isEmpty()) {
                return true;
            }
            for (Class<? extends Throwable> c : rec) {
                if (c.isInstance(t)) {
                    return true;
                }
            }
            return false;
        };
    }

    /**
     * The engine's message starts with the option it rejects ("failureThreshold must be >= 1, was 0"): find
     * that option (the longest name that matches), and the property that set it.
     */
    private RuntimeException translate(String name, IllegalArgumentException e, Map<String, Source> sources) {
        String message = String.valueOf(e.getMessage());
        String option = null;
        for (String candidate : sources.keySet()) {
            if (message.startsWith(candidate + " ") && (option == null || candidate.length() > option.length())) {
                option = candidate;
            }
        }
        if (option == null) {
            return new IllegalArgumentException("redeye breaker '" + name + "': " + message
                    + (customizers.isEmpty() ? "" : " (a value set by a RedeyeBreakerCustomizer?)"), e);
        }
        Source source = sources.get(option);
        String raw = environment.getProperty(source.property()); // as the user wrote it ("0s", not "PT0S")
        // the exception takes no cause (Spring Boot's constructor fixes it to none); the reason carries the message
        return new InvalidConfigurationPropertyValueException(source.property(), raw != null ? raw : source.value(),
                message.substring(option.length()).trim());
    }

    /** Every breaker: the default one first, then each configured name. */
    List<String> names() {
        List<String> out = new ArrayList<>();
        out.add(RedeyeCircuitBreakers.DEFAULT);
        out.addAll(RedeyeAutoConfiguration.configuredNames(named));
        return out;
    }
}

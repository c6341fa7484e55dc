package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.spi.Store;
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
 * validates (each option's one check, in its builder's setter); this class only translates the option its
 * {@link InvalidOptionException} names ({@link InvalidOptionException#option()}) back into the property that
 * set it.
 */
final class BreakerFactory {
    private static final String DEFAULTS = "redeye.defaults.";

    /** One builder option: its name ({@link InvalidOptionException#option()}), its property, how to read and set it. */
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
            new Option<>("recordBatching", "record-batching", BreakerProperties::getRecordBatching,
                    CircuitBreakerBuilder::recordBatching),
            new Option<>("writableStackTraces", "writable-stack-traces", BreakerProperties::getWritableStackTraces,
                    CircuitBreakerBuilder::writableStackTraces),
            new Option<>("failureRateThreshold", "failure-rate-threshold", BreakerProperties::getFailureRateThreshold,
                    CircuitBreakerBuilder::failureRateThreshold),
            new Option<>("minimumNumberOfCalls", "minimum-number-of-calls",
                    BreakerProperties::getMinimumNumberOfCalls, CircuitBreakerBuilder::minimumNumberOfCalls),
            new Option<>("slowCallRateThreshold", "slow-call-rate-threshold",
                    BreakerProperties::getSlowCallRateThreshold, CircuitBreakerBuilder::slowCallRateThreshold),
            new Option<>("slowCallDurationThreshold", "slow-call-duration-threshold",
                    BreakerProperties::getSlowCallDurationThreshold, CircuitBreakerBuilder::slowCallDurationThreshold),
            new Option<>("mode", "mode", BreakerProperties::getMode, CircuitBreakerBuilder::mode),
            new Option<>("quorum", "quorum", BreakerProperties::getQuorum, CircuitBreakerBuilder::quorum),
            new Option<>("quorumFraction", "quorum-fraction", BreakerProperties::getQuorumFraction,
                    CircuitBreakerBuilder::quorumFraction),
            new Option<>("instanceId", "instance-id", BreakerProperties::getInstanceId,
                    CircuitBreakerBuilder::instanceId),
            new Option<>("outlierPolicy", "outlier-policy", BreakerProperties::getOutlierPolicy,
                    CircuitBreakerBuilder::outlierPolicy));

    /** The engine's name of the local cache's option ({@code localCache(staleTolerance)}). */
    private static final String LOCAL_CACHE = "localCache";

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
        try {
            for (Option<?> o : OPTIONS) {
                apply(o, b, own, ownPrefix, sources);
            }
            slidingWindow(b, own, ownPrefix, sources);
            Boolean cacheOn = pick(own, defaults, p -> p.getLocalCache().getEnabled());
            Duration tolerance = pick(own, defaults, p -> p.getLocalCache().getStaleTolerance());
            if (Boolean.TRUE.equals(cacheOn)) {
                if (tolerance != null) {
                    boolean ownValue = own != null && own.getLocalCache().getStaleTolerance() != null;
                    sources.put(LOCAL_CACHE, new Source((ownValue ? ownPrefix : DEFAULTS)
                            + "local-cache.stale-tolerance", tolerance));
                    b.localCache(tolerance);
                } else {
                    b.localCache();
                }
            }
        } catch (InvalidOptionException e) { // a property's value, refused by the option's setter
            throw translate(name, e, sources);
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
            try {
                c.customize(name, b);
            } catch (InvalidOptionException e) {
                throw new IllegalArgumentException("redeye breaker '" + name + "': " + e.getMessage()
                        + " (set by the RedeyeBreakerCustomizer " + c + ")", e);
            }
        }
        try {
            return b.build();
        } catch (InvalidOptionException e) { // a rule between two options (maxResetTimeout >= resetTimeout)
            throw translate(name, e, sources);
        }
    }

    /** Applies one option's property, recording first which property set it (the setter may refuse it). */
    private <T> void apply(Option<T> o, CircuitBreakerBuilder b, BreakerProperties own, String ownPrefix,
            Map<String, Source> sources) {
        T v = own == null ? null : o.get().apply(own);
        String property = ownPrefix + o.property();
        if (v == null) {
            v = o.get().apply(defaults);
            property = DEFAULTS + o.property();
        }
        if (v != null) {
            sources.put(o.builderName(), new Source(property, v));
            o.set().accept(b, v);
        }
    }

    /**
     * The window's two properties set one builder option ({@code slidingWindow(type, size)}); either one selects
     * the sliding-window strategy, the other keeping its default.
     */
    private void slidingWindow(CircuitBreakerBuilder b, BreakerProperties own, String ownPrefix,
            Map<String, Source> sources) {
        SlidingWindowType type = pick(own, defaults, BreakerProperties::getSlidingWindowType);
        Integer size = pick(own, defaults, BreakerProperties::getSlidingWindowSize);
        if (type == null && size == null) {
            return;
        }
        if (size != null) {
            boolean ownValue = own != null && own.getSlidingWindowSize() != null;
            sources.put(Policy.SLIDING_WINDOW_SIZE.name(), new Source((ownValue ? ownPrefix : DEFAULTS)
                    + "sliding-window-size", size));
        }
        b.slidingWindow(type != null ? type : Policy.SLIDING_WINDOW_TYPE.defaultValue(),
                size != null ? size : Policy.SLIDING_WINDOW_SIZE.defaultValue());
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

    /** The property that set the option {@code e} names, or, when no property set it, the engine's exception. */
    private RuntimeException translate(String name, InvalidOptionException e, Map<String, Source> sources) {
        Source source = sources.get(e.option());
        if (source == null) {
            return new IllegalArgumentException("redeye breaker '" + name + "': " + e.getMessage()
                    + (customizers.isEmpty() ? "" : " (a value set by a RedeyeBreakerCustomizer?)"), e);
        }
        String raw = environment.getProperty(source.property()); // as the user wrote it ("0s", not "PT0S")
        // the exception takes no cause (Spring Boot's constructor fixes it to none); the reason carries the message
        return new InvalidConfigurationPropertyValueException(source.property(), raw != null ? raw : source.value(),
                e.reason());
    }

    /** Every breaker: the default one first, then each configured name. */
    List<String> names() {
        List<String> out = new ArrayList<>();
        out.add(RedeyeCircuitBreakers.DEFAULT);
        out.addAll(RedeyeAutoConfiguration.configuredNames(named));
        return out;
    }
}

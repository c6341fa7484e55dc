package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Policy;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every invalid option fails in its setter with an {@link InvalidOptionException} whose {@code option()} is the
 * option's name and whose message has the bad value; a rule between two options fails at {@code build()}.
 */
class BuilderValidationTest {

    static Stream<Arguments> invalid() {
        return Stream.of(
                bad("failureThreshold", "0", b -> b.failureThreshold(0)),
                bad("failureThreshold", "-3", b -> b.failureThreshold(-3)),
                bad("errorRateThreshold", "0.0", b -> b.errorRateThreshold(0)),
                bad("errorRateThreshold", "1.5", b -> b.errorRateThreshold(1.5)),
                bad("errorRateThreshold", "NaN", b -> b.errorRateThreshold(Double.NaN)),
                bad("minimumCalls", "0", b -> b.minimumCalls(0)),
                bad("errorRateDecay", "0.0", b -> b.errorRateDecay(0)),
                bad("errorRateDecay", "1.0", b -> b.errorRateDecay(1)),
                bad("resetTimeout", "PT0S", b -> b.resetTimeout(Duration.ZERO)),
                bad("resetTimeout", "PT-1S", b -> b.resetTimeout(Duration.ofSeconds(-1))),
                bad("resetTimeout", "null", b -> b.resetTimeout(null)),
                bad("backoffMultiplier", "0.5", b -> b.backoffMultiplier(0.5)),
                bad("backoffMultiplier", "Infinity", b -> b.backoffMultiplier(Double.POSITIVE_INFINITY)),
                bad("maxResetTimeout", "PT-1S", b -> b.maxResetTimeout(Duration.ofSeconds(-1))),
                bad("jitter", "1.0", b -> b.jitter(1.0)),
                bad("jitter", "-0.1", b -> b.jitter(-0.1)),
                bad("successThreshold", "0", b -> b.successThreshold(0)),
                bad("halfOpenPermits", "0", b -> b.halfOpenPermits(0)),
                bad("trialTimeout", "PT0S", b -> b.trialTimeout(Duration.ZERO)),
                bad("maxGapBetweenFailures", "PT-0.001S", b -> b.maxGapBetweenFailures(Duration.ofMillis(-1))),
                bad("maxGapBetweenFailures", "PT0S", b -> b.maxGapBetweenFailures(Duration.ZERO)),
                bad("callTimeout", "PT0S", b -> b.callTimeout(Duration.ZERO)),
                bad("callTimeout", "PT0.0000005S", b -> b.callTimeout(Duration.ofNanos(500))),
                bad("openCacheRefresh", "PT-2S", b -> b.openCacheRefresh(Duration.ofSeconds(-2))),
                bad("localCache", "PT0S", b -> b.localCache(Duration.ZERO)),
                bad("localCache", "null", b -> b.localCache(null)),
                bad("maxOperations", "0", b -> b.maxOperations(0)),
                bad("strategy", "null", b -> b.strategy(null)),
                bad("storeErrorPolicy", "null", b -> b.storeErrorPolicy(null)),
                bad("store", "null", b -> b.store(null)),
                bad("clock", "null", b -> b.clock(null)),
                bad("ticker", "null", b -> b.ticker(null)),
                bad("onStateChange", "null", b -> b.onStateChange(null)),
                bad("onStoreError", "null", b -> b.onStoreError(null)),
                bad("recordFailure", "null", b -> b.recordFailure(null)),
                bad("recordResult", "null", b -> b.recordResult(null)),
                bad("fallback", "null", b -> b.fallback(null)),
                bad("onCallRejected", "null", b -> b.onCallRejected(null)),
                bad("onIgnoredError", "null", b -> b.onIgnoredError(null)),
                bad("onFleetStateChange", "null", b -> b.onFleetStateChange(null)),
                bad("errorRateThreshold", "-0.5", b -> b.errorRateThreshold(-0.5)),
                bad("minimumCalls", "-1", b -> b.minimumCalls(-1)),
                bad("backoffMultiplier", "NaN", b -> b.backoffMultiplier(Double.NaN)),
                bad("successThreshold", "-1", b -> b.successThreshold(-1)),
                bad("trialTimeout", "null", b -> b.trialTimeout(null)),
                bad("maxGapBetweenFailures", "null", b -> b.maxGapBetweenFailures(null)),
                bad("maxResetTimeout", "null", b -> b.maxResetTimeout(null)),
                bad("maxResetTimeout", "PT87600H", b -> b.maxResetTimeout(Duration.ofDays(3650))),
                bad("openCacheRefresh", "null", b -> b.openCacheRefresh(null)),
                bad("callTimeout", "null", b -> b.callTimeout(null)));
    }

    private static Arguments bad(String option, String value, Consumer<CircuitBreakerBuilder> setter) {
        return Arguments.of(option, value, setter);
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("invalid")
    void setterNamesTheOptionAndTheBadValue(String option, String value, Consumer<CircuitBreakerBuilder> setter) {
        CircuitBreakerBuilder b = CircuitBreaker.builder();
        InvalidOptionException e = assertThrows(InvalidOptionException.class, () -> setter.accept(b));
        assertEquals(option, e.option(), e.getMessage());
        assertTrue(e.getMessage().startsWith(option + " "), e.getMessage());
        assertEquals(e.getMessage(), option + " " + e.reason());
        if (!value.equals("null")) {
            assertTrue(e.getMessage().contains(value), e.getMessage());
        } else {
            assertTrue(e.getMessage().contains("must not be null"), e.getMessage());
        }
    }

    @Test
    void maxResetTimeoutBelowResetTimeoutFailsAtBuildNamingMaxResetTimeout() {
        CircuitBreakerBuilder b = CircuitBreaker.builder().resetTimeout(Duration.ofSeconds(2))
                .maxResetTimeout(Duration.ofSeconds(1));
        InvalidOptionException e = assertThrows(InvalidOptionException.class, b::build);
        assertEquals("maxResetTimeout", e.option());
        assertTrue(e.getMessage().contains("PT1S") && e.getMessage().contains("PT2S"), e.getMessage());
        // the other order of the setters says the same
        e = assertThrows(InvalidOptionException.class, () -> CircuitBreaker.builder()
                .maxResetTimeout(Duration.ofSeconds(1)).resetTimeout(Duration.ofSeconds(2)).build());
        assertEquals("maxResetTimeout", e.option());
    }

    @Test
    void aRefusedValueLeavesTheBuilderAsItWas() {
        CircuitBreakerBuilder b = CircuitBreaker.builder().failureThreshold(3);
        assertThrows(InvalidOptionException.class, () -> b.failureThreshold(0));
        try (CircuitBreaker cb = b.build()) {
            assertEquals(3, cb.config().failureThreshold());
        }
    }

    @Test
    void unsetOptionsTakeTheirDeclaredDefaults() {
        try (CircuitBreaker cb = CircuitBreaker.builder().build()) {
            CircuitBreakerConfig c = cb.config();
            assertEquals(Policy.defaults(), c.policy());
            assertEquals(Policy.FAILURE_THRESHOLD.defaultValue(), c.failureThreshold());
            assertEquals(Policy.RESET_TIMEOUT.defaultValue(), c.resetTimeout());
            assertEquals(Policy.RESET_TIMEOUT.defaultValue().multipliedBy(8), c.maxResetTimeout());
            assertEquals(CircuitBreakerBuilder.HALF_OPEN_PERMITS.defaultValue(), c.halfOpenPermits());
            assertEquals(CircuitBreakerBuilder.TRIAL_TIMEOUT_CAP, c.trialTimeout());
            assertEquals(CircuitBreakerBuilder.OPEN_CACHE_REFRESH.defaultValue(), c.openCacheRefresh());
            assertEquals(StoreErrorPolicy.ALLOW, c.storeErrorPolicy());
            assertTrue(c.callTimeout().isEmpty() && c.maxGapBetweenFailures().isEmpty()
                    && c.maxOperations().isEmpty() && c.localCacheStaleTolerance().isEmpty());
        }
        try (CircuitBreaker cb = CircuitBreaker.builder().localCache().callTimeout(Duration.ofSeconds(3)).build()) {
            assertEquals(CircuitBreakerBuilder.LOCAL_CACHE.defaultValue(),
                    cb.config().localCacheStaleTolerance().orElseThrow());
            assertEquals(Duration.ofSeconds(3), cb.config().trialTimeout());
        }
    }

    @Test
    void validEdgeValuesBuild() {
        CircuitBreaker b = CircuitBreaker.builder().failureThreshold(1).errorRateThreshold(1.0).minimumCalls(1)
                .errorRateDecay(0.01).resetTimeout(Duration.ofMillis(1)).backoffMultiplier(1.0)
                .maxResetTimeout(Duration.ofMillis(1)).jitter(0.0).successThreshold(1).halfOpenPermits(1)
                .trialTimeout(Duration.ofMillis(1)).maxOperations(1).build();
        assertEquals(Duration.ofMillis(1), b.config().maxResetTimeout());
        assertEquals(1, b.config().policy().failureThreshold());
        b.close();
    }

    @Test
    void hugeDurationsAreRefusedNamingTheOption() {
        InvalidOptionException e = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().resetTimeout(Duration.ofDays(100_000)));
        assertEquals("resetTimeout", e.option());
        e = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().callTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals("callTimeout", e.option());
    }
}

package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Every invalid option fails at build() with an IllegalArgumentException naming the option and the value. */
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
                bad("maxResetTimeout", "PT1S", b -> b.resetTimeout(Duration.ofSeconds(2))
                        .maxResetTimeout(Duration.ofSeconds(1))),
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
                bad("fallback", "null", b -> b.fallback(null)));
    }

    private static Arguments bad(String option, String value, Consumer<CircuitBreaker.Builder> setter) {
        return Arguments.of(option, value, setter);
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("invalid")
    void buildNamesTheOptionAndTheBadValue(String option, String value, Consumer<CircuitBreaker.Builder> setter) {
        CircuitBreaker.Builder b = CircuitBreaker.builder();
        setter.accept(b);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(option), e.getMessage());
        if (!value.equals("null")) {
            assertTrue(e.getMessage().contains(value), e.getMessage());
        } else {
            assertTrue(e.getMessage().contains("must not be null"), e.getMessage());
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
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CircuitBreaker.builder().resetTimeout(Duration.ofDays(100_000)).build());
        assertTrue(e.getMessage().contains("resetTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CircuitBreaker.builder().callTimeout(Duration.ofSeconds(Long.MAX_VALUE)).build());
        assertTrue(e.getMessage().contains("callTimeout"), e.getMessage());
    }
}

package dev.redeye.resilience4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreakerConfig;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.TransitionCheckResult;
import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What each Resilience4j option becomes in redeye, and the options refused at build with the reason. */
class ConfigMappingTest {
    private final Resilience4jBreakers breakers = Resilience4jBreakers.local();

    @AfterEach
    void close() {
        breakers.close();
    }

    private static io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.Builder r4j() {
        return io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.custom();
    }

    private IllegalArgumentException refused(io.github.resilience4j.circuitbreaker.CircuitBreakerConfig c,
            String option) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> breakers.circuitBreaker("refused", c));
        assertTrue(e.getMessage().contains(option), e.getMessage());
        assertTrue(breakers.find("refused").isEmpty(), "nothing is built for a refused config");
        return e;
    }

    @Test
    void everyMappedOptionReachesTheRedeyeBreaker() {
        RedeyeBackedCircuitBreaker cb = breakers.circuitBreaker("mapped", r4j()
                .slidingWindow(30, 12, io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType
                        .TIME_BASED)
                .failureRateThreshold(25)
                .slowCallRateThreshold(60)
                .slowCallDurationThreshold(Duration.ofMillis(750))
                .waitDurationInOpenState(Duration.ofSeconds(7))
                .permittedNumberOfCallsInHalfOpenState(3)
                .build());
        CircuitBreakerConfig c = cb.redeye().config();
        assertEquals(Duration.ofSeconds(7), c.resetTimeout());
        assertEquals(1.0, c.backoffMultiplier());
        assertEquals(0.0, c.jitter());
        assertEquals(3, c.halfOpenPermits());
        assertEquals(3, c.successThreshold());
        assertEquals(Duration.ofMillis(750), c.slowCallDurationThreshold().orElseThrow());
        Policy p = c.policy();
        assertEquals(Strategy.SLIDING_WINDOW, p.strategy());
        assertEquals(SlidingWindowType.TIME_BASED, p.slidingWindowType());
        assertEquals(30, p.slidingWindowSize());
        assertEquals(12, p.minimumNumberOfCalls());
        assertEquals(25.0, p.failureRateThreshold());
        assertEquals(60.0, p.slowCallRateThreshold());
        assertEquals(BreakerMode.NORMAL, p.mode());
    }

    @Test
    void theDefaultsAreAccepted() {
        RedeyeBackedCircuitBreaker cb = breakers.circuitBreaker("defaults",
                io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.ofDefaults());
        assertEquals(Duration.ofSeconds(60), cb.redeye().config().resetTimeout());
        assertEquals(10, cb.redeye().config().halfOpenPermits());
        assertEquals(State.CLOSED, cb.getState());
    }

    @Test
    void exponentialBackoffIsRefusedNamingTheOption() {
        refused(r4j().waitIntervalFunctionInOpenState(IntervalFunction.ofExponentialBackoff(1000, 2)).build(),
                "waitIntervalFunctionInOpenState");
    }

    @Test
    void aRandomizedWaitIsRefused() {
        refused(r4j().waitIntervalFunctionInOpenState(IntervalFunction.ofRandomized(1000, 0.5)).build(),
                "waitIntervalFunctionInOpenState");
    }

    @Test
    void aConstantIntervalFunctionIsAFixedWait() {
        RedeyeBackedCircuitBreaker cb = breakers.circuitBreaker("constant",
                r4j().waitIntervalFunctionInOpenState(IntervalFunction.of(Duration.ofSeconds(3))).build());
        assertEquals(Duration.ofSeconds(3), cb.redeye().config().resetTimeout());
    }

    @Test
    void maxWaitDurationInHalfOpenStateIsRefused() {
        refused(r4j().maxWaitDurationInHalfOpenState(Duration.ofSeconds(5)).build(),
                "maxWaitDurationInHalfOpenState");
    }

    @Test
    void transitionOnResultIsRefused() {
        refused(r4j().transitionOnResult(r -> TransitionCheckResult.noTransition()).build(), "transitionOnResult");
    }

    @Test
    void anInitialOpenStateIsRefused() {
        refused(r4j().initialState(State.FORCED_OPEN).build(), "initialState");
    }

    @Test
    void aWindowLargerThanRedeyeKeepsIsRefusedNamingTheResilience4jOption() {
        IllegalArgumentException e = refused(r4j().slidingWindow(5_000, 100,
                io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType.COUNT_BASED).build(),
                "slidingWindowSize");
        assertTrue(e.getMessage().contains("cannot be honoured"), e.getMessage());
    }

    @Test
    void anInvalidNameIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> breakers.circuitBreaker("",
                io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.ofDefaults()));
    }
}

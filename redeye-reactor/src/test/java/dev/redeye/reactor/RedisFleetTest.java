package dev.redeye.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Permit;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.tck.MutableClock;
import dev.redeye.testsupport.RedisFleet;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The operator over a real Redis ({@code REDEYE_REDIS_URL}): two breakers over two clients stand for two
 * instances. Failures of guarded Monos on one open the breaker for the other, and a trial cancelled on one
 * gives the fleet-wide claim back at once, so the other instance's next subscription is the trial.
 */
class RedisFleetTest {
    private static final String OP = "ledger";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final RedisFleet fleet = new RedisFleet("reactor", OP);

    @AfterEach
    void close() {
        fleet.close();
    }

    private CircuitBreaker instance() {
        return fleet.instance(CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(30)));
    }

    @Test
    void failuresOnOneInstanceRejectTheOthersSubscriptionsAndACancelledTrialGoesBackToTheFleet() {
        CircuitBreaker a = instance();
        CircuitBreaker b = instance();
        AtomicInteger reachedB = new AtomicInteger();
        Mono<String> healthyOnB = Mono.fromCallable(() -> {
            reachedB.incrementAndGet();
            return "ok";
        }).transformDeferred(RedeyeOperator.of(b, OP));
        StepVerifier.create(healthyOnB).expectNext("ok").verifyComplete();

        Flux<String> failingOnA = Flux.<String>error(new IOException("down")).transformDeferred(RedeyeOperator.of(a, OP));
        for (int i = 0; i < 2; i++) {
            StepVerifier.create(failingOnA).expectError(IOException.class).verify(WAIT);
        }
        StepVerifier.create(healthyOnB).expectError(CircuitOpenException.class).verify(WAIT);
        assertEquals(1, reachedB.get(), "B rejected without calling its dependency");

        // the trial: A's subscription claims it for the fleet, then its subscriber cancels before any value
        clock.advance(Duration.ofSeconds(10));
        StepVerifier.create(Mono.<String>never().transformDeferred(RedeyeOperator.of(a, OP)))
                .expectSubscription().thenCancel().verify(WAIT);
        assertEquals(1, a.metrics(OP).trials());
        assertEquals(BreakerStatus.HALF_OPEN, a.status(OP), "the cancel recorded nothing");
        // without the release B would be refused until trialTimeout (30 s, and the clock does not move)
        StepVerifier.create(healthyOnB).expectNext("ok").verifyComplete();
        assertEquals(1, b.metrics(OP).trials(), "B ran the trial A gave back");
        assertEquals(BreakerStatus.CLOSED, a.status(OP), "B's trial closed it for the fleet");
        Permit p = a.tryAcquire(OP);
        assertTrue(p.isPermitted() && !p.isTrial(), p.toString());
        p.release();
    }
}

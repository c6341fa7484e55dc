package dev.redeye.spring.boot;

import static dev.redeye.spring.boot.TestServices.failCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spring.boot.actuate.RedeyeBreakerHealthIndicator;
import dev.redeye.spring.boot.actuate.RedeyeEvents;
import dev.redeye.spring.boot.actuate.RedeyeEvents.Event;
import dev.redeye.spring.boot.actuate.RedeyeEvents.Origin;
import dev.redeye.spring.boot.actuate.RedeyeEventsEndpoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The {@code redeyeevents} buffer and endpoint, and the opt-in health of each breaker, with their conditions
 * (called as beans; over HTTP with two instances over Redis in {@link ResilienceFeaturesOverRedisTest}).
 */
class EventsAndBreakerHealthTest {
    private static final String EXPOSED = "management.endpoints.web.exposure.include=redeyeevents";
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL)
            .withPropertyValues("redeye.defaults.failure-threshold=1");

    private static CircuitBreaker breaker(AssertableApplicationContext context, String name) {
        return context.getBean(RedeyeCircuitBreakers.class).get(name);
    }

    /** Waits for the in-process feed, which delivers on its own thread. */
    private static List<Event> awaitEvents(Supplier<List<Event>> events, int count) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<Event> now = events.get();
        while (now.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
            now = events.get();
        }
        return now;
    }

    @Test
    void theEventsEndpointAndItsBufferExistOnlyWhenExposed() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RedeyeEvents.class)
                .doesNotHaveBean(RedeyeEventsEndpoint.class));
        runner.withPropertyValues(EXPOSED).run(context -> assertThat(context).hasSingleBean(RedeyeEvents.class)
                .hasSingleBean(RedeyeEventsEndpoint.class));
        runner.withPropertyValues(EXPOSED, "redeye.events.buffer-size=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context)).contains("redeye.events.buffer-size");
        });
    }

    @Test
    void anInstanceKeepsItsOwnTransitionsOnceAndTheFleetsAsFleet() throws Exception {
        String store = "redeye.store=memory://" + TestServices.newName("events");
        runner.withPropertyValues(EXPOSED, store).run(a -> runner.withPropertyValues(EXPOSED, store).run(b -> {
            RedeyeEvents eventsA = a.getBean(RedeyeEvents.class);
            RedeyeEvents eventsB = b.getBean(RedeyeEvents.class);
            breaker(b, "default").execute("warehouse", () -> "ok"); // B holds the operation
            failCall(breaker(a, "default"), "warehouse");
            breaker(a, "default").reset("warehouse");
            breaker(a, "default").forceOpen("other");

            List<Event> seenByB = awaitEvents(eventsB::events, 3);
            assertThat(seenByB).extracting(Event::operation, Event::origin, Event::kind, Event::to, Event::breaker)
                    .containsExactly(
                            tuple("warehouse", Origin.FLEET, "opened", BreakerStatus.OPEN,
                                    "default"),
                            tuple("warehouse", Origin.FLEET, "forced_closed",
                                    BreakerStatus.CLOSED, "default"),
                            tuple("other", Origin.FLEET, "forced_open",
                                    BreakerStatus.FORCED_OPEN, null)); // an operation B never called
            // A's breaker subscribed to the in-process feed before B's, and the feed delivers to its subscribers in
            // order: B having the three events means A's feed copies of its own transitions have arrived too
            List<Event> seenByA = eventsA.events();
            assertThat(seenByA).as("each own transition once, as local, though the feed repeats it")
                    .extracting(Event::operation, Event::origin, Event::kind)
                    .containsExactly(
                            tuple("warehouse", Origin.LOCAL, "opened"),
                            tuple("warehouse", Origin.LOCAL, "forced_closed"),
                            tuple("other", Origin.LOCAL, "forced_open"));
            assertThat(seenByA.get(0).failures()).isEqualTo(1);
            assertThat(seenByA.get(0).version()).isEqualTo(seenByB.get(0).version());

            RedeyeEventsEndpoint endpoint = b.getBean(RedeyeEventsEndpoint.class);
            assertThat(endpoint.operationEvents("warehouse").events()).hasSize(2)
                    .allMatch(e -> e.operation().equals("warehouse"));
            assertThat(endpoint.operationEvents("nothing").events()).isEmpty();
            assertThat(endpoint.events().events()).hasSize(3);
        }));
    }

    @Test
    void theBufferKeepsTheLatestUpToItsSize() {
        runner.withPropertyValues(EXPOSED, "redeye.events.buffer-size=2").run(context -> {
            CircuitBreaker b = breaker(context, "default");
            b.forceOpen("one");
            b.forceOpen("two");
            b.forceOpen("three");
            assertThat(context.getBean(RedeyeEvents.class).events()).extracting(Event::operation)
                    .containsExactly("two", "three");
        });
    }

    private static HealthIndicator breakerHealth(AssertableApplicationContext context, String name) {
        CompositeHealthContributor all = context.getBean("redeyeBreakersHealthContributor",
                CompositeHealthContributor.class);
        return (HealthIndicator) all.getContributor(name);
    }

    @Test
    void aBreakerThatRegistersReportsCircuitOpenAndHalfOpenOthersAreAbsent() {
        runner.run(context -> assertThat(context).doesNotHaveBean("redeyeBreakersHealthContributor"));
        runner.withPropertyValues("redeye.breakers.payments.register-health-indicator=true",
                "redeye.breakers.audit.failure-threshold=1").run(context -> {
                    assertThat(breakerHealth(context, "payments")).isNotNull();
                    assertThat(breakerHealth(context, "default")).as("not registered").isNull();
                    assertThat(breakerHealth(context, "audit")).as("not registered").isNull();
                    HealthIndicator payments = breakerHealth(context, "payments");
                    assertThat(payments.health().getStatus()).isEqualTo(Status.UP);
                    breaker(context, "payments").execute("charge", () -> "ok");
                    failCall(breaker(context, "payments"), "refund");
                    Health open = payments.health();
                    assertThat(open.getStatus()).isEqualTo(RedeyeBreakerHealthIndicator.CIRCUIT_OPEN);
                    assertThat(open.getDetails()).isEqualTo(Map.of("operations", Map.of("refund", BreakerStatus.OPEN)));
                    breaker(context, "payments").forceHalfOpen("refund");
                    assertThat(payments.health().getStatus()).isEqualTo(RedeyeBreakerHealthIndicator.CIRCUIT_HALF_OPEN);
                    breaker(context, "payments").reset("refund");
                    assertThat(payments.health().getStatus()).isEqualTo(Status.UP);
                });
    }

    /**
     * Under a quorum, one instance failing alone is an outlier: with health-reports-outlier its breaker's health is
     * OUT_OF_SERVICE (for a readiness group) while the fleet's state stays closed; without it, UP.
     */
    @Test
    void anOutlierIsOutOfServiceOnlyWhenAskedFor() {
        String store = "redeye.store=memory://outlier-health-" + System.nanoTime();
        runner.withPropertyValues(store, "redeye.breakers.payments.register-health-indicator=true",
                "redeye.breakers.payments.health-reports-outlier=true", "redeye.breakers.payments.quorum=2",
                "redeye.breakers.payments.failure-threshold=2", "redeye.breakers.payments.outlier-policy=allow",
                "redeye.breakers.audit.register-health-indicator=true", "redeye.breakers.audit.quorum=2",
                "redeye.breakers.audit.failure-threshold=2").run(context -> {
                    assertThat(context).hasNotFailed();
                    CircuitBreaker payments = breaker(context, "payments");
                    CircuitBreaker audit = breaker(context, "audit");
                    assertThat(payments.config().outlierPolicy()).isEqualTo(dev.redeye.OutlierPolicy.ALLOW);
                    for (CircuitBreaker b : List.of(payments, audit)) {
                        b.execute("charge", () -> "ok");
                        assertThat(breakerHealth(context, b == payments ? "payments" : "audit").health()
                                .getStatus()).isEqualTo(Status.UP);
                        failCall(b, "charge");
                        failCall(b, "charge");
                        assertThat(b.isOutlier("charge")).as("failing alone below the quorum").isTrue();
                        assertThat(b.status("charge")).isEqualTo(BreakerStatus.CLOSED);
                    }
                    Health outlier = breakerHealth(context, "payments").health();
                    assertThat(outlier.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat(outlier.getDetails()).isEqualTo(Map.of("outliers", java.util.Set.of("charge")));
                    payments.execute("charge", () -> "ok"); // ALLOW: its calls still run
                    assertThat(breakerHealth(context, "audit").health().getStatus()).as("not asked for")
                            .isEqualTo(Status.UP);
                });
    }

    @Test
    void allowedToFailItReportsDownAndUnknownAndDefaultsRegisterEveryBreaker() {
        runner.withPropertyValues("redeye.defaults.register-health-indicator=true",
                "redeye.breakers.payments.allow-health-indicator-to-fail=true",
                "redeye.breakers.audit.register-health-indicator=false").run(context -> {
                    assertThat(breakerHealth(context, "default")).isNotNull();
                    assertThat(breakerHealth(context, "audit")).as("its own false wins").isNull();
                    HealthIndicator payments = breakerHealth(context, "payments");
                    breaker(context, "payments").forceOpen("charge");
                    assertThat(payments.health().getStatus()).isEqualTo(Status.DOWN);
                    breaker(context, "payments").forceHalfOpen("charge");
                    assertThat(payments.health().getStatus()).isEqualTo(Status.UNKNOWN);
                    breaker(context, "default").forceOpen("x");
                    assertThat(breakerHealth(context, "default").health().getStatus())
                            .isEqualTo(RedeyeBreakerHealthIndicator.CIRCUIT_OPEN);
                });
        runner.withPropertyValues("redeye.defaults.register-health-indicator=true",
                "management.health.redeyebreakers.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("redeyeBreakersHealthContributor"));
    }
}

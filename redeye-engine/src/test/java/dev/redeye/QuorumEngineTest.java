package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Contribution;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.io.IOException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Quorum opening through the engine: each breaker's outcomes attributed to its instance id. */
class QuorumEngineTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";

    private final java.util.List<Outlier> outliers = new java.util.concurrent.CopyOnWriteArrayList<>();

    private CircuitBreaker instance(String id) {
        return instance(id, OutlierPolicy.REJECT);
    }

    private CircuitBreaker instance(String id, OutlierPolicy policy) {
        return keep(CircuitBreaker.builder().store(backend.newClient()).clock(clock).ticker(clock).jitter(0)
                .failureThreshold(3).quorum(2).instanceId(id).outlierPolicy(policy)
                .resetTimeout(java.time.Duration.ofSeconds(30)).onOutlier(outliers::add));
    }

    private static void fail(CircuitBreaker cb) {
        assertThrows(IOException.class, () -> cb.execute(OP, () -> {
            throw new IOException("down");
        }));
    }

    @Test
    void oneInstanceFailingAloneLeavesTheOthersAdmittedAndTwoOpenTheFleet() {
        CircuitBreaker a = instance("pod-a", OutlierPolicy.ALLOW);
        CircuitBreaker b = instance("pod-b", OutlierPolicy.ALLOW);
        for (int i = 0; i < 100; i++) {
            fail(a);
        }
        assertEquals(1, outliers.size(), "one report: A became an outlier at its third failure");
        assertEquals(new Outlier(OP, "pod-a", 3, 3, 1, 2, false), outliers.get(0));
        assertTrue(a.isOutlier(OP));
        assertFalse(b.isOutlier(OP));
        assertEquals(BreakerStatus.CLOSED, a.status(OP), "below the quorum the fleet stays closed");
        assertEquals(100, a.state(OP).failures());
        assertEquals(java.util.List.of(new Contribution("pod-a", 100, 100, clock.millis())),
                a.state(OP).contributors());
        assertEquals("ok", b.execute(OP, () -> "ok"), "the other instance is admitted (its success clears)");
        fail(a);
        fail(a);
        assertEquals(BreakerStatus.CLOSED, a.status(OP));
        fail(b);
        assertEquals(BreakerStatus.OPEN, b.status(OP), "the second instance's failure makes the quorum");
        assertThrows(CircuitOpenException.class, () -> a.execute(OP, () -> "rejected"));
    }

    @Test
    void aQuorumNeedsAStoreThatKeepsContributions() {
        InvalidOptionException local = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().quorum(2).build());
        assertEquals("quorum", local.option());
        assertTrue(local.getMessage().contains("shared store"), local.getMessage());
        Store hiding = new ForwardingStore(backend.newClient()) {
            @Override
            public <C> Optional<C> capability(Class<C> type) {
                return type == dev.redeye.spi.QuorumState.class ? Optional.empty() : super.capability(type);
            }
        };
        InvalidOptionException lacking = assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().store(hiding).quorumFraction(0.5).build());
        assertEquals("quorumFraction", lacking.option());
        assertTrue(lacking.getMessage().contains("QuorumState"), lacking.getMessage());
        hiding.close();
    }

    @Test
    void instanceIdsAreCheckedAndTheDefaultIsOnePerProcess() {
        assertEquals("instanceId", assertThrows(InvalidOptionException.class,
                () -> CircuitBreaker.builder().instanceId("a b")).option());
        try (CircuitBreaker x = CircuitBreaker.builder().build(); CircuitBreaker y = CircuitBreaker.builder().build()) {
            assertEquals(x.config().instanceId(), y.config().instanceId());
            assertEquals(InstanceIds.PROCESS, x.config().instanceId());
        }
        assertEquals("1234@host-1.example#00ff", InstanceIds.derive("1234@host-1.example", 0xff));
        assertEquals("12_@h_st#0001", InstanceIds.derive("12 @h;st", 1));
        assertEquals("jvm#0002", InstanceIds.derive("", 2));
        String longName = InstanceIds.derive("9".repeat(200), 3);
        assertEquals(Contribution.MAX_INSTANCE_LENGTH, longName.length());
        assertFalse(longName.contains(" "));
    }

    @Test
    void anOutlierThatRejectsIsCutOffAloneForOneResetWindow() {
        CircuitBreaker a = instance("pod-a");
        CircuitBreaker b = instance("pod-b");
        for (int i = 0; i < 100; i++) {
            a.recordFailure(OP);
        }
        assertEquals(1, outliers.size(), "one report for the trip, however many failures follow");
        assertTrue(outliers.get(0).rejecting());
        CircuitOpenException rejected = assertThrows(CircuitOpenException.class, () -> a.execute(OP, () -> "x"));
        assertEquals(BreakerStatus.OPEN, rejected.status());
        assertEquals(BreakerStatus.CLOSED, b.status(OP), "the fleet stays closed");
        assertEquals("ok", b.execute(OP, () -> "ok"), "the other instance is admitted");
        assertEquals(1, a.metrics(OP).rejections());
        clock.advance(java.time.Duration.ofSeconds(30));
        assertFalse(a.isOutlier(OP), "one reset window");
        assertEquals("ok", a.execute(OP, () -> "ok"), "then its calls go again");
        assertFalse(a.isOutlier(OP));
    }

    @Test
    void aSuccessThatClearsTheCountEndsTheTripAndTheFleetOpeningEndsItToo() {
        CircuitBreaker a = instance("pod-a");
        CircuitBreaker b = instance("pod-b");
        for (int i = 0; i < 3; i++) {
            a.recordFailure(OP);
        }
        assertTrue(a.isOutlier(OP));
        a.recordSuccess(OP);
        assertFalse(a.isOutlier(OP), "its own success cleared the count");
        a.recordFailure(OP);
        a.recordFailure(OP);
        a.recordFailure(OP);
        assertTrue(a.isOutlier(OP));
        assertEquals(2, outliers.size(), "a new trip, a new report");
        b.recordFailure(OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP), "B makes the quorum");
        a.recordFailure(OP); // a failure while open: A's write shows the fleet open
        assertFalse(a.isOutlier(OP), "the fleet is open: no outlier");
    }

    /**
     * The fleet's opening ends an outlier's trip as soon as the outlier learns of it, by a read or the feed, not
     * only by a write of its own: the dependency is down for everyone, so the instance is no outlier (its health
     * must not take it out) and its calls are rejected as the fleet's, not as its own.
     */
    @Test
    void learningTheFleetOpenedByAReadEndsTheTrip() {
        CircuitBreaker a = instance("pod-a");
        CircuitBreaker b = instance("pod-b");
        for (int i = 0; i < 3; i++) {
            a.recordFailure(OP);
        }
        assertTrue(a.isOutlier(OP));
        b.recordFailure(OP);
        assertEquals(BreakerStatus.OPEN, b.status(OP), "B makes the quorum");
        assertEquals(BreakerStatus.OPEN, a.status(OP), "A reads the opening");
        assertFalse(a.isOutlier(OP), "the fleet is open: no outlier");
        b.reset(OP); // within A's reset window: its trip would still run had the opening not ended it
        assertEquals(BreakerStatus.CLOSED, a.status(OP));
        assertFalse(a.isOutlier(OP), "the trip does not come back when the fleet closes");
        assertEquals("ok", a.execute(OP, () -> "ok"), "nor does its local rejection");
    }
}

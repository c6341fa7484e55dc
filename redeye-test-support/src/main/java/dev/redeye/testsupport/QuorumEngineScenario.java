package dev.redeye.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Contribution;
import java.util.List;

/**
 * Quorum opening through the engine over one store, with two breakers in this JVM (each over a client of its
 * own), the scenario every store with quorum support runs: one instance failing alone never opens the fleet (an
 * outlier, reported once), the other is admitted, and the second instance's failure opens the fleet with both
 * contributions. {@link QuorumFleetScenario} runs the same over two JVM processes.
 */
public final class QuorumEngineScenario {
    private QuorumEngineScenario() {
    }

    /**
     * Runs it.
     *
     * @param a        instance {@code pod-a}: failure threshold 3, quorum 2, reporting outliers to {@code outliers}
     * @param b        instance {@code pod-b}, the same options over another client of the same store
     * @param outliers what {@code a}'s and {@code b}'s {@code onOutlier} received (empty at the start)
     * @param op       an operation no one has used
     * @param alone    how many failures A records alone (at least 3)
     * @param where    the backend and how its state is held, for messages ("the shared row", ...)
     */
    public static void run(CircuitBreaker a, CircuitBreaker b, List<Outlier> outliers, String op, int alone,
            String where) {
        for (int i = 0; i < alone; i++) {
            a.recordFailure(op);
        }
        assertEquals(BreakerStatus.CLOSED, a.status(op), "below the quorum the fleet stays closed");
        assertEquals(BreakerStatus.CLOSED, b.status(op));
        BreakerState read = b.state(op);
        assertEquals(alone, read.failures(), "B reads A's failures from " + where);
        assertEquals(1, read.contributors().size(), read.contributors().toString());
        assertEquals("pod-a", read.contributors().get(0).instance());
        assertEquals(alone, read.contributors().get(0).failures());
        assertTrue(a.isOutlier(op), "A failing alone past the threshold is an outlier");
        assertFalse(b.isOutlier(op));
        assertEquals(1, outliers.size(), "one report for the trip, however many failures follow: " + outliers);
        assertEquals("pod-a", outliers.get(0).instance());
        assertEquals(2, outliers.get(0).quorumRequired());

        assertEquals("ok", b.execute(op, () -> "ok"), "the other instance is admitted (its success clears)");
        assertEquals(0, b.state(op).failures(), "the consecutive count was cleared");

        a.recordFailure(op);
        a.recordFailure(op);
        a.recordFailure(op);
        assertEquals(BreakerStatus.CLOSED, a.status(op), "three failures of one instance: still no quorum");
        assertEquals(BreakerStatus.CLOSED, b.status(op), "still closed right before B's failure");
        b.recordFailure(op);
        assertEquals(BreakerStatus.OPEN, b.status(op), "the second instance's failure makes the quorum");
        assertEquals(BreakerStatus.OPEN, a.status(op), "the fleet is open for A too");
        BreakerState opened = a.state(op);
        assertEquals(4, opened.failures());
        assertEquals(List.of("pod-b", "pod-a"), opened.contributors().stream().map(Contribution::instance).toList(),
                "both contributions, the most recent first");
        assertThrows(CircuitOpenException.class, () -> b.execute(op, () -> "rejected"));
    }
}

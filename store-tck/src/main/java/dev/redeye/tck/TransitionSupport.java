package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.AtomicOperation;
import dev.redeye.api.AtomicUpdates;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.api.Transitions;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;

/**
 * How rules make transitions through whatever the store offers (an atomic capability, or a put that raises
 * the version for a store that has none: the engine's get-then-put fallback) and watch them arrive on its
 * feed. Implementers extend {@link StoreTck}, not this class.
 */
abstract class TransitionSupport extends TckBase {
    /** A consecutive policy that opens on the first failure. */
    static final Policy ONE = consecutive(1);
    private final AtomicLong clock = new AtomicLong(T0);

    /** A virtual now that moves 1 s per call, for transitions whose time does not matter. */
    final long now() {
        return clock.addAndGet(1_000);
    }

    /** The rule is skipped unless the store can make transitions atomically (R1.10, R1.11). */
    static void needAtomic(Store s) {
        Assumptions.assumeTrue(s.capability(AtomicUpdates.class).isPresent(),
                "store declares not AtomicUpdates: this rule makes transitions with one");
    }

    /**
     * One transition of {@code k} made by an atomic operation, never to a forced state: with
     * {@link AtomicUpdates} force HALF_OPEN when closed and CLOSED when open; else an opening failure
     * under {@code p} (whose failureThreshold must be 1), after a put of the closed state when open.
     */
    static StateChange atomicTransition(Store s, String k, Policy p, long now) {
        Optional<AtomicUpdates> tr = s.capability(AtomicUpdates.class);
        BreakerState cur = s.get(k).orElse(null);
        boolean open = cur != null && cur.open();
        StateChange c;
        if (tr.isPresent()) {
            c = tr.get().apply(k, AtomicOperation.force(open ? BreakerStatus.CLOSED : BreakerStatus.HALF_OPEN), p, now);
        } else {
            if (open) {
                s.put(k, Transitions.closedFrom(cur), p.stateTtl());
            }
            c = need(s, AtomicUpdates.class).apply(k, AtomicOperation.failure(), p, now);
        }
        assertTrue(c.isTransition(), "the TCK's transition of " + describe(k) + " was not a transition: " + c);
        return c;
    }

    /**
     * One transition of {@code k} made with a put, as the engine's fallback writes one: an opening failure
     * when closed, the closed state when open; the version rises by 1.
     */
    StateChange putTransition(Store writer, String k) {
        BreakerState cur = writer.get(k).orElse(null);
        StateChange c = cur != null && cur.open()
                ? new StateChange(cur, Transitions.closedFrom(cur), TransitionKind.CLOSED)
                : Transitions.recordFailure(cur, ONE, now());
        writer.put(k, c.state(), STATE_TTL);
        return c;
    }

    /**
     * Makes one transition of {@code k} through {@code writer} with what it offers: with AtomicUpdates a
     * forced close when open (a forced open when closed and it cannot record); with AtomicUpdates an
     * opening failure (after a put of the closed state when open); with neither, a put that raises the
     * version ({@link #putTransition}).
     */
    StateChange transition(Store writer, String k) {
        Optional<AtomicUpdates> rec = writer.capability(AtomicUpdates.class);
        Optional<AtomicUpdates> tr = writer.capability(AtomicUpdates.class);
        if (rec.isEmpty() && tr.isEmpty()) {
            return putTransition(writer, k);
        }
        BreakerState cur = writer.get(k).orElse(null);
        boolean open = cur != null && cur.open();
        StateChange c;
        if (open && tr.isPresent()) {
            c = tr.get().apply(k, AtomicOperation.force(BreakerStatus.CLOSED), ONE, now());
        } else if (rec.isPresent()) {
            if (open) {
                writer.put(k, Transitions.closedFrom(cur), STATE_TTL);
            }
            c = rec.get().apply(k, AtomicOperation.failure(), ONE, now());
        } else {
            c = tr.get().apply(k, AtomicOperation.force(BreakerStatus.FORCED_OPEN), ONE, now());
        }
        assertTrue(c.isTransition(), "the TCK's transition of " + describe(k) + " was not a transition: " + c);
        return c;
    }

    /**
     * Waits until every collector receives a transition made by {@code writer} (another one each second), so
     * that subscriptions the store starts asynchronously are live before a rule relies on them.
     */
    void awaitLive(Store writer, FeedCollector... collectors) {
        String warm = key("warm-up");
        long deadline = System.nanoTime() + patience().toNanos();
        while (true) {
            transition(writer, warm);
            // Every warm-up transition is made after the subscriptions: a collector holding any of them is
            // live. Each round waits up to 1 s (R6.10's bound), so a polled feed is not required to deliver
            // each warm-up transition before the next one is made.
            for (int i = 0; i < 50; i++) {
                boolean all = true;
                for (FeedCollector col : collectors) {
                    all &= !col.of(warm).isEmpty();
                }
                if (all) {
                    return;
                }
                sleep(20);
            }
            if (System.nanoTime() > deadline) {
                fail("a new subscription received no transition within " + patience().toMillis()
                        + " ms: the feed is silent");
            }
        }
    }

    /** Makes a transition of a marker key and waits until {@code c} has it: everything sent before has arrived. */
    void flush(Store writer, FeedCollector c) {
        String marker = key("marker");
        long v = transition(writer, marker).state().version();
        if (!eventually(() -> c.has(marker, v))) {
            fail("the marker transition was not delivered within " + patience().toMillis() + " ms");
        }
    }

    /** Waits for the event of {@code op} at {@code version} and returns it. */
    TransitionEvent await(FeedCollector c, String op, long version, String who) {
        if (!eventually(() -> c.has(op, version))) {
            fail(who + " did not receive the transition of " + describe(op) + " to version " + version + " within "
                    + patience().toMillis() + " ms; it received " + c.events.size() + " event(s)");
        }
        return c.of(op).stream().filter(e -> e.version() == version).findFirst().orElseThrow();
    }
}

package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.ONE;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.describe;
import static dev.redeye.tck.TckSupport.sleep;
import static dev.redeye.tck.TckSupport.startOf;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * What every rule group shares: the clients, key prefix, clock, settings and hooks of the running test, and
 * the steps rules of several groups take (transitions made through what the store offers, waits on its feed,
 * breakers over it). {@link TckBase} holds the state; each rule group is an interface over this one, and
 * {@link StoreTck} implements them all.
 */
interface TckContext {
    /**
     * Opens a new client through the implementer's {@code newClient()}; the TCK closes it after the test.
     *
     * @return a client of this test
     */
    Store client();

    /**
     * A key unique to this test: the per-test random prefix plus {@code name}.
     *
     * @param name the key's name within the test
     * @return the key
     */
    String key(String name);

    /**
     * How long feed and expiry rules wait for something that should happen (they finish as soon as it does):
     * 10 s, or the JUnit configuration parameter / system property {@value TckRunner#PATIENCE_PARAMETER} in ms.
     *
     * @return the patience of this run
     */
    Duration patience();

    /**
     * The seed of the model rules' random scenarios: {@value TckRunner#DEFAULT_SEED}, or the JUnit
     * configuration parameter / system property {@value TckRunner#SEED_PARAMETER}.
     *
     * @return the seed of this run
     */
    long seed();

    /**
     * How many random scenarios each model rule runs: {@value TckRunner#DEFAULT_TRIES}, or the JUnit
     * configuration parameter / system property {@value TckRunner#TRIES_PARAMETER}.
     *
     * @return the number of scenarios of this run
     */
    int tries();

    /**
     * A virtual now that moves 1 s per call, for transitions whose time does not matter.
     *
     * @return the next virtual now of this test
     */
    long now();

    /**
     * The implementer's hooks.
     *
     * @return the hooks of the store under test
     */
    TckHooks hooks();

    /**
     * The breakers of this test, closed after it, before its clients.
     *
     * @return the list a rule adds the breakers it builds to
     */
    List<CircuitBreaker> breakers();

    /**
     * How many model runs this test has started, for their key prefixes.
     *
     * @return the counter of this test
     */
    AtomicLong modelRuns();

    /**
     * Polls {@code condition} every 20 ms until it holds or {@link #patience()} runs out.
     *
     * @param condition what should come to hold
     * @return whether it held
     */
    default boolean eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + patience().toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            sleep(20);
        }
    }


    /**
     * One transition of {@code k} made with a put, as the engine's fallback writes one: an opening failure
     * when closed, the closed state when open; the version rises by 1.
     */
    default StateChange putTransition(Store writer, String k) {
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
    default StateChange transition(Store writer, String k) {
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
    default void awaitLive(Store writer, FeedCollector... collectors) {
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
    default void flush(Store writer, FeedCollector c) {
        String marker = key("marker");
        long v = transition(writer, marker).state().version();
        if (!eventually(() -> c.has(marker, v))) {
            fail("the marker transition was not delivered within " + patience().toMillis() + " ms");
        }
    }

    /** Waits for the event of {@code op} at {@code version} and returns it. */
    default TransitionEvent await(FeedCollector c, String op, long version, String who) {
        if (!eventually(() -> c.has(op, version))) {
            fail(who + " did not receive the transition of " + describe(op) + " to version " + version + " within "
                    + patience().toMillis() + " ms; it received " + c.events.size() + " event(s)");
        }
        return c.of(op).stream().filter(e -> e.version() == version).findFirst().orElseThrow();
    }

    /**
     * Parity with {@link Transitions} over two clients: {@code steps} calls drawn from {@code seed}
     * (recordFailure, recordSuccess, recordOutcome, and a put of the closed state while open), each checked
     * against the rule applied to the prior state, and the stored state read by the other client (R2.9, R9.6).
     */
    default void assertParity(Policy p, long seed, int steps) {
        Store[] clients = {client(), client()};
        String k = key("parity");
        Random rnd = new Random(seed);
        BreakerState model = null; // until the first write: the key starts from the store's initial(v)
        long now = T0;
        for (int step = 1; step <= steps; step++) {
            Store c = clients[step % 2];
            now += rnd.nextInt(3) == 0 ? 301 + rnd.nextInt(200) : rnd.nextInt(250);
            String call;
            StateChange expected;
            StateChange actual;
            int kind = rnd.nextInt(10);
            if (model != null && model.open() && kind < 3) {
                BreakerState closed = Transitions.closedFrom(model);
                c.put(k, closed, STATE_TTL);
                call = "put(closed state)";
                actual = new StateChange(model, closed, null);
            } else if (kind < 6) {
                call = "recordFailure";
                actual = updates(c).apply(k, AtomicOperation.failure(), p, now);
            } else if (kind < 8) {
                call = "recordSuccess";
                actual = updates(c).apply(k, AtomicOperation.success(), p, now);
            } else {
                call = "recordOutcome(" + (kind == 8) + ")";
                actual = updates(c).apply(k, AtomicOperation.outcome(kind == 8), p, now);
            }
            String where = "step " + step + " " + call + " at now = T0 + " + (now - T0) + " from "
                    + (model == null ? "a key never written" : model) + " (" + p.strategy().wireName() + ")";
            BreakerState from = model != null ? model : startOf(actual, where);
            if (call.startsWith("put")) {
                expected = actual;
            } else if (kind < 6) {
                expected = Transitions.recordFailure(from, p, now);
            } else if (kind < 8) {
                expected = Transitions.recordSuccess(from, p, now);
            } else {
                expected = Transitions.recordOutcome(from, kind == 8, p, now);
            }
            assertSameState(expected.previous(), actual.previous(), where + ": previous");
            assertSameState(expected.state(), actual.state(), where + ": state");
            assertEquals(expected.transition(), actual.transition(), where + ": transition");
            Optional<BreakerState> stored = clients[(step + 1) % 2].get(k);
            if (model == null && !expected.changed()) {
                assertEquals(Optional.empty(), stored, where + ": a no-op on a key never written must write nothing");
                continue;
            }
            model = expected.state();
            assertSameState(model, stored.orElseThrow(() -> new AssertionError(where + ": nothing stored")),
                    where + ": stored state read by the other client");
        }
    }

    /**
     * A breaker builder over {@code store} (not closed by the breaker) on {@code clock}, without jitter; a
     * {@link MutableClock} is its ticker too, so that its local durations run on the same virtual time.
     */
    default CircuitBreakerBuilder breaker(Store store, Clock clock) {
        CircuitBreakerBuilder b = CircuitBreaker.builder().store(store).closeStore(false).clock(clock).jitter(0.0);
        return clock instanceof MutableClock ? b.ticker((MutableClock) clock) : b;
    }

    default CircuitBreaker build(CircuitBreakerBuilder b) {
        CircuitBreaker cb = b.build();
        breakers().add(cb);
        return cb;
    }
}

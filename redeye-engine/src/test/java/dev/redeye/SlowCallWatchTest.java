package dev.redeye;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.SlidingWindowType;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The watches of slow calls ({@link SlowCalls}): reused by a thread's calls, one of its own for a call that finds
 * the thread's in use, freed by whichever end comes last, and fenced by generation so that a sweep never judges
 * one call by another's start.
 */
class SlowCallWatchTest extends BreakersOverInMemoryStore {
    private static final String OP = "inventory";
    private static final Duration THRESHOLD = Duration.ofSeconds(10);

    private CircuitBreaker windowed() {
        return keep(CircuitBreaker.builder().clock(clock).ticker(clock).slidingWindow(SlidingWindowType.COUNT_BASED, 100)
                .minimumNumberOfCalls(100).slowCallDurationThreshold(THRESHOLD));
    }

    private static SlowCalls slowCalls(CircuitBreaker cb) {
        return cb.parts().recorder.slowCalls();
    }

    @Test
    void aThreadsCallsReuseOneWatchAndANestedCallGetsOneOfItsOwn() {
        CircuitBreaker cb = windowed();
        SlowCalls watches = slowCalls(cb);
        OperationState e = cb.parts().entry(OP);
        Object first = watches.watch(e, BreakerState.INITIAL);
        Object nested = watches.watch(e, BreakerState.INITIAL);
        assertNotSame(first, nested, "the thread's own watch is in use");
        assertEquals(1, watches.singleCallWatches());
        cb.parts().recorder.record(e, nested, OutcomeRecorder.Verdict.SUCCESS);
        assertEquals(0, watches.singleCallWatches(), "a watch made for one call is dropped when it ends");
        cb.parts().recorder.record(e, first, OutcomeRecorder.Verdict.SUCCESS);
        Object next = watches.watch(e, BreakerState.INITIAL);
        assertSame(first, next, "the thread's own watch, free again");
        cb.parts().recorder.record(e, next, OutcomeRecorder.Verdict.NOT_RECORDED);
        assertSame(first, watches.watch(e, BreakerState.INITIAL), "a cancelled call frees it too");
        assertEquals(1, watches.threadWatches());
        assertEquals(2, cb.state(OP).window().calls(), "two outcomes; the cancelled call recorded nothing");
    }

    @Test
    void aSweepThatReadAnEarlierCallsStartNeverCountsTheNextCall() {
        CircuitBreaker cb = windowed();
        SlowCalls watches = slowCalls(cb);
        OperationState e = cb.parts().entry(OP);
        SlowCalls.Watch w = (SlowCalls.Watch) watches.watch(e, BreakerState.INITIAL);
        long startOfFirst = clock.read();
        // A sweep reads the first call's state and start...
        long stateOfFirst = w.state;
        clock.advance(THRESHOLD.multipliedBy(2));
        // ...the first call ends (slow, recorded by its completion) and the thread's next call starts in its watch...
        cb.parts().recorder.record(e, w, OutcomeRecorder.Verdict.SUCCESS);
        assertSame(w, watches.watch(e, BreakerState.INITIAL));
        // ...then the sweep acts on what it read: the first call's start says "slow", but the call is another one.
        watches.judge(w, stateOfFirst, startOfFirst, clock.read());
        BreakerState s = cb.state(OP);
        assertEquals(1, s.window().calls(), "only the first call is counted: " + s);
        assertEquals(1, s.window().slowCalls());
        // the same sweep on what it reads now finds the second call young
        watches.deadlineAt(w, clock.read());
        assertEquals(1, cb.state(OP).window().calls());
        clock.advance(THRESHOLD);
        watches.deadlineAt(w, clock.read());
        assertEquals(2, cb.state(OP).window().slowCalls(), "the second call, past its own deadline, counted once");
        cb.parts().recorder.record(e, w, OutcomeRecorder.Verdict.SUCCESS);
        assertEquals(2, cb.state(OP).window().calls(), "its completion writes nothing more");
    }

    @Test
    void aCallCompletedOnAnotherThreadFreesTheWatchOfTheThreadThatStartedIt() throws Exception {
        CircuitBreaker cb = windowed();
        SlowCalls watches = slowCalls(cb);
        Permit p = cb.tryAcquire(OP);
        assertTrue(p.isPermitted());
        assertTrue(CompletableFuture.supplyAsync(p::onSuccess).get(5, TimeUnit.SECONDS));
        Permit again = cb.tryAcquire(OP);
        assertEquals(0, watches.singleCallWatches(), "this thread's own watch was free again");
        again.onSuccess();
        assertEquals(2, cb.state(OP).window().calls());
    }

    @Test
    void theSweepCountsACallStillRunningPastItsDeadline() throws Exception {
        CircuitBreaker cb = windowed();
        PermitSlot slot = cb.newPermitSlot(OP);
        assertTrue(slot.tryAcquire());
        clock.advance(THRESHOLD);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cb.state(OP).window() == null && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(1, cb.state(OP).window().slowCalls(), "counted by the sweeper while it ran");
        assertTrue(slot.onFailure(new java.io.IOException("late")));
        BreakerState s = cb.state(OP);
        assertEquals(1, s.window().calls());
        assertEquals(1, s.window().failures(), "its slot marked failed when it ended");
    }

    /**
     * A thread keeps its own watch in a thread-local: a breaker closed and dropped must not stay reachable from
     * the threads that made watched calls through it (a pool's threads outlive any breaker).
     */
    @Test
    void aDroppedBreakerIsNotKeptAliveByTheThreadsThatMadeWatchedCalls() throws Exception {
        java.lang.ref.WeakReference<SlowCalls> dropped = watchedCallThenDropped();
        for (int i = 0; i < 100 && dropped.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(dropped.get(), "the closed breaker's slow-call watches are still reachable");
    }

    private static java.lang.ref.WeakReference<SlowCalls> watchedCallThenDropped() {
        try (CircuitBreaker cb = CircuitBreaker.builder().slidingWindow(SlidingWindowType.COUNT_BASED, 10)
                .slowCallDurationThreshold(Duration.ofHours(1)).build()) {
            cb.execute(OP, () -> "ok"); // this thread now has a watch of its own
            return new java.lang.ref.WeakReference<>(slowCalls(cb));
        }
    }
}

package dev.redeye;

import static dev.redeye.LocalModeTest.ok;
import static dev.redeye.LocalModeTest.rejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.BreakerState;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Single-flight refresh of the local cache ({@link CacheRefresh}): callers that find their operation's cache
 * entry stale while one caller's refresh read is in flight wait for that read instead of reading themselves.
 * The refresh read is held in flight by {@link SpyStore#holdNextRead()} (only that read blocks, so a
 * non-coalesced gate lets every other caller read on its own, and these tests see it); staleness is on the
 * virtual clock, the waiters' bound in real time.
 */
class CacheRefreshTest extends BreakersOverInMemoryStore {
    private static final String OP = "profile";
    private static final int THREADS = 8;
    private static final Duration LONG_TOLERANCE = Duration.ofSeconds(5);
    private final SpyStore s = SpyStore.over(backend);
    private CircuitBreaker b;


    private CircuitBreaker build(SpyStore s, Duration staleTolerance, StoreErrorPolicy policy) {
        CircuitBreaker b = CircuitBreaker.builder().clock(clock).ticker(clock).jitter(0).failureThreshold(2)
                .resetTimeout(Duration.ofSeconds(30)).store(s).storeErrorPolicy(policy).localCache(staleTolerance)
                .build();
        breakers.add(b);
        assertTrue(b.isLocalCacheActive());
        return b;
    }

    /** A breaker over {@link #s} whose cached closed entry is exactly stale; the next store read is held. */
    private CountDownLatch staleWithTheNextReadHeld(Duration staleTolerance, StoreErrorPolicy policy) {
        b = build(s, staleTolerance, policy);
        primeThenExpire(b, s, staleTolerance);
        return s.holdNextRead();
    }

    /** One read caches the closed state; then the virtual clock makes it exactly stale. */
    private void primeThenExpire(CircuitBreaker b, SpyStore s, Duration staleTolerance) {
        assertEquals("ok", ok(b, OP));
        ok(b, OP);
        assertEquals(1, s.reads.get(), "the second call is served from the cache");
        clock.advance(staleTolerance);
        s.resetCounts();
    }

    @Test
    void concurrentCallersOfAStaleEntryShareOneRead() throws Exception {
        CountDownLatch release = staleWithTheNextReadHeld(LONG_TOLERANCE, StoreErrorPolicy.ALLOW);
        Callers callers = Callers.start(b, THREADS);
        callers.awaitParked(s);
        release.countDown();
        callers.join();
        assertEquals(Collections.nCopies(THREADS, "ok"), callers.outcomes());
        assertEquals(THREADS, callers.ran.get());
        assertEquals(1, s.reads.get(), THREADS + " callers of a stale entry: one store read, the others waited");
        ok(b, OP);
        assertEquals(1, s.reads.get(), "the refreshed entry serves calls again with zero reads");
    }

    @Test
    void waitersAreAdmittedOnTheLeadersResultNeverOnTheStaleEntry() throws Exception {
        CountDownLatch release = staleWithTheNextReadHeld(LONG_TOLERANCE, StoreErrorPolicy.ALLOW);
        Callers callers = Callers.start(b, THREADS);
        callers.awaitParked(s);
        // opened behind redeye's back (no feed event): only the read in flight can tell the callers
        backend.put(OP, BreakerState.builder().open(true).openedAt(clock.millis()).version(99).build(),
                Duration.ofDays(1));
        release.countDown();
        callers.join();
        assertEquals(Collections.nCopies(THREADS, "rejected"), callers.outcomes(),
                "every caller saw the state the leader read, none the stale closed entry");
        assertEquals(0, callers.ran.get());
        assertEquals(1, s.reads.get());
    }

    @ParameterizedTest
    @EnumSource(value = StoreErrorPolicy.class, names = {"ALLOW", "REJECT"})
    void aFailedLeaderReadIsOneStoreErrorAndEveryWaiterFollowsThePolicy(StoreErrorPolicy policy) throws Exception {
        CountDownLatch release = staleWithTheNextReadHeld(LONG_TOLERANCE, policy);
        Callers callers = Callers.start(b, THREADS);
        callers.awaitParked(s);
        s.failing = true; // the held read throws once released
        release.countDown();
        callers.join();
        s.failing = false;
        String expected = policy == StoreErrorPolicy.REJECT ? "unavailable: backend down (test)" : "ok";
        assertEquals(Collections.nCopies(THREADS, expected), callers.outcomes());
        assertEquals(policy == StoreErrorPolicy.REJECT ? 0 : THREADS, callers.ran.get());
        assertEquals(1, s.reads.get(), "the waiters do not retry the failed read on their own");
        assertEquals(1, b.metrics(OP).storeErrors(), "one failed read is one store error, not one per waiter");
        assertEquals("ok", ok(b, OP), "a failed read is not cached: the next caller reads again");
        assertEquals(2, s.reads.get());
    }

    @Test
    void aLeaderSlowerThanTheStaleToleranceReleasesItsWaitersAndTheNextCallerReadsAgain() throws Exception {
        Duration tolerance = Duration.ofSeconds(1);
        CountDownLatch release = staleWithTheNextReadHeld(tolerance, StoreErrorPolicy.REJECT);
        Callers leader = Callers.start(b, 1);
        leader.awaitParked(s);
        long start = System.nanoTime();
        Callers waiters = Callers.start(b, THREADS - 1);
        waiters.join();
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(Collections.nCopies(THREADS - 1,
                "unavailable: store read for the local cache of '" + OP
                        + "' took longer than the stale tolerance (1000 ms)"), waiters.outcomes());
        assertTrue(waitedMillis < 20_000, "waiters are released at the bound, not when the read ends");
        assertEquals(1, s.reads.get(), "the waiters did not read on their own");
        assertEquals(1, b.metrics(OP).storeErrors(), "the slow read is reported once, not once per waiter");
        // the read in flight is now overdue: the next caller leads a read of its own (not held: it answers)
        assertEquals("ok", ok(b, OP));
        assertEquals(2, s.reads.get());
        release.countDown();
        leader.join();
        assertEquals(List.of("ok"), leader.outcomes(), "the slow read itself still completes its call");
    }

    @Test
    void anInterruptedWaiterStopsWaitingAndReadsOnItsOwn() throws Exception {
        CountDownLatch release = staleWithTheNextReadHeld(LONG_TOLERANCE, StoreErrorPolicy.ALLOW);
        Callers leader = Callers.start(b, 1);
        leader.awaitParked(s);
        Callers waiter = Callers.start(b, 1);
        waiter.awaitParked(s);
        assertEquals(1, s.reads.get(), "the waiter waits for the read in flight");
        waiter.threads.get(0).interrupt();
        waiter.join();
        assertEquals(List.of("ok"), waiter.outcomes());
        assertEquals(List.of(true), waiter.interruptedAfter(), "the waiter's interrupt status is kept");
        assertEquals(2, s.reads.get(), "interrupted, the waiter read the store itself");
        release.countDown();
        leader.join();
        assertEquals(List.of("ok"), leader.outcomes());
    }

    @Test
    void noEntryOlderThanTheStaleToleranceIsServed() {
        Duration tolerance = Duration.ofMillis(100);
        b = build(s, tolerance, StoreErrorPolicy.ALLOW);
        for (int window = 0; window < 3; window++) {
            assertEquals("ok", ok(b, OP));
            assertEquals(window + 1, s.reads.get(), "one read per stale window");
            clock.advanceMillis(tolerance.toMillis() - 1);
            assertEquals("ok", ok(b, OP), "served from the cache within the tolerance");
            assertEquals(window + 1, s.reads.get());
            clock.advanceMillis(1);
        }
        backend.put(OP, BreakerState.builder().open(true).openedAt(clock.millis()).version(99).build(),
                Duration.ofDays(1));
        rejected(b, OP); // the entry is exactly stale: the change behind redeye's back is read, not missed
        assertEquals(4, s.reads.get());
    }

    /** Threads that each make one call of {@link #OP} at once and record how it ended. */
    private static final class Callers {
        final List<Thread> threads = new ArrayList<>();
        final String[] outcomes;
        final Boolean[] interrupted;
        final AtomicInteger ran = new AtomicInteger();

        private Callers(int n) {
            outcomes = new String[n];
            interrupted = new Boolean[n];
        }

        static Callers start(CircuitBreaker b, int n) {
            Callers c = new Callers(n);
            for (int i = 0; i < n; i++) {
                int k = i;
                Thread t = new Thread(() -> {
                    c.outcomes[k] = call(b, c.ran);
                    c.interrupted[k] = Thread.currentThread().isInterrupted();
                }, "cache-refresh-caller-" + i);
                t.setDaemon(true);
                c.threads.add(t);
            }
            c.threads.forEach(Thread::start);
            return c;
        }

        private static String call(CircuitBreaker b, AtomicInteger ran) {
            try {
                return b.execute(OP, () -> {
                    ran.incrementAndGet();
                    return "ok";
                });
            } catch (CircuitOpenException e) {
                return "rejected";
            } catch (StoreUnavailableException e) {
                return "unavailable: " + e.getCause().getMessage();
            }
        }

        /**
         * Waits until the held read has started and every caller is parked (waiting on a read in flight or
         * inside the held read) or done: from then on, nothing changes until the read is released.
         */
        void awaitParked(SpyStore s) throws InterruptedException {
            awaitTrue(() -> s.heldReads.get() == 1 && threads.stream().allMatch(t -> {
                Thread.State st = t.getState();
                return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING
                        || st == Thread.State.TERMINATED;
            }), "callers parked");
        }

        void join() throws InterruptedException {
            for (Thread t : threads) {
                t.join(30_000);
                assertTrue(!t.isAlive(), t.getName() + " still running after 30 s");
            }
        }

        List<String> outcomes() {
            return Arrays.asList(outcomes);
        }

        List<Boolean> interruptedAfter() {
            return Arrays.asList(interrupted);
        }

        private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!condition.getAsBoolean()) {
                assertTrue(System.nanoTime() < deadline, "timed out waiting for: " + what);
                Thread.sleep(1);
            }
        }
    }
}

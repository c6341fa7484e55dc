package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.CallFailed;
import static dev.redeye.tck.TckSupport.INJECTED_FAULT;
import static dev.redeye.tck.TckSupport.Outcome;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.call;
import static dev.redeye.tck.TckSupport.claims;
import static dev.redeye.tck.TckSupport.feed;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.sleep;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.StoreErrorPolicy;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Rules R7: the engine ({@link CircuitBreaker}) over the store, two breakers on two clients sharing one
 * virtual {@link MutableClock}. Run by {@link StoreTck}.
 */
interface EngineRules extends TckContext {
    /**
     * R7.1 Two breakers on two clients share one operation: failures split between them open both after exactly
     * failureThreshold in total. If this fails, check recordFailure and that get returns fresh state.
     */
    @Test
    @DisplayName("R7.1 two breakers on two clients open together after exactly failureThreshold failures")
    default void r7_1_twoBreakersOpenTogether() {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker a = build(breaker(client(), clock).failureThreshold(5));
        CircuitBreaker b = build(breaker(client(), clock).failureThreshold(5));
        String op = key("shared");
        for (int i = 1; i <= 5; i++) {
            CircuitBreaker who = i % 2 == 0 ? b : a;
            assertTrue(a.check(op) && b.check(op), "both breakers must allow calls after " + (i - 1)
                    + " of 5 failures");
            assertEquals(Outcome.RAN, call(who, op, false), "failure " + i + " of 5 must run");
            clock.advanceMillis(10);
        }
        assertEquals(Outcome.REJECTED, call(a, op, true), "breaker A after 5 failures in total");
        assertEquals(Outcome.REJECTED, call(b, op, true), "breaker B after 5 failures in total");
        assertEquals(BreakerStatus.OPEN, b.status(op), "status seen by breaker B");
        assertTrue(b.state(op).open(), "stored state must be open");
    }

    /**
     * R7.2 At trial eligibility, 16 concurrent callers across two breakers run exactly halfOpenPermits trials;
     * the rest are rejected. If this fails, check TrialClaims under concurrency (R4.4).
     */
    @Test
    @DisplayName("R7.2 at trial eligibility 16 concurrent callers run exactly halfOpenPermits trials")
    default void r7_2_exactlyPermitsTrialsRun() throws Exception {
        Store ca = client();
        Store cb = client();
        claims(ca);
        for (int permits : new int[] {1, 3}) {
            MutableClock clock = new MutableClock(T0);
            CircuitBreaker a = build(breaker(ca, clock).failureThreshold(2).halfOpenPermits(permits)
                    .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(30)));
            CircuitBreaker b = build(breaker(cb, clock).failureThreshold(2).halfOpenPermits(permits)
                    .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(30)));
            String op = key("trials-" + permits);
            call(a, op, false);
            call(b, op, false);
            assertEquals(Outcome.REJECTED, call(a, op, true), "open after 2 of 2 failures");
            clock.advance(Duration.ofSeconds(10));
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger rejected = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            CircuitBreaker[] both = {a, b};
            Thread releaser = new Thread(() -> {
                // Trials hold their permit until every caller is decided, so none closes the breaker early.
                eventually(() -> ran.get() + rejected.get() >= 16);
                release.countDown();
            }, "tck-release");
            releaser.setDaemon(true);
            releaser.start();
            race(16, new Store[] {ca, cb}, (t, c) -> {
                try {
                    both[t % 2].execute(op, () -> {
                        ran.incrementAndGet();
                        release.await(patience().toMillis(), TimeUnit.MILLISECONDS);
                        return "ok";
                    });
                } catch (CircuitOpenException e) {
                    rejected.incrementAndGet();
                }
            });
            releaser.join();
            assertEquals(permits, ran.get(), "trials run by 16 concurrent callers with halfOpenPermits " + permits);
            assertEquals(16 - permits, rejected.get(), "callers rejected with CircuitOpenException");
            assertEquals(BreakerStatus.CLOSED, b.status(op), "successful trials close the breaker");
        }
    }

    /**
     * R7.3 Each failed trial lengthens the open window by backoffMultiplier, within jitter, up to
     * maxResetTimeout. If this fails, check that trialFailed persists openCount and openedAt = now.
     */
    @Test
    @DisplayName("R7.3 each failed trial lengthens the open window by backoffMultiplier up to the cap")
    default void r7_3_failedTrialsBackOff() {
        MutableClock clock = new MutableClock(T0);
        double jitter = 0.1;
        CircuitBreaker[] both = new CircuitBreaker[2];
        for (int i = 0; i < 2; i++) {
            both[i] = build(breaker(client(), clock).jitter(jitter).failureThreshold(1)
                    .resetTimeout(Duration.ofSeconds(1)).backoffMultiplier(2).maxResetTimeout(Duration.ofSeconds(5)));
        }
        String op = key("backoff");
        call(both[0], op, false);
        long openedAt = clock.millis();
        long[] windows = {1_000, 2_000, 4_000, 5_000, 5_000};
        for (int i = 0; i < windows.length; i++) {
            long lo = (long) (windows[i] * (1 - jitter)) - 2;
            long hi = (long) Math.ceil(windows[i] * (1 + jitter)) + 1;
            clock.setMillis(openedAt + lo);
            for (int j = 0; j < 2; j++) {
                assertEquals(BreakerStatus.OPEN, both[j].status(op), "breaker " + (j == 0 ? "A" : "B") + ", "
                        + lo + " ms after open period " + (i + 1) + " started (nominal window " + windows[i] + " ms)");
                assertEquals(Outcome.REJECTED, call(both[j], op, false), "a call inside open period " + (i + 1));
            }
            clock.setMillis(openedAt + hi);
            for (int j = 0; j < 2; j++) {
                assertEquals(BreakerStatus.HALF_OPEN, both[j].status(op), "breaker " + (j == 0 ? "A" : "B")
                        + ", " + hi + " ms after open period " + (i + 1) + " started (nominal window " + windows[i]
                        + " ms, jitter " + jitter + ")");
            }
            assertEquals(Outcome.RAN, call(both[i % 2], op, false), "the trial after open period " + (i + 1));
            openedAt = clock.millis();
            BreakerState s = both[(i + 1) % 2].state(op);
            assertEquals(i + 1, s.openCount(), "openCount after " + (i + 1) + " failed trial(s)");
            assertEquals(openedAt, s.openedAt(), "openedAt = the time of the failed trial");
        }
    }

    /**
     * R7.4 A successful trial through one breaker closes the operation for the other. If this fails, check
     * trialSucceeded (R5.1) and that get returns the closed state to the other client.
     */
    @Test
    @DisplayName("R7.4 a successful trial through one breaker closes the operation for the other")
    default void r7_4_trialThroughOneClosesForTheOther() {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker a = build(breaker(client(), clock).failureThreshold(2).resetTimeout(Duration.ofSeconds(30)));
        CircuitBreaker b = build(breaker(client(), clock).failureThreshold(2).resetTimeout(Duration.ofSeconds(30)));
        String op = key("recover");
        call(a, op, false);
        call(b, op, false);
        assertEquals(Outcome.REJECTED, call(b, op, true), "breaker B must reject once open");
        assertEquals(Outcome.REJECTED, call(a, op, true), "breaker A must reject once open");
        clock.advance(Duration.ofSeconds(30));
        assertEquals(Outcome.RAN, call(a, op, true), "the trial through breaker A");
        assertEquals(BreakerStatus.CLOSED, b.status(op), "status seen by breaker B after A's successful trial");
        for (int i = 0; i < 3; i++) {
            assertEquals(Outcome.RAN, call(b, op, true), "call " + (i + 1) + " through breaker B after closing");
        }
        assertFalse(a.state(op).open(), "stored state after the successful trial");
    }

    /**
     * R7.5 (real time) With the local cache on both breakers and a 10 s staleTolerance, after one opens, the
     * other rejects within 1 s. The other breaker's cache is allowed to serve calls for seconds without a store
     * read, so only the transition feed can make it reject in time: a silent feed fails. If this fails, check
     * the transition feed's delivery to another client (R6.3, R6.10).
     */
    @Test
    @DisplayName("R7.5 (real time) with the local cache, the other breaker rejects within 1 s through the feed")
    default void r7_5_localCacheInvalidatedByTheFeed() {
        Store ca = client();
        Store cb = client();
        feed(ca);
        Duration stale = Duration.ofSeconds(10);
        Duration bound = Duration.ofSeconds(1);
        Clock real = Clock.systemUTC();
        CircuitBreaker a = build(breaker(ca, real).failureThreshold(3).localCache(stale));
        CircuitBreaker b = build(breaker(cb, real).failureThreshold(3).localCache(stale));
        String op = key("cached");
        assertEquals(Outcome.RAN, call(b, op, true), "a first call through breaker B (fills its cache)");
        assertEquals(Outcome.RAN, call(b, op, true), "a second call through breaker B");
        assertTrue(b.isLocalCacheActive(), "the local cache must be active over a store with a TransitionFeed");
        for (int i = 0; i < 3; i++) {
            call(a, op, false);
        }
        long openedNanos = System.nanoTime();
        assertTrue(a.state(op).open(), "3 of 3 failures through breaker A must open the operation");
        // B may allow calls until the event arrives; past the bound it must reject.
        long deadline = openedNanos + bound.toNanos();
        int allowedAfterOpen = 0;
        while (System.nanoTime() < deadline && call(b, op, true) == Outcome.RAN) {
            allowedAfterOpen++;
            sleep(5);
        }
        long remaining = deadline - System.nanoTime();
        if (remaining > 0) {
            sleep(TimeUnit.NANOSECONDS.toMillis(remaining) + 1);
        }
        assertEquals(Outcome.REJECTED, call(b, op, true), "breaker B still allows calls " + bound.toMillis()
                + " ms after breaker A opened the operation (" + allowedAfterOpen + " calls allowed meanwhile); with "
                + "a staleTolerance of " + stale.toSeconds() + " s only the transition feed can tell it in time");
    }

    /**
     * R7.6 The errorRate strategy across two breakers opens on the 4-in-5 pattern. If this fails, check
     * recordOutcome with Strategy.ERROR_RATE (R3.1 to R3.4).
     */
    @Test
    @DisplayName("R7.6 the errorRate strategy across two breakers opens on the 4-in-5 pattern")
    default void r7_6_errorRateAcrossBreakers() {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker[] both = new CircuitBreaker[2];
        for (int i = 0; i < 2; i++) {
            both[i] = build(breaker(client(), clock).strategy(Strategy.ERROR_RATE).errorRateDecay(0.9)
                    .minimumCalls(10).errorRateThreshold(0.5).failureThreshold(5));
        }
        String op = key("rate");
        for (int i = 0; i < 10; i++) {
            boolean success = i % 5 == 4;
            assertEquals(Outcome.RAN, call(both[i % 2], op, success), "call " + (i + 1)
                    + " of the 4-in-5 pattern (the breaker may open only after 10 calls)");
            clock.advanceMillis(10);
        }
        assertEquals(Outcome.REJECTED, call(both[0], op, true), "breaker A after 10 calls of 4-in-5 failures");
        assertEquals(Outcome.REJECTED, call(both[1], op, true), "breaker B after 10 calls of 4-in-5 failures");
    }

    /**
     * R7.7 forceOpen through one breaker holds every breaker open, with no trials, until reset. If this fails,
     * check force(FORCED_OPEN) and force(CLOSED) (R5.5).
     */
    @Test
    @DisplayName("R7.7 forceOpen through one breaker holds every breaker open, with no trials, until reset")
    default void r7_7_forceOpenHoldsEveryBreaker() {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker a = build(breaker(client(), clock).resetTimeout(Duration.ofSeconds(1)));
        CircuitBreaker b = build(breaker(client(), clock).resetTimeout(Duration.ofSeconds(1)));
        String op = key("forced");
        assertEquals(Outcome.RAN, call(b, op, true), "breaker B before forceOpen");
        a.forceOpen(op);
        for (Duration later : new Duration[] {Duration.ZERO, Duration.ofMinutes(5), Duration.ofDays(30)}) {
            clock.advance(later);
            assertEquals(BreakerStatus.FORCED_OPEN, b.status(op), "status seen by breaker B " + later + " later");
            assertEquals(Outcome.REJECTED, call(b, op, true), "breaker B " + later + " after forceOpen (no trials)");
            assertEquals(Outcome.REJECTED, call(a, op, true), "breaker A " + later + " after forceOpen (no trials)");
        }
        b.reset(op);
        clock.advance(a.config().openCacheRefresh().plusMillis(1));
        assertEquals(BreakerStatus.CLOSED, a.status(op), "status seen by breaker A after B's reset");
        assertEquals(Outcome.RAN, call(a, op, true), "breaker A after reset");
        assertEquals(Outcome.RAN, call(b, op, true), "breaker B after reset");
    }

    /**
     * R7.8 With halfOpenPermits 1, callers that lose the claim cost zero store operations per rejected call
     * until the trial's outcome is known. Store operations are counted with the engine's {@link CountingStore}
     * around each client. If this fails, check that claimTrial answers a refused claim with Optional.empty().
     */
    @Test
    @DisplayName("R7.8 callers that lose the trial claim cost zero store operations until the outcome is known")
    default void r7_8_losersCostNoStoreOperations() throws Exception {
        CountingStore ca = new CountingStore(client());
        CountingStore cb = new CountingStore(client());
        claims(ca);
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker[] both = new CircuitBreaker[2];
        CountingStore[] counted = {ca, cb};
        for (int i = 0; i < 2; i++) {
            both[i] = build(breaker(counted[i], clock).failureThreshold(1).halfOpenPermits(1)
                    .resetTimeout(Duration.ofSeconds(10)).trialTimeout(Duration.ofSeconds(5))
                    .openCacheRefresh(Duration.ofSeconds(1)));
        }
        CircuitBreaker a = both[0];
        CircuitBreaker b = both[1];
        String op = key("losers");
        assertEquals(Outcome.RAN, call(a, op, false), "the failure that opens the operation");
        clock.advance(Duration.ofSeconds(10));
        CompletableFuture<String> trial = new CompletableFuture<>();
        CompletableFuture<String> result = a.executeAsync(op, () -> trial);
        assertFalse(result.isDone(), "breaker A must run the trial at eligibility");
        assertEquals(Outcome.REJECTED, call(b, op, true), "breaker B must lose the claim while A's trial runs");
        CountingStore.Counts aBefore = ca.snapshot();
        CountingStore.Counts bBefore = cb.snapshot();
        for (int i = 1; i <= 40; i++) { // 4 s: past openCacheRefresh (1 s), short of trialTimeout (5 s)
            clock.advanceMillis(100);
            assertEquals(Outcome.REJECTED, call(b, op, true), "call " + i + " through breaker B during the trial");
            assertEquals(Outcome.REJECTED, call(a, op, true), "call " + i + " through breaker A during its trial");
        }
        assertEquals(0, cb.snapshot().minus(bBefore).total(), "store operations of 40 calls breaker B rejected "
                + "after losing the claim: " + cb.snapshot().minus(bBefore));
        assertEquals(0, ca.snapshot().minus(aBefore).total(), "store operations of 40 calls breaker A rejected "
                + "while its own trial ran: " + ca.snapshot().minus(aBefore));
        trial.complete("recovered");
        assertEquals("recovered", result.get(patience().toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(Outcome.RAN, call(a, op, true), "breaker A after its successful trial (its own write)");
        clock.advance(Duration.ofSeconds(2)); // trialTimeout after B's lost claim: the winner's claim expired
        assertEquals(Outcome.RAN, call(b, op, true), "breaker B once the winner's claim could have expired");
    }

    /**
     * R7.9 A store whose claimTrial throws: under REJECT no call runs; under ALLOW at most halfOpenPermits
     * trials per breaker instance run at once, and the failing trials of one open period reopen it once. The
     * TCK wraps each client in a store whose claimTrial throws. If this fails, check the trial fencing of
     * trialFailed and trialSucceeded by trialVersion.
     */
    @Test
    @DisplayName("R7.9 a throwing claimTrial: REJECT runs no call, ALLOW at most halfOpenPermits trials per breaker")
    default void r7_9_throwingClaimsFollowThePolicy() throws Exception {
        Store ca = client();
        Store cb = client();
        claims(ca);
        Store[] broken = {throwingClaims(ca), throwingClaims(cb)};
        for (StoreErrorPolicy policy : new StoreErrorPolicy[] {StoreErrorPolicy.REJECT, StoreErrorPolicy.ALLOW}) {
            MutableClock clock = new MutableClock(T0);
            CircuitBreaker[] both = new CircuitBreaker[2];
            for (int i = 0; i < 2; i++) {
                both[i] = build(breaker(broken[i], clock).storeErrorPolicy(policy).failureThreshold(1)
                        .halfOpenPermits(1).resetTimeout(Duration.ofSeconds(10)));
            }
            String op = key("claims-down-" + policy);
            assertEquals(Outcome.RAN, call(both[0], op, false), "the failure that opens the operation");
            BreakerState opened = both[1].state(op);
            assertTrue(opened.open(), "the operation must be open after 1 of 1 failures");
            clock.advance(Duration.ofSeconds(10));
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger rejected = new AtomicInteger();
            AtomicInteger[] running = {new AtomicInteger(), new AtomicInteger()};
            AtomicInteger[] mostAtOnce = {new AtomicInteger(), new AtomicInteger()};
            CountDownLatch decided = new CountDownLatch(16);
            race(16, broken, (t, c) -> {
                int which = t % 2;
                try {
                    both[which].execute(op, () -> {
                        ran.incrementAndGet();
                        mostAtOnce[which].accumulateAndGet(running[which].incrementAndGet(), Math::max);
                        decided.countDown();
                        // hold until every caller is decided, so that every trial of the period overlaps
                        decided.await(patience().toMillis(), TimeUnit.MILLISECONDS);
                        running[which].decrementAndGet();
                        throw new CallFailed(); // the dependency is still down
                    });
                } catch (CircuitOpenException | StoreUnavailableException e) {
                    rejected.incrementAndGet();
                    decided.countDown();
                } catch (CallFailed e) {
                    // the trial's own failure
                }
            });
            if (policy == StoreErrorPolicy.REJECT) {
                assertEquals(0, ran.get(), "calls run under REJECT by 16 callers while claimTrial throws");
                assertEquals(16, rejected.get(), "callers rejected under REJECT");
                assertEquals(opened, both[0].state(op), "the state under REJECT (no call ran)");
                continue;
            }
            for (int i = 0; i < 2; i++) {
                assertTrue(mostAtOnce[i].get() <= 1, "breaker " + (i == 0 ? "A" : "B") + " ran " + mostAtOnce[i].get()
                        + " trials at once under ALLOW while claimTrial throws (halfOpenPermits 1)");
            }
            assertTrue(ran.get() >= 1, "under ALLOW a per-instance trial must run");
            BreakerState after = both[0].state(op);
            assertEquals(opened.openCount() + 1, after.openCount(), "openCount after " + ran.get()
                    + " failing trials of one open period (one per breaker)");
            assertEquals(opened.version() + 1, after.version(), "version after " + ran.get()
                    + " failing trials of one open period");
        }
    }

    /** A client whose claimTrial throws: a store error, alternately the store's own and a driver's exception. */
    private static Store throwingClaims(Store client) {
        AtomicInteger n = new AtomicInteger();
        return new ForwardingStore(client) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                if (n.incrementAndGet() % 2 == 0) {
                    throw new IllegalStateException("claim backend broken, " + INJECTED_FAULT);
                }
                throw new StoreException("garbage under the claim key, " + INJECTED_FAULT);
            }
        };
    }

    /**
     * R7.10 A thread interrupted or a future cancelled during a call is not recorded as a failure; an
     * interrupted trial gives its claim back and leaves the state as it is. If this fails, check releaseTrial
     * (R4.5) and that get returns the unchanged state.
     */
    @Test
    @DisplayName("R7.10 an interrupted or cancelled call is not a failure; an interrupted trial releases its claim")
    default void r7_10_interruptsAreNotFailures() throws Exception {
        MutableClock clock = new MutableClock(T0);
        CircuitBreaker a = build(breaker(client(), clock).failureThreshold(1).resetTimeout(Duration.ofSeconds(10)));
        CircuitBreaker b = build(breaker(client(), clock).failureThreshold(1).resetTimeout(Duration.ofSeconds(10)));
        String op = key("deploy");
        interruptDuring(a, op);
        CompletableFuture<String> pending = new CompletableFuture<>();
        a.executeAsync(op, () -> pending).cancel(true);
        assertThrows(CancellationException.class, () -> b.executeAsync(op,
                () -> CompletableFuture.<String>failedFuture(new CancellationException("stage cancelled")))
                .get(patience().toMillis(), TimeUnit.MILLISECONDS));
        BreakerState s = b.state(op);
        assertFalse(s.open(), "state after an interrupted call and two cancelled futures (failureThreshold 1)");
        assertEquals(0, s.failures(), "failures recorded for an interrupted call and two cancelled futures");
        assertEquals(Outcome.RAN, call(b, op, false), "the failure that opens the operation");
        BreakerState open = a.state(op);
        assertTrue(open.open(), "open after 1 of 1 failures");
        clock.advance(Duration.ofSeconds(10));
        interruptDuring(a, op); // A's trial is interrupted
        BreakerState after = b.state(op);
        assertEquals(open.open(), after.open(), "open after an interrupted trial");
        assertEquals(open.version(), after.version(), "version after an interrupted trial");
        assertEquals(open.openCount(), after.openCount(), "openCount after an interrupted trial");
        assertEquals(open.openedAt(), after.openedAt(), "openedAt after an interrupted trial");
        assertEquals(Outcome.RAN, call(b, op, true), "breaker B's trial right after A's interrupted trial (the "
                + "claim must have been given back)");
        assertFalse(a.state(op).open(), "B's successful trial closes the operation");
    }

    /** Runs a call through {@code breaker} on its own thread, interrupts it while it waits, and joins it. */
    private void interruptDuring(CircuitBreaker breaker, String op) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Thread t = new Thread(() -> {
            try {
                breaker.execute(op, () -> {
                    entered.countDown();
                    Thread.sleep(patience().toMillis() * 6);
                    return "never";
                });
            } catch (InterruptedException expected) {
                interrupted.set(true);
            } catch (CircuitOpenException e) {
                entered.countDown(); // reported below
            }
        }, "tck-interrupted-call");
        t.setDaemon(true);
        t.start();
        assertTrue(entered.await(patience().toMillis(), TimeUnit.MILLISECONDS), "the call must start");
        t.interrupt();
        t.join(patience().toMillis());
        assertTrue(interrupted.get(), "the call must run and end with its own InterruptedException");
    }

    /**
     * Runs {@code pattern} (S success, F failure) through two breakers that share one operation, each call made by
     * the breaker {@code who} picks, the clock advancing {@code stepMillis} after each; fails unless every call
     * runs and, after the last, both breakers reject.
     */
    private void opensExactlyAtTheLastCall(CircuitBreaker[] both, MutableClock clock, String op, String pattern,
            long stepMillis, IntUnaryOperator who, String why) {
        for (int i = 0; i < pattern.length(); i++) {
            int b = who.applyAsInt(i);
            assertEquals(Outcome.RAN, call(both[b], op, pattern.charAt(i) == 'S'), "call " + (i + 1) + " of "
                    + pattern.length() + " (through breaker " + (b == 0 ? "A" : "B") + ") must run: the rate is not "
                    + "crossed before the last call (" + why + ")");
            clock.advanceMillis(stepMillis);
        }
        assertEquals(Outcome.REJECTED, call(both[0], op, true), "breaker A after the call that crossed the rate ("
                + why + ")");
        assertEquals(Outcome.REJECTED, call(both[1], op, true), "breaker B after the call that crossed the rate ("
                + why + ")");
    }

    /**
     * R7.11 Two breakers on two clients with a time window of 10 s, failure rate 50 % and minimum 20 calls share
     * one operation: outcomes older than 10 s stop counting, and the breakers open exactly at the call that brings
     * the window to 50 %, whichever breaker makes it. If this fails, check the store's time window (R10.2, R10.3)
     * and that get returns fresh state.
     */
    @Test
    @DisplayName("R7.11 a time window of 10 s at 50 %, minimum 20, opens both breakers at the call crossing it")
    default void r7_11_timeWindowAcrossBreakers() {
        for (int variant = 0; variant < 2; variant++) {
            MutableClock clock = new MutableClock(T0);
            CircuitBreaker[] both = new CircuitBreaker[2];
            for (int i = 0; i < 2; i++) {
                both[i] = build(breaker(client(), clock).slidingWindow(SlidingWindowType.TIME_BASED, 10)
                        .failureRateThreshold(50).minimumNumberOfCalls(20));
            }
            String op = key("time-window-" + variant);
            for (int i = 0; i < 10; i++) {
                assertEquals(Outcome.RAN, call(both[i % 2], op, false), "early failure " + (i + 1)
                        + " of 10 (below the minimum of 20 calls)");
                clock.advanceMillis(10);
            }
            clock.advanceMillis(11_000); // the early failures leave the window
            // 12 successes and 8 failures (40 %), then failures: 9 of 21, 10 of 22, 11 of 23, 12 of 24 = 50 %
            String pattern = "SSF".repeat(6) + "FF" + "FFFF";
            int v = variant;
            opensExactlyAtTheLastCall(both, clock, op, pattern, 100, i -> v == 0 ? i % 2 : (i * 7 + 3) % 5 < 2 ? 0 : 1,
                    "12 failures of 24 within 10 s is 50 %; the 10 failures of 11 s earlier no longer count");
        }
    }

    /**
     * R7.12 Two breakers on two clients with a count window of 50, failure rate 50 % and minimum 20 calls share one
     * operation: the breakers open exactly at the call that brings the last 50 outcomes to 50 %, whichever breaker
     * makes it. If this fails, check the store's count window (R10.1) and that get returns fresh state.
     */
    @Test
    @DisplayName("R7.12 a count window of 50 at 50 %, minimum 20, opens both breakers at the call crossing it")
    default void r7_12_countWindowAcrossBreakers() {
        for (int variant = 0; variant < 2; variant++) {
            MutableClock clock = new MutableClock(T0);
            CircuitBreaker[] both = new CircuitBreaker[2];
            for (int i = 0; i < 2; i++) {
                both[i] = build(breaker(client(), clock).slidingWindow(SlidingWindowType.COUNT_BASED, 50)
                        .failureRateThreshold(50).minimumNumberOfCalls(20));
            }
            String op = key("count-window-" + variant);
            // 30 successes then 20 failures (40 % of 50), then each failure replaces a success: 25 of 50 at call 55
            String pattern = "S".repeat(30) + "F".repeat(25);
            int v = variant;
            opensExactlyAtTheLastCall(both, clock, op, pattern, 10, i -> v == 0 ? i % 2 : (i * 5 + 1) % 3 == 0 ? 0 : 1,
                    "the last 50 outcomes hold 25 failures, 50 %, only at call 55");
        }
    }

    /**
     * R7.13 Two breakers on two clients in the policy mode METRICS_ONLY, with the count window of R7.12, run the
     * pattern that opens R7.12's breakers and then as many failures again: no call is rejected and the stored state
     * stays closed; in DISABLED the same calls leave nothing stored. If this fails, check that the store applies the
     * policy's mode (Policy.mode(), BreakerState.effectiveMode) in every outcome rule (R12.5, R12.6).
     */
    @Test
    @DisplayName("R7.13 in METRICS_ONLY or DISABLED two breakers never reject the calls that would open them")
    default void r7_13_modesAcrossBreakers() {
        for (BreakerMode mode : new BreakerMode[] {BreakerMode.METRICS_ONLY, BreakerMode.DISABLED}) {
            MutableClock clock = new MutableClock(T0);
            Store[] clients = {client(), client()};
            CircuitBreaker[] both = new CircuitBreaker[2];
            for (int i = 0; i < 2; i++) {
                both[i] = build(breaker(clients[i], clock).slidingWindow(SlidingWindowType.COUNT_BASED, 50)
                        .failureRateThreshold(50).minimumNumberOfCalls(20).mode(mode));
            }
            String op = key("mode-" + mode.wireName());
            String pattern = "S".repeat(30) + "F".repeat(80);
            for (int i = 0; i < pattern.length(); i++) {
                assertEquals(Outcome.RAN, call(both[i % 2], op, pattern.charAt(i) == 'S'), "call " + (i + 1) + " of "
                        + pattern.length() + " in " + mode + ": no call is rejected");
                clock.advanceMillis(10);
            }
            Optional<BreakerState> stored = clients[0].get(op);
            if (mode == BreakerMode.DISABLED) {
                assertEquals(Optional.empty(), stored, "in DISABLED nothing is recorded");
            } else {
                assertFalse(stored.isPresent() && stored.get().open(), "in METRICS_ONLY the breaker never opens: "
                        + stored);
            }
        }
    }

    /**
     * R7.14 (real time, needs AtomicUpdates) Two breakers on two clients with a count window of 10, minimum 4 calls and a slow-call
     * threshold of 100 ms at a slow-call rate of 100 %: four calls that hang (two through each breaker) are counted
     * as slow while they still run, so both breakers open before any of them ends, and each call is counted once
     * when they then fail. If this fails, check slow_call and slow_call_failed (R11.3, R11.4) and that get returns
     * fresh state.
     */
    @Test
    @DisplayName("R7.14 (real time) calls that hang open both breakers before any of them ends")
    default void r7_14_hangingCallsOpenBeforeTheyEnd() throws Exception {
        // the four deadlines write at once: only an atomic store counts them all (a get-then-put loses some)
        TckSupport.need(client(), dev.redeye.spi.AtomicUpdates.class);
        CircuitBreaker[] both = new CircuitBreaker[2];
        for (int i = 0; i < 2; i++) {
            both[i] = build(CircuitBreaker.builder().store(client()).closeStore(false).jitter(0.0)
                    .slidingWindow(SlidingWindowType.COUNT_BASED, 10).minimumNumberOfCalls(4)
                    .slowCallRateThreshold(100).slowCallDurationThreshold(Duration.ofMillis(100)));
        }
        String op = key("hanging");
        CountDownLatch release = new CountDownLatch(1);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            java.util.List<java.util.concurrent.Future<String>> hung = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                CircuitBreaker b = both[i % 2];
                hung.add(threads.submit(() -> b.execute(op, () -> {
                    release.await();
                    throw new IllegalStateException("the hanging dependency gave up (R7.14)");
                })));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!both[0].state(op).open() && System.nanoTime() < deadline) {
                sleep(10);
            }
            assertTrue(both[0].state(op).open(), "four calls past the slow-call threshold must open the breaker "
                    + "while they run: " + both[0].state(op));
            for (java.util.concurrent.Future<String> f : hung) {
                assertFalse(f.isDone(), "the breaker opened before any hanging call ended");
            }
            for (CircuitBreaker b : both) {
                assertEquals(Outcome.REJECTED, call(b, op, true), "each breaker rejects once the hanging calls opened it");
            }
            release.countDown();
            for (java.util.concurrent.Future<String> f : hung) {
                assertThrows(java.util.concurrent.ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
            }
            BreakerState s = both[1].state(op);
            assertEquals(4, s.window().calls(), "each hanging call counted once: " + s);
            assertEquals(4, s.window().slowCalls(), "each counted as slow: " + s);
        } finally {
            release.countDown();
            threads.shutdownNow();
        }
    }
}

package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.api.BreakerState;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.spi.Store;
import dev.redeye.tck.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Atomic vs best-effort: the same backend used through its atomic capabilities, and through
 * {@link BestEffortStore} (get/put only, as a naive shared breaker would), under 8 threads over 2 clients
 * (2 breakers, 4 threads each; 2 clients stand for 2 processes).
 *
 * <ul>
 * <li>Lost failures: every thread records {@value #FAILURES_PER_THREAD} failures through {@code execute}
 * with a threshold never reached; lost = failures recorded - failures stored.</li>
 * <li>Trials at recovery: in each of {@value #ROUNDS} rounds, a fresh operation is opened (5 failures), the
 * shared virtual clock moves past every instance's reset window, and the 8 threads call at once; the dependency
 * is still down and each call holds it for 50 ms of real time, so every call that runs is a concurrent trial.
 * With {@code halfOpenPermits = 1} the target is exactly 1 per round.</li>
 * </ul>
 *
 * <p>Run it (part of {@link DistributedBench}; Redis and PostgreSQL must be running):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections atomic
 * </pre>
 */
final class AtomicBench {
    static final int THREADS = 8;
    static final int FAILURES_PER_THREAD = 500;
    static final int ROUNDS = 10;
    private static final long TRIAL_HOLD_MILLIS = 50;

    private AtomicBench() {
    }

    static String run(BenchEnv env) {
        int perThread = env.quick() ? 50 : FAILURES_PER_THREAD;
        int rounds = env.quick() ? 3 : ROUNDS;
        Table t = new Table("store", "access", "failures recorded", "failures stored", "lost",
                "recovery rounds", "trials (total)", "trials per round (min-max)", "target per round");
        for (String storeName : env.stores()) {
            for (boolean atomic : new boolean[] {true, false}) {
                try (StoreFixture fixture = env.fixture(storeName, true)) {
                    long stored = lostFailures(fixture, atomic, perThread);
                    long recorded = (long) THREADS * perThread;
                    int[] trials = trials(fixture, atomic, rounds);
                    int total = 0;
                    int min = Integer.MAX_VALUE;
                    int max = 0;
                    for (int n : trials) {
                        total += n;
                        min = Math.min(min, n);
                        max = Math.max(max, n);
                    }
                    t.row(fixture.name(), atomic ? "atomic capabilities" : "best-effort (get/put only)", recorded,
                            stored, recorded - stored, rounds, total, min + "-" + max, 1);
                }
            }
        }
        return THREADS + " threads over 2 clients (2 breakers); " + perThread + " failures per thread; "
                + "halfOpenPermits 1; each trial holds the dead dependency 50 ms.\n\n" + t;
    }

    private static Store client(StoreFixture fixture, boolean atomic) {
        Store s = fixture.open();
        return atomic ? s : new BestEffortStore(s);
    }

    /** Returns the failure count stored after every thread recorded its failures. */
    static long lostFailures(StoreFixture fixture, boolean atomic, int perThread) {
        String op = "lost-failures";
        Store inspect = fixture.open();
        try (CircuitBreaker a = breaker(client(fixture, atomic), null, Integer.MAX_VALUE);
                CircuitBreaker b = breaker(client(fixture, atomic), null, Integer.MAX_VALUE)) {
            runTogether(a, b, "lost-failures", "a recording thread failed", mine -> {
                for (int k = 0; k < perThread; k++) {
                    try {
                        mine.execute(op, Load.FAILING);
                    } catch (Load.DependencyDown expected) {
                        // each call fails: that is what is being counted
                    }
                }
            });
            return inspect.get(op).map(BreakerState::failures).orElse(0);
        }
    }

    /** Returns, per round, how many calls ran as trials. */
    static int[] trials(StoreFixture fixture, boolean atomic, int rounds) {
        MutableClock clock = new MutableClock(1_700_000_000_000L);
        int[] out = new int[rounds];
        try (CircuitBreaker a = breaker(client(fixture, atomic), clock, 5);
                CircuitBreaker b = breaker(client(fixture, atomic), clock, 5)) {
            Duration window = a.config().resetTimeout();
            long pastEveryWindow = (long) (window.toMillis() * (1 + a.config().jitter())) + 1;
            for (int r = 0; r < rounds; r++) {
                String op = "trial-race-" + r;
                for (int i = 0; i < 5; i++) {
                    try {
                        a.execute(op, Load.FAILING);
                    } catch (Load.DependencyDown expected) {
                        // opening the breaker
                    }
                }
                if (b.check(op)) {
                    throw new IllegalStateException("the second client does not see the breaker open");
                }
                clock.advanceMillis(pastEveryWindow);
                out[r] = race(a, b, op);
            }
        }
        return out;
    }

    private static int race(CircuitBreaker a, CircuitBreaker b, String op) {
        AtomicInteger ran = new AtomicInteger();
        runTogether(a, b, "trial-race", "a racing thread failed", mine -> {
            try {
                mine.execute(op, () -> {
                    ran.incrementAndGet();
                    Thread.sleep(TRIAL_HOLD_MILLIS); // the trial holds the dependency: real time is the point
                    throw Load.DOWN;
                });
            } catch (CircuitOpenException | Load.DependencyDown expected) {
                // rejected, or ran as a trial and failed
            }
        });
        return ran.get();
    }

    /** What each of the {@link #THREADS} threads does with its breaker. */
    private interface Work {
        void run(CircuitBreaker mine) throws Exception;
    }

    /**
     * Runs {@code work} on {@link #THREADS} threads named {@code name-i}, half of them on {@code a} and half on
     * {@code b}, started together, and waits for them to end.
     *
     * @throws IllegalStateException with {@code failure} and the first error a thread met, if any did
     */
    private static void runTogether(CircuitBreaker a, CircuitBreaker b, String name, String failure, Work work) {
        CyclicBarrier start = new CyclicBarrier(THREADS);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            CircuitBreaker mine = i % 2 == 0 ? a : b;
            Thread th = new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    work.run(mine);
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            }, name + "-" + i);
            threads.add(th);
            th.start();
        }
        Load.joinAll(threads);
        if (!errors.isEmpty()) {
            throw new IllegalStateException(failure, errors.get(0));
        }
    }

    private static CircuitBreaker breaker(Store store, MutableClock clock, int failureThreshold) {
        CircuitBreakerBuilder b = CircuitBreaker.builder().store(store).failureThreshold(failureThreshold)
                .resetTimeout(Duration.ofSeconds(10));
        if (clock != null) {
            b.clock(clock).ticker(clock);
        }
        return b.build();
    }
}

package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.InMemoryStore;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.charts.TimelineChart;
import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The fleet: {@value #INSTANCES} instances call one dependency that dies, stays dead, then recovers, and the
 * table counts what reaches it. Time is virtual ({@link MutableClock}, shared by every breaker, redeye and
 * Resilience4j alike) and moves in ticks of {@value #TICK_MILLIS} ms: in each tick every instance makes one
 * call, and all calls of a tick are concurrent (a call that reaches the dependency is held until every instance
 * has either reached it or been rejected), which is the thundering-herd case a breaker exists for.
 *
 * <p>Timeline: healthy for {@value #HEALTHY_SECONDS} s, dead for {@value #DEAD_SECONDS} s, then healthy until
 * every instance's call has succeeded in the same tick for 5 s (at most {@value #MAX_AFTER_SECONDS} s).
 * Breakers: redeye with the reference defaults (failureThreshold 5, resetTimeout 60 s, backoff x2 up to 8 min,
 * jitter 0.1, halfOpenPermits 1), sharing one store (one client per instance) or one local-mode breaker per
 * instance; Resilience4j 2.4.0 with its defaults (50 % failure rate over the last 100 calls, at least 100 calls,
 * 60 s open, 10 calls in half-open), one per instance.
 *
 * <p>With {@code --chart-dir DIR} it also draws the run's own per-tick counts of redeye (shared store, the
 * first store of the run), redeye per instance and Resilience4j into {@code DIR/fleet.png} ({@link #chart}) and
 * prints the Markdown image line for it under the table.
 *
 * <p>Run it (part of {@link DistributedBench}; Redis and PostgreSQL must be running):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections fleet
 * </pre>
 */
final class FleetBench {
    static final int INSTANCES = 10;
    static final long TICK_MILLIS = 100;
    static final long HEALTHY_SECONDS = 30;
    static final long DEAD_SECONDS = 300;
    static final long MAX_AFTER_SECONDS = 900;
    private static final long SETTLED_TICKS = 50;
    private static final String OP = "fleet-dependency";
    private static final long START = 1_700_000_000_000L;
    /** The chart's file name in the {@code --chart-dir} directory. */
    static final String CHART_FILE = "fleet.png";

    private FleetBench() {
    }

    /** What reached the dependency in each tick of one scenario, for the chart. */
    record Trace(String name, int[] calledPerTick) {
    }

    static String run(BenchEnv env) {
        List<Trace> charted = new ArrayList<>();
        Table t = new Table("fleet of " + INSTANCES, "calls reaching the dead dependency", "trials while dead",
                "concurrent trials at recovery", "trials from recovery to closed", "full recovery after (s)",
                "calls rejected after recovery", "real time (s)");
        for (String s : env.stores()) {
            try (StoreFixture fixture = env.fixture(s, true)) {
                Trace trace = scenario(t, "redeye, shared store: " + s,
                        (clock, dep) -> redeye(CircuitBreaker.builder().store(fixture.open()).clock(clock)
                                .ticker(clock).build(), dep));
                if (charted.isEmpty()) {
                    charted.add(trace); // the stores give the same counts: the chart shows the first
                }
            }
        }
        if (env.has("memory")) {
            // the same fleet without backoff: what the defaults' x2 backoff costs in recovery time, and saves in probes
            InMemoryStore shared = new InMemoryStore();
            try {
                scenario(t, "redeye, shared store: memory, backoffMultiplier 1",
                        (clock, dep) -> redeye(CircuitBreaker.builder().store(shared.newClient()).clock(clock)
                                .ticker(clock).backoffMultiplier(1).build(), dep));
            } finally {
                shared.close();
            }
        }
        charted.add(scenario(t, "redeye, per instance (local mode)",
                (clock, dep) -> redeye(CircuitBreaker.builder().clock(clock).ticker(clock).build(), dep)));
        charted.add(scenario(t, "Resilience4j, per instance (defaults)", FleetBench::resilience4j));
        String text = "Virtual time, ticks of " + TICK_MILLIS + " ms, one call per instance per tick, all calls of a tick"
                + " concurrent; dependency healthy " + HEALTHY_SECONDS + " s, dead " + DEAD_SECONDS
                + " s, then healthy.\n\n" + t
                + "\n\"Concurrent trials at recovery\": trial calls in the first tick after the dependency recovered"
                + " in which any trial ran. \"Trials from recovery to closed\": every trial call from the recovery"
                + " until every instance's call succeeds.\n";
        if (env.chartDir() != null) {
            Path file = env.chartDir().resolve(CHART_FILE);
            try {
                chart(charted).write(file);
            } catch (IOException e) {
                throw new UncheckedIOException("could not write the fleet chart to " + file, e);
            }
            text += "\n![Fleet: calls reaching the dependency over time, per second and cumulative while dead]("
                    + file + ")\n";
        }
        return text;
    }

    /**
     * The fleet chart of the run's own traces: calls reaching the dependency per second (healthy calls
     * included, so the drop at the outage and the return after recovery show), and the calls that reached the
     * dead dependency, cumulative on a log axis (the table's first column, over time).
     */
    static TimelineChart chart(List<Trace> traces) {
        long ticksPerSecond = 1000 / TICK_MILLIS;
        double deadFrom = HEALTHY_SECONDS;
        double recovered = HEALTHY_SECONDS + DEAD_SECONDS;
        TimelineChart.Builder b = TimelineChart.builder("Fleet of " + INSTANCES + ": a dependency dies for "
                        + DEAD_SECONDS + " s, then recovers")
                .subtitle("virtual time, one call per instance every " + TICK_MILLIS + " ms; breakers at their "
                        + "defaults; figures of this run; a line ends " + SETTLED_TICKS * TICK_MILLIS / 1000
                        + " s after its fleet fully recovered")
                .xAxis("virtual time (s)")
                .size(1000, 720)
                .panel("calls reaching the dependency", "calls per second", false);
        for (Trace tr : traces) {
            int seconds = (int) (tr.calledPerTick().length / ticksPerSecond); // whole seconds only
            double[] x = new double[seconds];
            double[] y = new double[seconds];
            for (int i = 0; i < seconds * ticksPerSecond; i++) {
                y[(int) (i / ticksPerSecond)] += tr.calledPerTick()[i];
            }
            for (int sec = 0; sec < seconds; sec++) {
                x[sec] = sec;
            }
            b.line(tr.name(), x, y);
        }
        b.span(deadFrom, recovered, "dependency dead");
        b.panel("calls that reached the dead dependency, so far", "calls (log scale)", true);
        int deadFromTick = (int) (HEALTHY_SECONDS * ticksPerSecond);
        int recoveredTick = (int) ((HEALTHY_SECONDS + DEAD_SECONDS) * ticksPerSecond);
        for (Trace tr : traces) {
            int[] called = tr.calledPerTick();
            int n = Math.max(0, called.length - deadFromTick) + 1;
            double[] x = new double[n];
            double[] y = new double[n];
            long sum = 0;
            for (int i = 0; i < n; i++) {
                int tick = deadFromTick + i;
                x[i] = tick * TICK_MILLIS / 1000.0;
                if (i > 0 && tick - 1 < recoveredTick) {
                    sum += called[tick - 1]; // the calls of the tick before this point, while dead
                }
                y[i] = sum;
            }
            b.line(tr.name(), x, y);
        }
        b.span(deadFrom, recovered, "dependency dead");
        return b.build();
    }

    /** One instance of the fleet: its breaker with the dependency call bound in. */
    interface Member extends AutoCloseable {
        /** Calls the dependency through the breaker; returns whether the call ran as a half-open trial. */
        boolean call();

        @Override
        void close();
    }

    @FunctionalInterface
    interface MemberFactory {
        Member create(MutableClock clock, Supplier<Object> dependency);
    }

    private static Member redeye(CircuitBreaker breaker, Supplier<Object> dependency) {
        return new Member() {
            @Override
            public boolean call() {
                long trialsBefore = breaker.metrics(OP).trials();
                try {
                    breaker.execute(OP, dependency::get);
                } catch (CircuitOpenException | Load.DependencyDown expected) {
                    // rejected, or ran and failed: the dependency itself counts what reached it
                }
                return breaker.metrics(OP).trials() > trialsBefore;
            }

            @Override
            public void close() {
                breaker.close();
            }
        };
    }

    private static Member resilience4j(MutableClock clock, Supplier<Object> dependency) {
        io.github.resilience4j.circuitbreaker.CircuitBreaker cb = io.github.resilience4j.circuitbreaker.CircuitBreaker
                .of("fleet", CircuitBreakerConfig.custom().clock(clock).build());
        Supplier<Object> decorated = io.github.resilience4j.circuitbreaker.CircuitBreaker.decorateSupplier(cb,
                dependency);
        return new Member() {
            @Override
            public boolean call() {
                boolean wasClosed = cb.getState() == io.github.resilience4j.circuitbreaker.CircuitBreaker.State.CLOSED;
                boolean[] ran = new boolean[1];
                try {
                    decorated.get();
                    ran[0] = true;
                } catch (Load.DependencyDown e) {
                    ran[0] = true;
                } catch (CallNotPermittedException expected) {
                    // rejected
                }
                return ran[0] && !wasClosed;
            }

            @Override
            public void close() {
            }
        };
    }

    /** The dependency: dead or alive, and the per-tick gate that makes every call of a tick concurrent. */
    private static final class Dependency {
        volatile boolean dead;
        volatile CountDownLatch decided;

        Object call() {
            CountDownLatch d = decided;
            d.countDown();
            try {
                if (!d.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the other instances never decided within 30 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (dead) {
                throw Load.DOWN;
            }
            return Load.OK;
        }
    }

    /** One instance's thread: one call per tick. */
    private static final class Runner implements Runnable {
        final Dependency dependency;
        final CyclicBarrier start;
        final CyclicBarrier end;
        Member member;
        volatile boolean stop;
        // written by this runner before the end barrier, read by the driver after it
        boolean called;
        boolean trial;
        Throwable error;

        Runner(Dependency dependency, CyclicBarrier start, CyclicBarrier end) {
            this.dependency = dependency;
            this.start = start;
            this.end = end;
        }

        Object dependencyCall() {
            called = true;
            return dependency.call();
        }

        @Override
        public void run() {
            try {
                while (true) {
                    start.await(60, TimeUnit.SECONDS);
                    if (stop) {
                        return;
                    }
                    called = false;
                    trial = false;
                    try {
                        trial = member.call();
                    } catch (RuntimeException e) {
                        error = e;
                    }
                    if (!called) {
                        dependency.decided.countDown();
                    }
                    end.await(60, TimeUnit.SECONDS);
                }
            } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                error = e;
            }
        }
    }

    private static Trace scenario(Table t, String name, MemberFactory factory) {
        MutableClock clock = new MutableClock(START);
        Dependency dep = new Dependency();
        CyclicBarrier start = new CyclicBarrier(INSTANCES + 1);
        CyclicBarrier end = new CyclicBarrier(INSTANCES + 1);
        List<Runner> runners = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < INSTANCES; i++) {
            Runner r = new Runner(dep, start, end);
            r.member = factory.create(clock, r::dependencyCall);
            runners.add(r);
            Thread th = new Thread(r, "fleet-" + i);
            threads.add(th);
            th.start();
        }
        long deadFrom = START + HEALTHY_SECONDS * 1000;
        long recoverAt = deadFrom + DEAD_SECONDS * 1000;
        long reachedDead = 0;
        long trialsDead = 0;
        long firstTrialTick = -1;
        long trialsAfter = 0;
        long rejectedAfter = 0;
        long recoveredAt = -1;
        long settled = 0;
        int[] calledPerTick = new int[(int) ((HEALTHY_SECONDS + DEAD_SECONDS + MAX_AFTER_SECONDS) * 1000 / TICK_MILLIS
                + SETTLED_TICKS + 1)];
        int tick = 0;
        long realStart = System.nanoTime();
        try {
            while (true) {
                long now = clock.millis();
                boolean after = now >= recoverAt;
                if (after && (settled >= SETTLED_TICKS || now - recoverAt > MAX_AFTER_SECONDS * 1000)) {
                    break;
                }
                dep.dead = now >= deadFrom && !after;
                dep.decided = new CountDownLatch(INSTANCES);
                await(start);
                await(end);
                int called = 0;
                int trials = 0;
                for (Runner r : runners) {
                    if (r.error != null) {
                        throw new IllegalStateException(name + ": an instance failed", r.error);
                    }
                    called += r.called ? 1 : 0;
                    trials += r.trial ? 1 : 0;
                }
                calledPerTick[tick++] = called;
                if (dep.dead) {
                    reachedDead += called;
                    trialsDead += trials;
                } else if (after && recoveredAt < 0) {
                    trialsAfter += trials;
                    rejectedAfter += INSTANCES - called;
                    if (trials > 0 && firstTrialTick < 0) {
                        firstTrialTick = trials;
                    }
                    if (called == INSTANCES && trials == 0) {
                        recoveredAt = now;
                    }
                }
                if (recoveredAt >= 0) {
                    settled++;
                }
                clock.advanceMillis(TICK_MILLIS);
            }
        } finally {
            for (Runner r : runners) {
                r.stop = true;
            }
            try {
                start.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                for (Thread th : threads) {
                    th.interrupt();
                }
            }
            Load.joinAll(threads);
            for (Runner r : runners) {
                r.member.close();
            }
        }
        double realSeconds = (System.nanoTime() - realStart) / 1e9;
        t.row(name, reachedDead, trialsDead, Math.max(0, firstTrialTick), trialsAfter,
                recoveredAt < 0 ? "not within " + MAX_AFTER_SECONDS : Table.fmt((recoveredAt - recoverAt) / 1000.0, 1),
                rejectedAfter, Table.fmt(realSeconds, 1));
        return new Trace(name, Arrays.copyOf(calledPerTick, tick));
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("an instance did not finish its tick within 60 s", e);
        }
    }
}

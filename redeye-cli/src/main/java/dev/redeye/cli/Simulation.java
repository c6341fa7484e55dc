package dev.redeye.cli;

import dev.redeye.CircuitBreaker;
import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreUnavailableException;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreOperation;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.StoreUris;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the fleet simulation: {@code instances} breakers, each with its own store client, each calling
 * one {@link SimulatedDependency} from {@code threadsPerInstance} threads, for {@code duration} of real time.
 *
 * <p>In {@link Mode#SHARED} mode every breaker keeps its state in one shared store (for {@code memory:}, one
 * {@link InMemoryStore} with a {@linkplain InMemoryStore#newClient() client} per instance; for any other URI,
 * one {@link Stores#open(String, OpenMode) Stores.open(uri, STRICT)} per instance, so that an unreachable
 * store fails the run at once, on a fresh operation name that is deleted afterwards). In
 * {@link Mode#PER_INSTANCE} mode each breaker has its own private in-memory store, as with a local-only
 * library.
 *
 * <p>Cost: {@code instances * threadsPerInstance} platform threads for the duration, mostly sleeping (the
 * dependency's latency and the think time between calls; a rejected call also waits the think time, so
 * nothing spins). Every thread, client and breaker is closed before {@link #run()} returns. One run at a
 * time per instance of this class.
 */
final class Simulation {
    private static final Logger LOG = LoggerFactory.getLogger(Simulation.class);

    /** How the instances keep their breaker state. */
    enum Mode {
        SHARED("shared"), PER_INSTANCE("per-instance");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }

        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.label.equalsIgnoreCase(s) || m.name().equalsIgnoreCase(s)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("unknown mode '" + s + "' (expected shared or per-instance)");
        }
    }

    /** Everything a run is parameterised by. Validated by the command before a run. */
    record Config(int instances, int threadsPerInstance, Duration duration, Duration downAt, Duration upAt,
            int failureThreshold, Duration resetTimeout, double backoffMultiplier, double jitter,
            Duration callLatency, Duration thinkTime, String storeUri, long seed, int quorum, int badInstance,
            int slidingWindowSeconds, double failureRateThreshold, int minimumNumberOfCalls) {
        Config {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(downAt, "downAt");
            Objects.requireNonNull(upAt, "upAt");
            Objects.requireNonNull(resetTimeout, "resetTimeout");
            Objects.requireNonNull(callLatency, "callLatency");
            Objects.requireNonNull(thinkTime, "thinkTime");
            Objects.requireNonNull(storeUri, "storeUri");
        }
    }

    /** One transition (or a dependency change when {@code instance} is 0) at a time since the start. */
    record TimelineEntry(long atMs, int instance, String kind, String from, String to, long version) {
    }

    /**
     * The figures of one run; also its JSON form. The trial figures ({@code failedTrials}, {@code trialCalls},
     * {@code maxConcurrentTrials}) are {@code null} when the store has no {@code TrialClaims} capability: a
     * trial is recognised by the claim the engine makes through the store, and without one the engine claims
     * trials inside each instance, out of sight (the dead-dependency counts then include any trials).
     *
     * <p>The normal calls that reached the dead dependency ({@code reachedDeadDependencyByNormalCalls}) are
     * sorted by where the failure each recorded landed in the stored history ({@link OpeningProbe}):
     * {@code failuresBeforeOpening} before the breaker's first opening (the last of them opened it; more than
     * {@code failureThreshold} when a success recorded meanwhile reset the count); {@code inFlightAtOpening}
     * after it: the call was admitted before the opening was stored and was still running when it was (its
     * read may have raced the opening); {@code failuresNotRecorded}, whose write failed (a store error). The
     * three add up to the normal calls. {@code admittedAfterOpening}, among those in flight, were admitted by a
     * read that started after the opening had been stored, which a correct store never allows: 0.
     * {@code inFlightRecordedAfterClose}, among those in flight, landed after a trial had closed the breaker
     * again (a slow store): failureThreshold of them open it a second time.
     */
    record Result(String mode, int instances, int threadsPerInstance, String store, String operation,
            int failureThreshold, long resetTimeoutMs, double backoffMultiplier, double jitter, long durationMs,
            long downAtMs, long upAtMs, long callLatencyMs, long thinkTimeMs, long seed,
            long calls, long succeeded, long failed, long rejected, long storeUnavailable, long otherErrors,
            long storeErrors,
            long reachedDeadDependency, long reachedDeadDependencyByNormalCalls, Long failedTrials,
            long failuresBeforeOpening, long inFlightAtOpening, long admittedAfterOpening,
            long inFlightRecordedAfterClose, long failuresNotRecorded, Long trialCalls,
            Integer maxConcurrentTrials, long openings, long transitions, int slidingWindowSeconds,
            double failureRateThreshold, int minimumNumberOfCalls, int quorum, int badInstance,
            long healthyInstancesRejected, long outliers,
            long storeOps, double storeOpsPerCall, Map<String, Long> storeOpsByKind,
            Long recoveredAfterUpMs, int closedAtEnd, List<TimelineEntry> timeline) {
    }

    private final Config config;
    private final Mode mode;
    private final String operation;
    private final LongAdder calls = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder storeUnavailable = new LongAdder();
    private final LongAdder otherErrors = new LongAdder();
    private final LongAdder storeErrors = new LongAdder();
    /** Calls of the instances other than the bad one rejected while the dependency was up. */
    private final LongAdder healthyRejected = new LongAdder();
    /** Outlier trips of any instance ({@code onOutlier}). */
    private final LongAdder outliers = new LongAdder();
    private final List<OpeningProbe.Opening> probed = new ArrayList<>();
    private final ConcurrentLinkedQueue<TimelineEntry> timeline = new ConcurrentLinkedQueue<>();
    private final AtomicInteger openBreakers = new AtomicInteger();
    private volatile long startNanos;
    private volatile SimulatedDependency dependency;
    private volatile TickCounts callsPerTick;
    private volatile TickCounts rejectedPerTick;
    private volatile TickCounts trialsPerTick;
    private volatile boolean trialsVisible;
    private volatile boolean stop;

    Simulation(Config config, Mode mode) {
        this.config = Objects.requireNonNull(config, "config");
        this.mode = Objects.requireNonNull(mode, "mode");
        boolean remoteShared = mode == Mode.SHARED && !StoreOption.isMemory(config.storeUri());
        // A fresh name on a real store, so a run never reads an earlier run's state.
        this.operation = remoteShared
                ? "redeye-simulate-" + UUID.randomUUID().toString().substring(0, 8)
                : "dependency";
    }

    Mode mode() {
        return mode;
    }

    /** Asks a running simulation to stop early (Ctrl-C); {@link #run()} then returns what it counted. */
    void stop() {
        stop = true;
    }

    /**
     * What happened in each time bucket ({@code tickMillis} wide, from the start of the run): calls that reached
     * the dependency (up or down, trials included), calls the breaker rejected, and trial calls ({@code null}
     * when the store has no {@code TrialClaims} capability, as in {@link Result}).
     */
    record PerTick(long tickMillis, long[] calls, long[] rejected, long[] trials) {
    }

    /**
     * The per-bucket counts of the run, for the chart; call it after {@link #run()} has returned.
     *
     * @throws IllegalStateException if the run has not started
     */
    PerTick perTick() {
        TickCounts c = callsPerTick;
        if (c == null) {
            throw new IllegalStateException("the simulation has not run");
        }
        return new PerTick(TickCounts.tickMillisFor(config.duration().toMillis()), c.snapshot(),
                rejectedPerTick.snapshot(), trialsVisible ? trialsPerTick.snapshot() : null);
    }

    /** A live view of a running simulation, for the progress line. */
    record Progress(double elapsedSeconds, double durationSeconds, boolean started, boolean dependencyDown,
            int openBreakers, long reachedDeadDependency, long rejected) {
    }

    /** What the run has counted so far; cheap (a few atomic reads). */
    Progress progress() {
        SimulatedDependency dep = dependency;
        double total = config.duration().toMillis() / 1000.0;
        if (dep == null) {
            return new Progress(0, total, false, false, 0, 0, 0);
        }
        long now = System.nanoTime();
        return new Progress(Math.min(total, (now - startNanos) / 1e9), total, true, dep.isDown(now),
                openBreakers.get(), dep.reachedWhileDown(), rejected.sum());
    }

    /**
     * Runs the simulation to its end (or until {@link #stop()}), then closes everything it opened.
     *
     * @throws IllegalArgumentException      if the store URI's scheme is unknown or the URI is malformed
     * @throws StoreException                if the store cannot be reached
     * @throws InterruptedException          if the calling thread is interrupted while waiting
     */
    Result run() throws InterruptedException {
        int n = config.instances();
        List<Store> clients = new ArrayList<>(n);
        List<CountingStore> counting = new ArrayList<>(n);
        List<CircuitBreaker> breakers = new ArrayList<>(n);
        Store sharedBackend = null;
        ExecutorService pool = null;
        boolean[] open = new boolean[n];
        try {
            if (mode == Mode.SHARED) {
                Store first = Stores.open(config.storeUri(), OpenMode.STRICT);
                if (first instanceof InMemoryStore) {
                    // One in-memory backend stands for the shared store; each instance gets its own client.
                    sharedBackend = first;
                    for (int i = 0; i < n; i++) {
                        clients.add(((InMemoryStore) first).newClient());
                    }
                } else {
                    clients.add(first);
                    for (int i = 1; i < n; i++) {
                        clients.add(Stores.open(config.storeUri(), OpenMode.STRICT));
                    }
                }
            } else {
                for (int i = 0; i < n; i++) {
                    clients.add(new InMemoryStore());
                }
            }
            warmUp(clients.get(0));
            probed.clear();
            probed.add(new OpeningProbe.Opening());
            for (int i = 0; i < n; i++) {
                if (mode == Mode.PER_INSTANCE && i > 0) {
                    probed.add(new OpeningProbe.Opening());
                }
                OpeningProbe.Opening opening = probed.get(probed.size() - 1);
                CountingStore c = new CountingStore(new OpeningProbe(clients.get(i), opening), TrialMark.LISTENER);
                counting.add(c);
                int instance = i;
                CircuitBreakerBuilder builder = CircuitBreaker.builder();
                if (config.slidingWindowSeconds() > 0) {
                    builder.slidingWindow(SlidingWindowType.TIME_BASED, config.slidingWindowSeconds())
                            .failureRateThreshold(config.failureRateThreshold())
                            .minimumNumberOfCalls(config.minimumNumberOfCalls());
                }
                breakers.add(builder
                        .store(c)
                        .closeStore(true)
                        .failureThreshold(config.failureThreshold())
                        .resetTimeout(config.resetTimeout())
                        .backoffMultiplier(config.backoffMultiplier())
                        .jitter(config.jitter())
                        .halfOpenPermits(1)
                        .quorum(config.quorum())
                        .instanceId("instance-" + (i + 1))
                        .onOutlier(o -> outliers.increment())
                        .onStateChange(e -> onTransition(instance, e, open))
                        .onStoreError((op, t) -> storeErrors.increment())
                        .build());
            }
            clients.clear(); // the breakers own and close them now

            int threads = n * config.threadsPerInstance();
            pool = Executors.newFixedThreadPool(threads, namedThreads(mode.label()));
            SplittableRandom seeds = new SplittableRandom(config.seed());
            List<SplittableRandom> randoms = new ArrayList<>(threads);
            for (int t = 0; t < threads; t++) {
                randoms.add(seeds.split());
            }
            startNanos = System.nanoTime();
            long end = startNanos + config.duration().toNanos();
            long tickNanos = TickCounts.tickMillisFor(config.duration().toMillis()) * 1_000_000L;
            int ticks = (int) ((config.duration().toNanos() + tickNanos - 1) / tickNanos);
            callsPerTick = new TickCounts(startNanos, tickNanos, ticks);
            rejectedPerTick = new TickCounts(startNanos, tickNanos, ticks);
            trialsPerTick = new TickCounts(startNanos, tickNanos, ticks);
            dependency = new SimulatedDependency(startNanos, config.downAt().toNanos(), config.upAt().toNanos(),
                    callsPerTick, trialsPerTick, config.badInstance() - 1);
            if (config.downAt().compareTo(config.duration()) < 0) {
                timeline.add(new TimelineEntry(config.downAt().toMillis(), 0, "dependency_down", "", "", 0));
            }
            if (config.upAt().compareTo(config.duration()) < 0) {
                timeline.add(new TimelineEntry(config.upAt().toMillis(), 0, "dependency_up", "", "", 0));
            }
            for (int t = 0; t < threads; t++) {
                int instance = t / config.threadsPerInstance();
                CircuitBreaker breaker = breakers.get(instance);
                SplittableRandom rnd = randoms.get(t);
                pool.execute(() -> work(instance, breaker, rnd, end));
            }
            pool.shutdown();
            // Workers stop by themselves at the end; the margin covers a last call and its think time.
            long margin = config.callLatency().toMillis() * 2 + config.thinkTime().toMillis() + 5_000;
            if (!pool.awaitTermination(config.duration().toMillis() + margin, TimeUnit.MILLISECONDS)) {
                stop = true;
                pool.shutdownNow();
                pool.awaitTermination(5, TimeUnit.SECONDS);
            }
            long elapsedMs = Math.min(config.duration().toMillis(), (System.nanoTime() - startNanos) / 1_000_000);
            // Before the end-of-run reads below, which are not calls.
            Map<String, Long> opsByKind = opsByKind(counting);

            int closedAtEnd = 0;
            for (CircuitBreaker b : breakers) {
                try {
                    if (b.status(operation) == BreakerStatus.CLOSED) {
                        closedAtEnd++;
                    }
                } catch (RuntimeException e) {
                    LOG.debug("status at the end failed", e);
                }
            }
            if (mode == Mode.SHARED && sharedBackend == null) {
                try {
                    counting.get(0).delete(operation);
                } catch (StoreException e) {
                    LOG.warn("could not delete the simulation's state '{}': {}", operation, e.getMessage());
                }
            }
            trialsVisible = counting.get(0).capability(TrialClaims.class).isPresent();
            return result(opsByKind, closedAtEnd, elapsedMs, trialsVisible);
        } finally {
            stop = true;
            if (pool != null) {
                pool.shutdownNow();
            }
            for (CircuitBreaker b : breakers) {
                closeQuietly(b);
            }
            for (Store s : clients) {
                closeQuietly(s);
            }
            if (sharedBackend != null) {
                closeQuietly(sharedBackend);
            }
        }
    }

    /**
     * Runs every code path of a run once before the clock starts (open, reject, trial, close) on a scratch
     * operation, then deletes it: the first failure would otherwise pay class loading while the other
     * threads pile up behind it, which would blur the figures at the moment the dependency goes down.
     */
    private void warmUp(Store client) {
        String scratch = operation + "-warmup-" + UUID.randomUUID().toString().substring(0, 8);
        client.get(scratch); // an unreachable store fails the run here, with the store's own message
        try (CircuitBreaker b = CircuitBreaker.builder().store(client).closeStore(false)
                .failureThreshold(config.failureThreshold()).resetTimeout(config.resetTimeout()).build()) {
            for (int i = 0; i < config.failureThreshold() + 1; i++) {
                try {
                    b.execute(scratch, () -> {
                        throw new SimulatedDependency.DownException();
                    });
                } catch (SimulatedDependency.DownException | CircuitOpenException expected) {
                    // warming the failure and rejection paths
                }
            }
            b.forceHalfOpen(scratch);
            b.execute(scratch, () -> "ok");
            client.delete(scratch);
        } catch (RuntimeException e) {
            LOG.debug("warm-up failed; the run goes on", e);
        }
    }

    private void work(int instance, CircuitBreaker breaker, SplittableRandom rnd, long end) {
        long latency = config.callLatency().toNanos();
        long think = config.thinkTime().toNanos();
        // Stagger the start so the threads do not call in lockstep.
        if (!pause((long) (rnd.nextDouble() * (latency + think)))) {
            return;
        }
        while (!stop && System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
            long thisLatency = (long) (latency * (0.5 + rnd.nextDouble()));
            calls.increment();
            try {
                breaker.execute(operation, () -> dependency.call(instance, thisLatency));
                succeeded.increment();
            } catch (SimulatedDependency.DownException e) {
                failed.increment();
            } catch (CircuitOpenException e) {
                rejected.increment();
                long at = System.nanoTime();
                rejectedPerTick.add(at);
                if (instance != config.badInstance() - 1 && !dependency.isDown(at)) {
                    healthyRejected.increment();
                }
            } catch (StoreUnavailableException e) {
                storeUnavailable.increment();
            } catch (RuntimeException e) {
                otherErrors.increment();
                LOG.debug("unexpected error in the simulation", e);
            } finally {
                TrialMark.clear();
            }
            if (!pause(think)) {
                return;
            }
        }
    }

    private static boolean pause(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void onTransition(int instance, TransitionEvent e, boolean[] open) {
        long at = (System.nanoTime() - startNanos) / 1_000_000;
        timeline.add(new TimelineEntry(at, instance + 1, e.kind().wireName(), e.from().name(), e.to().name(),
                e.version()));
        int slot = mode == Mode.SHARED ? 0 : instance;
        synchronized (open) {
            boolean wasOpen = open[slot];
            boolean isOpen = e.to() != BreakerStatus.CLOSED;
            open[slot] = isOpen;
            if (isOpen != wasOpen) {
                openBreakers.addAndGet(isOpen ? 1 : -1);
            }
        }
    }

    private static Map<String, Long> opsByKind(List<CountingStore> counting) {
        Map<String, Long> byKind = new LinkedHashMap<>();
        for (StoreOperation op : StoreOperation.values()) {
            long sum = 0;
            for (CountingStore c : counting) {
                sum += c.countOf(op);
            }
            if (sum > 0) {
                byKind.put(op.name().toLowerCase(Locale.ROOT), sum);
            }
        }
        return byKind;
    }

    private Result result(Map<String, Long> byKind, int closedAtEnd, long elapsedMs, boolean trialsVisible) {
        List<TimelineEntry> events = new ArrayList<>(timeline);
        events.removeIf(e -> e.atMs() > elapsedMs && e.instance() == 0);
        events.sort(Comparator.comparingLong(TimelineEntry::atMs).thenComparingInt(TimelineEntry::instance));
        long openings = events.stream().filter(e -> e.kind().equals(TransitionKind.OPENED.wireName())).count();
        long transitions = events.stream().filter(e -> e.instance() > 0).count();

        long[] atOpening = new long[5];
        for (OpeningProbe.Opening o : probed) {
            long[] f = o.figures();
            for (int i = 0; i < f.length; i++) {
                atOpening[i] += f[i];
            }
        }
        long ops = byKind.values().stream().mapToLong(Long::longValue).sum();
        long callCount = calls.sum();
        SimulatedDependency dep = dependency;
        return new Result(mode.label(), config.instances(), config.threadsPerInstance(),
                mode == Mode.SHARED ? StoreUris.redact(config.storeUri()) : "memory:, one private store per instance",
                operation, config.failureThreshold(), config.resetTimeout().toMillis(), config.backoffMultiplier(),
                config.jitter(), config.duration().toMillis(), config.downAt().toMillis(), config.upAt().toMillis(),
                config.callLatency().toMillis(), config.thinkTime().toMillis(), config.seed(),
                callCount, succeeded.sum(), failed.sum(), rejected.sum(), storeUnavailable.sum(), otherErrors.sum(),
                storeErrors.sum(),
                dep.reachedWhileDown(), dep.reachedWhileDown() - dep.trialsWhileDown(),
                trialsVisible ? dep.trialsWhileDown() : null, atOpening[0], atOpening[1], atOpening[2], atOpening[3],
                atOpening[4],
                trialsVisible ? dep.trialCalls() : null, trialsVisible ? dep.maxConcurrentTrials() : null,
                openings, transitions, config.slidingWindowSeconds(), config.failureRateThreshold(),
                config.minimumNumberOfCalls(), config.quorum(), config.badInstance(), healthyRejected.sum(),
                outliers.sum(),
                ops, callCount == 0 ? 0.0 : Math.round(ops * 1000.0 / callCount) / 1000.0, byKind,
                recoveredAfterUp(events), closedAtEnd, events);
    }

    /**
     * How long after the dependency came back every breaker was closed again: the first close after
     * {@code upAt} in shared mode (one breaker), the last instance's first close in per-instance mode.
     */
    private Long recoveredAfterUp(List<TimelineEntry> events) {
        long up = config.upAt().toMillis();
        Map<Integer, Long> firstClose = new LinkedHashMap<>();
        for (TimelineEntry e : events) {
            if (e.instance() > 0 && e.atMs() >= up && e.to().equals(BreakerStatus.CLOSED.name())) {
                firstClose.putIfAbsent(e.instance(), e.atMs());
            }
        }
        if (firstClose.isEmpty()) {
            return null;
        }
        if (mode == Mode.SHARED) {
            return firstClose.values().stream().min(Long::compare).get() - up;
        }
        // Only instances that opened need to close; one that never opened is not waited for.
        long opened = events.stream().filter(e -> e.kind().equals(TransitionKind.OPENED.wireName()))
                .map(TimelineEntry::instance).distinct().count();
        if (firstClose.size() < opened) {
            return null;
        }
        return firstClose.values().stream().max(Long::compare).get() - up;
    }

    private static ThreadFactory namedThreads(String label) {
        AtomicInteger seq = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "redeye-sim-" + label + "-" + seq.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close failed", e);
        }
    }
}

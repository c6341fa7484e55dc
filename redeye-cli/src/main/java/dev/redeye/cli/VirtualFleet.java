package dev.redeye.cli;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.CountingStore;
import dev.redeye.InMemoryStore;
import dev.redeye.Permit;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StoreOperation;
import dev.redeye.tck.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fleet simulation in virtual time ({@code redeye simulate --virtual}): up to 10,000 instances, each a breaker
 * over one shared in-memory store, driven by one thread through a queue of events on a virtual clock (the
 * breakers' clock and ticker), so that a fleet far larger than this machine's threads runs in seconds of wall
 * time. The seed fixes the callers' start offsets and call latencies; each breaker draws its own reset-window
 * jitter, as in production, so the trials' timing (and their count) varies a little from run to run.
 *
 * <p>Each of {@code instances x threadsPerInstance} callers repeats: at its turn it asks its instance's breaker for
 * a permit ({@link CircuitBreaker#tryAcquire}); admitted, the call ends {@code callLatency} (x 0.5 to 1.5) later,
 * failed if the dependency was down when it started, and the caller's next turn comes {@code thinkTime} after
 * it ends; rejected, the next turn comes {@code thinkTime} later. Calls of different callers interleave in the
 * virtual time of their events, so calls are in flight while others start, as in the real-time run.
 *
 * <p>The store's load is every store operation the breakers made, per virtual second (all on the operation's one
 * key: the hot key), translated by {@link #costs} into each backend's own units with the costs each store's
 * README measured. The store answers in no virtual time: the run shows the load a fleet puts on its store, not
 * the store's latency (the real-time run and the benchmarks show that). No feed and no local cache: every gate
 * reads the store, the engine's default.
 */
final class VirtualFleet {
    /** The largest fleet a virtual run takes. */
    static final int MAX_INSTANCES = 10_000;

    record Config(int instances, int threadsPerInstance, Duration duration, Duration downAt, Duration upAt,
            int failureThreshold, Duration resetTimeout, double jitter, Duration callLatency, Duration thinkTime,
            long seed, int slidingWindowSeconds, double failureRateThreshold, int minimumNumberOfCalls) {
        Config {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(downAt, "downAt");
            Objects.requireNonNull(upAt, "upAt");
            Objects.requireNonNull(resetTimeout, "resetTimeout");
            Objects.requireNonNull(callLatency, "callLatency");
            Objects.requireNonNull(thinkTime, "thinkTime");
        }
    }

    /**
     * One backend's load from the run: its units per second at the peak second and on average over the run.
     *
     * @param store     the backend
     * @param unit      what is counted (commands, transactions, capacity units, ...)
     * @param peak      the busiest virtual second
     * @param mean      over the whole run
     * @param limit     the published or measured per-key limit it is read against, or null
     */
    record Load(String store, String unit, double peak, double mean, String limit) {
    }

    /** The figures of one virtual run; also its JSON form. */
    record Result(int instances, int callers, long durationMs, long downAtMs, long upAtMs, int failureThreshold,
            long seed, long calls, long succeeded, long failed, long rejected, long reachedDeadDependency,
            long openings, Long firstOpeningAfterDownMs, long storeOps, Map<String, Long> storeOpsByKind,
            double peakStoreOpsPerSecond, double meanStoreOpsPerSecond, List<Load> loads, long wallMs) {
    }

    private static final int START = 0;
    private static final int END = 1;

    /** A caller's next event: its start or the end of its call in flight. */
    private record Event(long atMs, int caller, int kind, long seq) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(atMs, o.atMs);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private static final String OPERATION = "virtual-fleet";
    private static final long EPOCH_MS = 1_800_000_000_000L;

    private final Config config;

    VirtualFleet(Config config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    Result run() {
        long wallStart = System.nanoTime();
        int n = config.instances();
        int callers = n * config.threadsPerInstance();
        long durationMs = config.duration().toMillis();
        long downAt = config.downAt().toMillis();
        long upAt = config.upAt().toMillis();
        MutableClock clock = new MutableClock(EPOCH_MS);
        AtomicLong openings = new AtomicLong();
        AtomicLong transitions = new AtomicLong();
        AtomicLong firstOpening = new AtomicLong(-1);
        int secondsOfRun = (int) ((durationMs + 999) / 1000);
        List<Tally> perSecond = new ArrayList<>(secondsOfRun);
        List<CircuitBreaker> breakers = new ArrayList<>(n);
        try (InMemoryStore backend = new InMemoryStore(); CountingStore counting = new CountingStore(backend)) {
            for (int i = 0; i < n; i++) {
                CircuitBreakerBuilder b = CircuitBreaker.builder();
                if (config.slidingWindowSeconds() > 0) {
                    b.slidingWindow(SlidingWindowType.TIME_BASED, config.slidingWindowSeconds())
                            .failureRateThreshold(config.failureRateThreshold())
                            .minimumNumberOfCalls(config.minimumNumberOfCalls());
                }
                breakers.add(b.store(counting).closeStore(false).clock(clock).ticker(clock)
                        .failureThreshold(config.failureThreshold()).resetTimeout(config.resetTimeout())
                        .jitter(config.jitter()).halfOpenPermits(1).instanceId("instance-" + (i + 1))
                        .onStateChange(e -> {
                            transitions.incrementAndGet();
                            if (e.kind() == TransitionKind.OPENED) {
                                openings.incrementAndGet();
                                firstOpening.compareAndSet(-1, clock.millis() - EPOCH_MS);
                            }
                        }).build());
            }
            SplittableRandom rnd = new SplittableRandom(config.seed());
            PriorityQueue<Event> queue = new PriorityQueue<>();
            long seq = 0;
            long cycle = config.callLatency().toMillis() + config.thinkTime().toMillis();
            for (int c = 0; c < callers; c++) {
                queue.add(new Event((long) (rnd.nextDouble() * cycle), c, START, seq++));
            }
            Permit[] inFlight = new Permit[callers];
            boolean[] startedDown = new boolean[callers];
            long calls = 0;
            long succeeded = 0;
            long failed = 0;
            long rejected = 0;
            long reachedDead = 0;
            Tally counted = Tally.of(counting, 0);
            while (!queue.isEmpty()) {
                Event e = queue.poll();
                if (e.atMs() >= durationMs && e.kind() == START) {
                    continue; // no new calls past the end; calls in flight still end
                }
                clock.setMillis(EPOCH_MS + e.atMs());
                while (perSecond.size() < secondsOfRun && e.atMs() >= (perSecond.size() + 1) * 1000L) {
                    Tally now = Tally.of(counting, transitions.get());
                    perSecond.add(now.minus(counted));
                    counted = now;
                }
                CircuitBreaker breaker = breakers.get(e.caller() / config.threadsPerInstance());
                if (e.kind() == START) {
                    calls++;
                    Permit p = breaker.tryAcquire(OPERATION);
                    if (!p.isPermitted()) {
                        rejected++;
                        queue.add(new Event(e.atMs() + config.thinkTime().toMillis(), e.caller(), START, seq++));
                        continue;
                    }
                    boolean down = e.atMs() >= downAt && e.atMs() < upAt;
                    if (down) {
                        reachedDead++;
                    }
                    inFlight[e.caller()] = p;
                    startedDown[e.caller()] = down;
                    long latency = (long) (config.callLatency().toMillis() * (0.5 + rnd.nextDouble()));
                    queue.add(new Event(e.atMs() + latency, e.caller(), END, seq++));
                } else {
                    Permit p = inFlight[e.caller()];
                    inFlight[e.caller()] = null;
                    if (startedDown[e.caller()]) {
                        failed++;
                        p.onFailure(new SimulatedDependency.DownException());
                    } else {
                        succeeded++;
                        p.onSuccess();
                    }
                    queue.add(new Event(e.atMs() + config.thinkTime().toMillis(), e.caller(), START, seq++));
                }
            }
            Tally total = Tally.of(counting, transitions.get());
            while (perSecond.size() < secondsOfRun) {
                perSecond.add(total.minus(counted));
                counted = total;
            }
            Map<String, Long> byKind = new LinkedHashMap<>();
            for (StoreOperation op : StoreOperation.values()) {
                long v = counting.countOf(op);
                if (v > 0) {
                    byKind.put(op.method(), v);
                }
            }
            long peak = 0;
            for (Tally t : perSecond) {
                peak = Math.max(peak, t.reads() + t.writes());
            }
            double seconds = durationMs / 1000.0;
            long storeOps = total.reads() + total.writes();
            long first = firstOpening.get();
            Long firstAfterDown = first < 0 || first < downAt ? null : first - downAt;
            return new Result(n, callers, durationMs, downAt, upAt, config.failureThreshold(), config.seed(), calls,
                    succeeded, failed, rejected, reachedDead, openings.get(), firstAfterDown, storeOps, byKind, peak,
                    storeOps / seconds, costs(perSecond, total, seconds),
                    (System.nanoTime() - wallStart) / 1_000_000);
        } finally {
            for (CircuitBreaker b : breakers) {
                b.close();
            }
        }
    }

    /** What the store did, cumulated, at one moment of the run: what the backends' units are computed from. */
    record Tally(long reads, long writes, long updates, long failures, long claims, long transitions) {
        static Tally of(CountingStore c, long transitions) {
            long updates = c.countOf(StoreOperation.UPDATE);
            long claims = c.countOf(StoreOperation.CLAIM_TRIAL) + c.countOf(StoreOperation.RELEASE_TRIAL);
            long writes = updates + claims + c.countOf(StoreOperation.PUT) + c.countOf(StoreOperation.DELETE);
            long failures = c.countOf(AtomicOperation.Kind.FAILURE) + c.countOf(AtomicOperation.Kind.TRIAL_FAILURE)
                    + c.countOf(AtomicOperation.Kind.SLOW_FAILURE);
            return new Tally(c.countOf(StoreOperation.GET), writes, updates, failures, claims, transitions);
        }

        Tally minus(Tally o) {
            return new Tally(reads - o.reads, writes - o.writes, updates - o.updates, failures - o.failures,
                    claims - o.claims, transitions - o.transitions);
        }
    }

    /** One backend's unit, computed from a tally. */
    private record Unit(String store, String unit, java.util.function.ToDoubleFunction<Tally> of, String limit) {
    }

    /**
     * Each backend's units, from the costs each store module's README gives per store operation: Redis, one
     * command each (GET or EVALSHA); PostgreSQL, one short row-locked transaction per write and one statement per
     * read; DynamoDB, a read 1 RCU, an update 1 RCU (its read) plus 1 WCU for a recorded failure (a success with
     * nothing to clear writes nothing: a lower bound, 1 WCU more when there is), a trial claim or release 1 WCU, a
     * transition 1 RCU + 1 WCU more for the feed head; Hazelcast, one map call each.
     */
    private static final List<Unit> UNITS = List.of(
            new Unit("redis", "commands/s", t -> t.reads() + t.writes(),
                    "one key: BENCHMARK.md's per-key ceiling"),
            new Unit("postgres", "row-locked transactions/s", t -> t.writes(), "one row: BENCHMARK.md's per-row ceiling"),
            new Unit("postgres", "reads/s", t -> t.reads(), null),
            new Unit("dynamodb", "RCU/s (strongly consistent)", t -> t.reads() + t.updates() + t.transitions(),
                    "3,000 RCU/s per partition (AWS)"),
            new Unit("dynamodb", "WCU/s", t -> t.failures() + t.claims() + 2.0 * t.transitions(),
                    "1,000 WCU/s per partition (AWS)"),
            new Unit("hazelcast", "map calls/s on the key's partition", t -> t.reads() + t.writes(),
                    "one partition thread: BENCHMARK.md's per-key ceiling"));

    /** Each backend's load: its unit at the busiest virtual second and on average. */
    static List<Load> costs(List<Tally> perSecond, Tally total, double seconds) {
        List<Load> out = new ArrayList<>();
        for (Unit u : UNITS) {
            double peak = 0;
            for (Tally t : perSecond) {
                peak = Math.max(peak, u.of().applyAsDouble(t));
            }
            out.add(new Load(u.store(), u.unit(), peak, u.of().applyAsDouble(total) / seconds, u.limit()));
        }
        return out;
    }
}

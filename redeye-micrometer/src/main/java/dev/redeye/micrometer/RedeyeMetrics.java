package dev.redeye.micrometer;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerObserver;
import dev.redeye.CircuitBreakerObserver.CallOutcome;
import dev.redeye.CircuitBreakerObserver.CallTiming;
import dev.redeye.CircuitBreakerObserver.TrialOutcome;
import dev.redeye.ObservedOperation;
import dev.redeye.Outlier;
import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.StoreOperation;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.distribution.TimeWindowMax;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Micrometer meters for one {@link CircuitBreaker}, named after Resilience4j's: under the default
 * {@link MeterNaming#REDEYE} {@code resilience4j.circuitbreaker.*} becomes {@code redeye.circuitbreaker.*}; under
 * {@link MeterNaming#RESILIENCE4J} ({@link Builder#naming}) the meters Resilience4j defines take its exact names,
 * tags and units, so that a dashboard built for Resilience4j (its repository's Grafana dashboard among them) works
 * unchanged:
 *
 * <pre>{@code
 * CircuitBreaker breaker = CircuitBreaker.builder().store(store).build();
 * RedeyeMetrics.builder(breaker).tags("app", "checkout").build().bindTo(registry);
 * RedeyeMetrics.builder(breaker).naming(MeterNaming.RESILIENCE4J).build().bindTo(registry);   // or this
 * }</pre>
 *
 * <table>
 * <caption>Meters under redeye's naming (tag {@code name} is the operation; every meter also carries the common
 * tags)</caption>
 * <tr><th>meter</th><th>type</th><th>tags</th><th>what</th></tr>
 * <tr><td>{@code redeye.circuitbreaker.calls}</td><td>function timer</td><td>name, kind =
 * {@code successful} / {@code failed} / {@code ignored}</td><td>calls that ran, by how they ended (exact
 * counts); total time from sampled calls, see below</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.calls.max}</td><td>time gauge</td><td>name, kind</td><td>the longest timed
 * call of the last two minutes (of the sampled calls, unless every call is timed)</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.not.permitted.calls}</td><td>function counter</td><td>name, kind =
 * {@code not_permitted}</td><td>calls rejected without running (open, forced, trial permits taken, store failed
 * under REJECT)</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.state}</td><td>gauge</td><td>name, state = {@code closed} /
 * {@code open} / {@code half_open} / {@code forced_open}</td><td>1 for the state this instance knows, 0 for the
 * others</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.failure.rate}</td><td>gauge (ratio)</td><td>name</td><td>the failure rate
 * the breaker decides on, in [0, 1] (NaN before any outcome); <b>only under a strategy that decides on a rate</b>
 * (error-rate, sliding window): the others have none, and no gauge</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.slow.call.rate}</td><td>gauge (ratio)</td><td>name</td><td>the slow-call
 * rate of the sliding window (NaN while it is empty); sliding-window strategy only</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.slow.calls}</td><td>gauge</td><td>name</td><td>the slow calls in the
 * sliding window, slow failures included; sliding-window strategy only</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.buffered.calls}</td><td>gauge</td><td>name, kind = {@code failed} /
 * {@code successful}</td><td>the outcomes in the sliding window; sliding-window strategy only (every strategy
 * under Resilience4j's naming)</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.failures}</td><td>gauge</td><td>name</td><td>the failure count the
 * breaker decides on (consecutive and leaky strategies)</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.trials}</td><td>function counter</td><td>name, outcome =
 * {@code succeeded} / {@code failed} / {@code released}</td><td>half-open trials this instance ran, by
 * outcome</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.outlier}</td><td>gauge</td><td>name</td><td>1 while this instance is an
 * outlier for the operation ({@link CircuitBreaker#isOutlier}), else 0; <b>only under a quorum</b>
 * ({@code quorum}, {@code quorumFraction})</td></tr>
 * <tr><td>{@code redeye.circuitbreaker.outlier.trips}</td><td>function counter</td><td>name</td><td>times this
 * instance became an outlier for the operation (one per local trip, as {@code onOutlier} reports them); only
 * under a quorum</td></tr>
 * <tr><td>{@code redeye.store.operations}</td><td>timer</td><td>store, operation (the SPI method:
 * {@code get}, {@code apply}, {@code claimTrial}, ...), outcome = {@code success} / {@code error}</td>
 * <td>every store operation and its duration (distributed mode)</td></tr>
 * <tr><td>{@code redeye.store.errors}</td><td>function counter</td><td>store, name</td><td>store operations
 * that failed for the operation (distributed mode)</td></tr>
 * <tr><td>{@code redeye.feed.events}</td><td>counter</td><td>store, kind ({@code opened}, {@code closed},
 * {@code reopened}, {@code forced_open}, ...)</td><td>transitions received on the store's feed, every
 * instance's (distributed mode, a store with a feed)</td></tr>
 * <tr><td>{@code redeye.feed.gaps}</td><td>counter</td><td>store</td><td>times the feed may have missed
 * events</td></tr>
 * </table>
 *
 * Under {@link MeterNaming#RESILIENCE4J}, {@code calls}, {@code not.permitted.calls}, {@code state} and
 * {@code failure.rate} are named {@code resilience4j.circuitbreaker.*} instead, {@code failure.rate} is in
 * percent with -1 below {@code minimumCalls}, and {@code resilience4j.circuitbreaker.buffered.calls} and
 * {@code max.buffered.calls} are added (see {@link MeterNaming#RESILIENCE4J}); the others keep their names.
 *
 * <h2>Why {@code calls} is a function timer</h2>
 * A Micrometer {@code Timer} counts its records: fed only the sampled calls it would count samples, and fed once
 * per call it costs one record per call (about 40 ns on the machine the benchmarks ran on, three healthy calls).
 * A function timer reads the breaker's own exact counts at scrape time and the sampled total, so Prometheus gets
 * {@code _count} and {@code _sum} (what a call rate and a mean need) for one comparison per call; the longest call
 * is the separate {@code calls.max}, fed by the timed calls only.
 *
 * <h2>Gauges never call the store</h2>
 * {@code state}, {@code failure.rate} and {@code failures} read what this instance knows
 * ({@link CircuitBreaker#localState(String)}): in local mode the in-process state, in distributed mode the last
 * state it read, wrote or received on the feed. A scrape costs no store operation, and a fleet of instances
 * agree on a breaker's state as soon as each has seen it (a call, or a feed event: binding subscribes the breaker
 * to the store's feed).
 *
 * <h2>Operations come and go</h2>
 * Meters of an operation are registered when the breaker starts holding it (its first call) and removed when
 * the breaker evicts it past {@code maxOperations}, so the meter count is bounded like the breaker's own
 * memory. Counts come from the breaker's own counters, read at scrape time.
 *
 * <h2>Cost on the call path</h2>
 * Counts cost nothing extra (they are the breaker's counters). Durations are sampled by default
 * ({@link CallTiming#SAMPLED}): at most one call per operation every 10 ms is timed with two
 * {@link System#nanoTime()} reads (every call of an operation called less often than that), and stands in the
 * timer's total for the calls of its outcome since the previous timed one, so the total (and the mean, total
 * / count) is an estimate that is exact for rarely called operations; the healthy path pays one comparison.
 * {@link Builder#timeEveryCall()} times every call for exact totals, at two clock reads per call (about 28 ns
 * each on the machine the benchmarks ran on, more than a whole healthy call). Nothing on the healthy path
 * allocates. Permits ({@link CircuitBreaker#tryAcquire(String)}) are counted, not timed. Store operations are
 * timed one by one (they cost a round trip anyway).
 *
 * <p>Thread-safe. One binder per breaker; it may be bound to several registries. {@link #close()} unregisters
 * from the breaker and removes every meter it registered.
 */
public final class RedeyeMetrics implements MeterBinder, AutoCloseable {
    static final String CALLS = "redeye.circuitbreaker.calls";
    static final String CALLS_MAX = "redeye.circuitbreaker.calls.max";
    static final String NOT_PERMITTED = "redeye.circuitbreaker.not.permitted.calls";
    static final String STATE = "redeye.circuitbreaker.state";
    static final String FAILURE_RATE = "redeye.circuitbreaker.failure.rate";
    static final String SLOW_CALL_RATE = "redeye.circuitbreaker.slow.call.rate";
    static final String FAILURES = "redeye.circuitbreaker.failures";
    static final String TRIALS = "redeye.circuitbreaker.trials";
    static final String OUTLIER = "redeye.circuitbreaker.outlier";
    static final String OUTLIER_TRIPS = "redeye.circuitbreaker.outlier.trips";
    static final String STORE_OPERATIONS = "redeye.store.operations";
    static final String STORE_ERRORS = "redeye.store.errors";
    static final String FEED_EVENTS = "redeye.feed.events";
    static final String FEED_GAPS = "redeye.feed.gaps";

    private static final CallOutcome[] CALL_OUTCOMES = CallOutcome.values();
    private static final TrialOutcome[] TRIAL_OUTCOMES = TrialOutcome.values();
    private static final BreakerStatus[] STATES = {BreakerStatus.CLOSED, BreakerStatus.OPEN,
            BreakerStatus.HALF_OPEN, BreakerStatus.FORCED_OPEN};

    /** How long the longest timed call stays in {@code calls.max}: Micrometer's Timer default. */
    private static final long MAX_EXPIRY_MILLIS = 120_000;
    private static final int MAX_BUFFERS = 3;

    private final CircuitBreaker breaker;
    private final Tags commonTags;
    private final CallTiming callTiming;
    private final MeterNaming naming;
    /** The store tag, or null in local mode (no store meters). */
    private final String store;
    private final Observer observer = new Observer();
    private final Map<ObservedOperation, OperationMeters> operations = new ConcurrentHashMap<>();
    private volatile Bound[] bound = new Bound[0];
    private boolean closed;

    private RedeyeMetrics(Builder b) {
        this.breaker = b.breaker;
        this.commonTags = b.tags;
        this.callTiming = b.callTiming;
        this.naming = b.naming;
        this.store = breaker.config().store().map(s -> Stores.typeOf(s).getSimpleName()).orElse(null);
    }

    /**
     * A binder for {@code breaker} with no common tags and the default call timing.
     *
     * @throws NullPointerException if {@code breaker} is null
     */
    public static RedeyeMetrics of(CircuitBreaker breaker) {
        return builder(breaker).build();
    }

    /**
     * A builder of a binder for {@code breaker}.
     *
     * @throws NullPointerException if {@code breaker} is null
     */
    public static Builder builder(CircuitBreaker breaker) {
        return new Builder(Objects.requireNonNull(breaker, "breaker"));
    }

    /**
     * Registers the meters in {@code registry}, those of every operation the breaker holds now and of every one
     * it holds later; the first call registers this binder with the breaker (in distributed mode that
     * subscribes the breaker to the store's feed). Binding the same registry twice has no effect.
     *
     * @throws IllegalStateException if this binder or the breaker is closed
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (closed) {
            throw new IllegalStateException("RedeyeMetrics is closed");
        }
        for (Bound b : bound) {
            if (b.registry == registry) {
                return;
            }
        }
        Bound b = new Bound(registry);
        Bound[] next = Arrays.copyOf(bound, bound.length + 1);
        next[bound.length] = b;
        bound = next;
        if (bound.length == 1) {
            breaker.addObserver(observer); // tells operationAdded of every operation held, registering it in b
        } else {
            for (OperationMeters m : operations.values()) {
                m.register(b);
            }
        }
    }

    /** Unregisters from the breaker and removes every meter this binder registered. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        breaker.removeObserver(observer);
        for (OperationMeters m : operations.values()) {
            m.removeAll();
        }
        operations.clear();
        for (Bound b : bound) {
            b.removeAll();
        }
        bound = new Bound[0];
    }

    @Override
    public String toString() {
        return "RedeyeMetrics[" + breaker + ", " + bound.length + " registries]";
    }

    private Tags operationTags(String name) {
        return commonTags.and("name", name);
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** Whether the breaker decides on a failure rate, so that {@code failure.rate} is registered. */
    static boolean decidesOnARate(Strategy s) {
        return s == Strategy.ERROR_RATE || s == Strategy.SLIDING_WINDOW;
    }

    /**
     * Whether the breaker measures slow calls (the sliding window), so that {@code slow.call.rate} and
     * {@code slow.calls} are registered.
     */
    static boolean measuresSlowCalls(Strategy s) {
        return s == Strategy.SLIDING_WINDOW;
    }

    /**
     * The window this instance knows for {@code name}, as of now (a time window's old buckets rolled out), or
     * null when it knows none.
     */
    private SlidingWindow window(String name) {
        BreakerState s = breaker.localState(name).orElse(null);
        SlidingWindow w = s == null ? null : s.window();
        return w == null ? null : w.rolledTo(breaker.config().clock().millis());
    }

    /**
     * A rate of the sliding window: {@code part / calls} as a ratio (NaN while empty) under redeye's naming;
     * percent, -1 below the minimum number of calls, under Resilience4j's.
     */
    private double windowRate(SlidingWindow w, boolean slow) {
        int calls = w == null ? 0 : w.calls();
        int part = w == null ? 0 : slow ? w.slowCalls() : w.failures();
        if (naming.percentRates()) {
            return calls == 0 || calls < breaker.config().policy().windowMinimumCalls() ? -1 : part * 100.0 / calls;
        }
        return calls == 0 ? Double.NaN : (double) part / calls;
    }

    /**
     * {@code failure.rate} (registered only under a strategy that decides on a rate): a ratio, NaN before any
     * outcome, under redeye's naming; percent, -1 below {@code minimumCalls}, under Resilience4j's.
     */
    private double failureRate(String name) {
        if (breaker.config().strategy() == Strategy.SLIDING_WINDOW) {
            return windowRate(window(name), false);
        }
        BreakerState s = breaker.localState(name).orElse(null);
        if (naming.percentRates()) {
            return s == null || s.samples() < breaker.config().minimumCalls() ? -1 : s.errorRate() * 100.0;
        }
        return s == null || s.samples() == 0 ? Double.NaN : s.errorRate();
    }

    private double failures(String name) {
        return breaker.localState(name).map(BreakerState::failures).orElse(0);
    }

    /** {@code buffered.calls}: the outcomes the breaker decides on, failed or successful (see {@link MeterNaming}). */
    private double buffered(String name, boolean failed) {
        BreakerState s = breaker.localState(name).orElse(null);
        if (s == null) {
            return 0;
        }
        if (breaker.config().strategy() == Strategy.SLIDING_WINDOW) {
            SlidingWindow w = window(name);
            return w == null ? 0 : failed ? w.failures() : w.calls() - w.failures();
        }
        if (!decidesOnARate(breaker.config().strategy())) {
            return failed ? s.failures() : 0;
        }
        double window = Math.min(s.samples(), breaker.config().minimumCalls());
        double failedCalls = Math.rint(s.errorRate() * window);
        return failed ? failedCalls : window - failedCalls;
    }

    /**
     * {@code max.buffered.calls}: the outcomes that decide (failureThreshold, minimumCalls for a rate, the size of a
     * count window or the minimum number of calls of a time window).
     */
    private double maxBuffered() {
        Policy p = breaker.config().policy();
        if (p.strategy() == Strategy.SLIDING_WINDOW) {
            return p.slidingWindowType() == SlidingWindowType.COUNT_BASED ? p.slidingWindowSize()
                    : p.minimumNumberOfCalls();
        }
        return decidesOnARate(breaker.config().strategy()) ? breaker.config().minimumCalls()
                : breaker.config().failureThreshold();
    }

    // ------------------------------------------------------------------------------------------- per registry

    /** The store-wide meters of one registry; per-operation meters live in {@link OperationMeters}. */
    private final class Bound {
        final MeterRegistry registry;
        final AtomicReferenceArray<Timer> storeTimers = new AtomicReferenceArray<>(StoreOperation.values().length * 2);
        final Map<TransitionKind, Counter> feedEvents = new EnumMap<>(TransitionKind.class);
        final Counter feedGaps;

        Bound(MeterRegistry registry) {
            this.registry = registry;
            this.feedGaps = store == null ? null : Counter.builder(FEED_GAPS)
                    .description("Times the store's transition feed may have missed events")
                    .tags(commonTags).tag("store", store).register(registry);
        }

        Timer storeTimer(StoreOperation op, boolean failed) {
            int i = op.ordinal() * 2 + (failed ? 1 : 0);
            Timer t = storeTimers.get(i);
            if (t == null) { // first time only: registering allocates
                t = Timer.builder(STORE_OPERATIONS)
                        .description("Store operations made by the circuit breaker, and their durations")
                        .tags(commonTags).tag("store", store == null ? "local" : store)
                        .tag("operation", op.method()).tag("outcome", failed ? "error" : "success")
                        .register(registry);
                storeTimers.set(i, t);
            }
            return t;
        }

        Counter feedEvent(TransitionKind kind) {
            synchronized (feedEvents) {
                return feedEvents.computeIfAbsent(kind, k -> Counter.builder(FEED_EVENTS)
                        .description("Transitions received on the store's feed, from every instance")
                        .tags(commonTags).tag("store", store == null ? "local" : store).tag("kind", k.wireName())
                        .register(registry));
            }
        }

        void removeAll() {
            for (int i = 0; i < storeTimers.length(); i++) {
                Timer t = storeTimers.get(i);
                if (t != null) {
                    registry.remove(t);
                }
            }
            synchronized (feedEvents) {
                feedEvents.values().forEach(registry::remove);
            }
            if (feedGaps != null) {
                registry.remove(feedGaps);
            }
        }
    }

    // -------------------------------------------------------------------------------------- per operation

    /** One operation's meters in every bound registry, and what the binder counts for it itself. */
    private final class OperationMeters {
        final ObservedOperation op;
        final String name;
        /** Timed call durations, each times the calls it stands for, per {@link CallOutcome}. */
        final LongAdder[] weighedNanos = adders(CALL_OUTCOMES.length);
        /** The longest timed call of each outcome, over the last {@value #MAX_EXPIRY_MILLIS} ms. */
        final TimeWindowMax[] max = maxima(CALL_OUTCOMES.length);
        final LongAdder[] trials = adders(TRIAL_OUTCOMES.length);
        /** Times this instance became an outlier for the operation (under a quorum). */
        final LongAdder outlierTrips = new LongAdder();
        private final List<Meter> meters = new ArrayList<>();
        private boolean removed;

        OperationMeters(ObservedOperation op) {
            this.op = op;
            this.name = op.name();
        }

        synchronized void register(Bound b) {
            if (removed) {
                return;
            }
            MeterRegistry r = b.registry;
            Tags tags = operationTags(name);
            for (CallOutcome k : CALL_OUTCOMES) {
                meters.add(FunctionTimer.builder(naming.calls(), this, m -> m.count(k),
                                m -> m.weighedNanos[k.ordinal()].sum(), TimeUnit.NANOSECONDS)
                        .description("Calls that ran through the circuit breaker, by how they ended "
                                + "(total time estimated from sampled calls)")
                        .tags(tags).tag("kind", kind(k)).register(r));
                meters.add(TimeGauge.builder(CALLS_MAX, this, TimeUnit.NANOSECONDS,
                                m -> m.max[k.ordinal()].poll(TimeUnit.NANOSECONDS))
                        .description("The longest timed call of the last two minutes, by how it ended (of the sampled "
                                + "calls, unless every call is timed)")
                        .tags(tags).tag("kind", kind(k)).register(r));
            }
            meters.add(FunctionCounter.builder(naming.notPermittedCalls(), this, m -> m.op.metrics().rejections())
                    .description("Calls the circuit breaker rejected without running them")
                    .tags(tags).tag("kind", "not_permitted").register(r));
            for (BreakerStatus s : STATES) {
                meters.add(Gauge.builder(naming.state(), this, m -> breaker.localStatus(m.name) == s ? 1 : 0)
                        .description("The state this instance knows the breaker in: 1 for it, 0 for the others")
                        .tags(tags).tag("state", lower(s)).register(r));
            }
            if (decidesOnARate(breaker.config().strategy())) {
                meters.add(Gauge.builder(naming.failureRate(), this, m -> failureRate(m.name))
                        .description(naming.percentRates()
                                ? "The failure rate of the circuit breaker, in percent; -1 below minimumCalls"
                                : "The error rate the breaker decides on, as a ratio; NaN before any outcome")
                        .tags(tags).register(r));
            }
            if (measuresSlowCalls(breaker.config().strategy())) {
                meters.add(Gauge.builder(naming.slowCallRate(), this, m -> windowRate(window(m.name), true))
                        .description(naming.percentRates()
                                ? "The slow-call rate of the circuit breaker, in percent; -1 below minimumNumberOfCalls"
                                : "The slow-call rate of the sliding window, as a ratio; NaN while it is empty")
                        .tags(tags).register(r));
                meters.add(Gauge.builder(naming.slowCalls(), this, m -> {
                            SlidingWindow w = window(m.name);
                            return w == null ? 0 : w.slowCalls();
                        })
                        .description("The slow calls in the sliding window, slow failures included")
                        .tags(tags).register(r));
            }
            meters.add(Gauge.builder(FAILURES, this, m -> failures(m.name))
                    .description("The failure count the breaker decides on (consecutive and leaky strategies)")
                    .tags(tags).register(r));
            if (naming.bufferedCallMeters() || breaker.config().strategy() == Strategy.SLIDING_WINDOW) {
                for (boolean failed : new boolean[] {true, false}) {
                    meters.add(Gauge.builder(naming.bufferedCalls(), this, m -> buffered(m.name, failed))
                            .description("The " + (failed ? "failed" : "successful") + " outcomes the breaker "
                                    + "decides on")
                            .tags(tags).tag("kind", failed ? "failed" : "successful").register(r));
                }
                meters.add(Gauge.builder(naming.maxBufferedCalls(), this, m -> maxBuffered())
                        .description("The outcomes that decide: failureThreshold, or minimumCalls for a rate")
                        .tags(tags).register(r));
            }
            for (TrialOutcome o : TRIAL_OUTCOMES) {
                meters.add(FunctionCounter.builder(TRIALS, this, m -> m.trials[o.ordinal()].sum())
                        .description("Half-open trials this instance ran, by outcome")
                        .tags(tags).tag("outcome", lower(o)).register(r));
            }
            if (breaker.config().policy().quorumOn()) {
                meters.add(Gauge.builder(OUTLIER, this, m -> breaker.isOutlier(m.name) ? 1 : 0)
                        .description("1 while this instance is an outlier for the operation (its own failures "
                                + "reached the threshold below the fleet's quorum), else 0")
                        .tags(tags).register(r));
                meters.add(FunctionCounter.builder(OUTLIER_TRIPS, this, m -> m.outlierTrips.sum())
                        .description("Times this instance became an outlier for the operation")
                        .tags(tags).register(r));
            }
            if (store != null) {
                meters.add(FunctionCounter.builder(STORE_ERRORS, this, m -> m.op.metrics().storeErrors())
                        .description("Store operations that failed for the operation")
                        .tags(tags).tag("store", store).register(r));
            }
        }

        long count(CallOutcome k) {
            dev.redeye.Metrics m = op.metrics();
            return k == CallOutcome.SUCCESSFUL ? m.successes() : k == CallOutcome.FAILED ? m.failures() : m.ignored();
        }

        synchronized void removeAll() {
            removed = true;
            for (Meter m : meters) {
                for (Bound b : bound) {
                    b.registry.remove(m);
                }
            }
            meters.clear();
        }
    }

    private static String kind(CallOutcome k) {
        return k == CallOutcome.SUCCESSFUL ? "successful" : k == CallOutcome.FAILED ? "failed" : "ignored";
    }

    private static TimeWindowMax[] maxima(int n) {
        TimeWindowMax[] out = new TimeWindowMax[n];
        for (int i = 0; i < n; i++) {
            out[i] = new TimeWindowMax(Clock.SYSTEM, MAX_EXPIRY_MILLIS / MAX_BUFFERS, MAX_BUFFERS);
        }
        return out;
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] out = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            out[i] = new LongAdder();
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------- observer

    /** What the breaker tells this binder; nothing here allocates on the healthy path. */
    private final class Observer implements CircuitBreakerObserver {
        @Override
        public CallTiming callTiming() {
            return callTiming;
        }

        @Override
        public void operationAdded(ObservedOperation operation) {
            OperationMeters m = new OperationMeters(operation);
            if (operations.putIfAbsent(operation, m) == null) {
                for (Bound b : bound) {
                    m.register(b);
                }
            }
        }

        @Override
        public void operationEvicted(ObservedOperation operation) {
            OperationMeters m = operations.remove(operation);
            if (m != null) {
                m.removeAll();
            }
        }

        @Override
        public void callTimed(ObservedOperation operation, CallOutcome outcome, long nanos, long weight) {
            OperationMeters m = operations.get(operation);
            if (m != null && weight > 0) {
                m.weighedNanos[outcome.ordinal()].add(nanos * weight);
                m.max[outcome.ordinal()].record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void trialEnded(ObservedOperation operation, TrialOutcome outcome) {
            OperationMeters m = operations.get(operation);
            if (m != null) {
                m.trials[outcome.ordinal()].increment();
            }
        }

        @Override
        public void outlier(Outlier outlier) {
            // Rare (once per local trip): a scan of the operations held rather than a second index by name.
            for (OperationMeters m : operations.values()) {
                if (m.name.equals(outlier.operation())) {
                    m.outlierTrips.increment();
                }
            }
        }

        @Override
        public void storeOperation(StoreOperation operation, boolean failed, long nanos) {
            for (Bound b : bound) {
                b.storeTimer(operation, failed).record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void feedEvent(TransitionEvent event) {
            for (Bound b : bound) {
                b.feedEvent(event.kind()).increment();
            }
        }

        @Override
        public void feedGap() {
            for (Bound b : bound) {
                if (b.feedGaps != null) {
                    b.feedGaps.increment();
                }
            }
        }

        @Override
        public String toString() {
            return RedeyeMetrics.this.toString();
        }
    }

    // -------------------------------------------------------------------------------------------- builder

    /** Builds a {@link RedeyeMetrics}. Not thread-safe. */
    public static final class Builder {
        private final CircuitBreaker breaker;
        private Tags tags = Tags.empty();
        private CallTiming callTiming = CallTiming.SAMPLED;
        private MeterNaming naming = MeterNaming.REDEYE;

        private Builder(CircuitBreaker breaker) {
            this.breaker = breaker;
        }

        /**
         * Tags every meter carries, besides its own (for example {@code "app", "checkout"}).
         *
         * @throws NullPointerException     if an argument is null
         * @throws IllegalArgumentException if a tag is named {@code name}, {@code kind}, {@code state},
         *                                  {@code outcome}, {@code store} or {@code operation} (the meters' own)
         */
        public Builder tags(Iterable<Tag> tags) {
            Tags t = Tags.of(Objects.requireNonNull(tags, "tags"));
            for (Tag tag : t) {
                switch (tag.getKey()) {
                    case "name", "kind", "state", "outcome", "store", "operation" -> throw new IllegalArgumentException(
                            "tags: '" + tag.getKey() + "' is a tag of the meters themselves; pick another key");
                    default -> { }
                }
            }
            this.tags = t;
            return this;
        }

        /**
         * Tags as key, value pairs.
         *
         * @throws IllegalArgumentException if the count is odd, or a key is reserved (see {@link #tags(Iterable)})
         */
        public Builder tags(String... keyValues) {
            if (keyValues.length % 2 != 0) {
                throw new IllegalArgumentException("tags: key, value pairs expected, got " + keyValues.length
                        + " strings");
            }
            return tags(Tags.of(keyValues));
        }

        /**
         * Times every call for {@code redeye.circuitbreaker.calls}: exact totals, at two
         * {@link System#nanoTime()} reads per call. The default samples instead (see the class comment).
         */
        public Builder timeEveryCall() {
            this.callTiming = CallTiming.EVERY_CALL;
            return this;
        }

        /** Times no call: {@code redeye.circuitbreaker.calls} counts calls and its total time stays 0. */
        public Builder timeNoCall() {
            this.callTiming = CallTiming.NONE;
            return this;
        }

        /**
         * The names, tags and units of the meters Resilience4j also defines; default {@link MeterNaming#REDEYE}.
         * {@link MeterNaming#RESILIENCE4J} emits {@code resilience4j.circuitbreaker.*} as Resilience4j's binder
         * does, so that dashboards built for it (the Grafana dashboard of the Resilience4j repository) work
         * unchanged. Do not bind a Resilience4j binder and this one to a registry under the same names.
         *
         * @throws NullPointerException if {@code naming} is null
         */
        public Builder naming(MeterNaming naming) {
            this.naming = Objects.requireNonNull(naming, "naming");
            return this;
        }

        /** The binder; bind it with {@link RedeyeMetrics#bindTo(MeterRegistry)}. */
        public RedeyeMetrics build() {
            return new RedeyeMetrics(this);
        }
    }
}

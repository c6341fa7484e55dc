package dev.redeye.bench;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.CountingStore;
import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Write batching in real time (issue 27): a fleet calling one operation at {@value #MULTIPLE} times the store's
 * per-key ceiling, with {@code recordBatching(maxDelay)} and without, on every store given that declares
 * {@link OutcomeBatches} (a store without it is skipped with a line saying so; it joins when it declares it).
 *
 * <p>Per store:
 * <ol>
 * <li><b>the per-key ceiling C</b>, measured in the same run by {@link ScaleBench#ceiling} (redeye's own
 * {@code recordFailure} on one key from {@value ScaleBench#CEILING_THREADS} threads, each with its own client);</li>
 * <li><b>the fleet</b>: N instances in this JVM (default {@value #DEFAULT_INSTANCES}), each over its own store
 * client ({@code Stores.open} of the store's URI, strict) wrapped in a {@link CountingStore}, plus an operator
 * instance on a client of its own for the resets; error-rate strategy (threshold {@value #ERROR_RATE_THRESHOLD},
 * decay {@value #ERROR_RATE_DECAY}, {@value #MINIMUM_CALLS} calls at least: every outcome is a write without
 * batching), {@code localCache(100 ms)} (without it every call's gate would read the hot key too), reset timeout
 * 5 min (no trial during a repetition). {@value #CALLERS} caller threads call the operation at 4·C calls/s in
 * all, round robin over the instances, each call on its slot of the schedule (a call started over 100 ms after
 * its slot is late; a caller over 1 s behind skips to the present and the calls it skipped are not made);</li>
 * <li><b>healthy</b>: after a warm-up, the store's writes and reads per second (every instance's
 * {@code CountingStore}: the fleet calls one operation, so these are the hot key's), next to C and to the bound
 * the README states, at most N / maxDelay writes per second plus one per 1,024 outcomes; calls made per second
 * against the target, late, skipped, the call's p50/p99, store errors and rejected calls;</li>
 * <li><b>the dependency dies</b>, {@code repetitions} times: every call fails from an instant t0; the time from
 * t0 to the store's opening (the first instance whose own write opened it, {@code onStateChange}; checked
 * afterwards in the store by the operator) and to the moment every instance has rejected a call, next to the
 * README's stated detection bound: the failures the strategy needs in a row ({@link #failuresToOpen}) at the
 * fleet's call rate, plus maxDelay with batching ({@link #statedBoundMillis}). Then the failures held are let
 * land (maxDelay and 250 ms more), the dependency recovers, the operator resets the operation, and the fleet
 * calls healthily for 1 s plus twice maxDelay before the next repetition;</li>
 * <li>the same fleet <b>without batching</b>, for contrast (every outcome is a write: it writes the calls it
 * makes, at most what the row takes).</li>
 * </ol>
 *
 * <p>maxDelay, unless given: the smallest of {@link #DELAY_LADDER_MILLIS} for which N / maxDelay is at most half
 * of C, so that the fleet's batched writes stay below the ceiling by the README's bound ({@link #chooseDelayMillis}).
 * The section prints the machine's load average before and after (the figures of a loaded machine are not the
 * backends').
 *
 * <pre>
 * mvn -B -q package -pl redeye-bench -am -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench --sections batching \
 *     --stores redis,postgres,dynamodb,hazelcast [--quick]
 * </pre>
 * System properties: {@code redeye.batching.instances} (default {@value #DEFAULT_INSTANCES}),
 * {@code redeye.batching.maxDelay} (ms; default chosen as above), {@code redeye.batching.repetitions} (default
 * {@value #DEFAULT_REPETITIONS}, {@code --quick} 2).
 */
final class BatchingBench {
    static final int DEFAULT_INSTANCES = 10;
    static final int DEFAULT_REPETITIONS = 10;
    /** The fleet's call rate, in multiples of the measured per-key ceiling. */
    static final int MULTIPLE = 4;
    static final int CALLERS = 16;
    static final double ERROR_RATE_THRESHOLD = 0.5;
    static final double ERROR_RATE_DECAY = 0.9;
    static final int MINIMUM_CALLS = 20;
    static final Duration LOCAL_CACHE = Duration.ofMillis(100);
    /** maxDelay candidates, in ms (the builder takes 1 ms to 10 s). */
    static final long[] DELAY_LADDER_MILLIS = {100, 200, 500, 1_000, 2_000, 5_000, 10_000};
    /** Outcomes per batch at most ({@code AtomicOperation.MAX_BATCH}): a full batch is written at once. */
    static final int MAX_BATCH = dev.redeye.spi.AtomicOperation.MAX_BATCH;
    static final String OP = "batching-hot-key";
    /** A call started this long after its slot is late (as {@link ScaleInstance}'s). */
    static final long LATE_NANOS = TimeUnit.MICROSECONDS.toNanos(ScaleInstance.LATE_MICROS);
    /** A caller this far behind its schedule skips to the present. */
    static final long SKIP_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Object REJECTED = new Object();

    private BatchingBench() {
    }

    /**
     * The failures in a row that take the error rate from 0 to the threshold: {@code ceil(ln(1 - threshold) /
     * ln(decay))} (README, "Detection bound").
     */
    static int failuresToOpen(double threshold, double decay) {
        return (int) Math.ceil(Math.log(1 - threshold) / Math.log(decay));
    }

    /**
     * The README's detection bound in ms: the failures the strategy needs at the fleet's call rate, plus
     * {@code maxDelay} with batching.
     *
     * @param delayMillis maxDelay, or null without batching
     */
    static double statedBoundMillis(int failures, double callsPerSecond, Long delayMillis) {
        return failures * 1_000.0 / callsPerSecond + (delayMillis == null ? 0 : delayMillis);
    }

    /** The README's bound on a batching fleet's writes per second: N / maxDelay, plus one per full batch. */
    static double writeBoundPerSecond(int instances, long delayMillis, double callsPerSecond) {
        return instances * 1_000.0 / delayMillis + callsPerSecond / MAX_BATCH;
    }

    /**
     * The smallest maxDelay of {@link #DELAY_LADDER_MILLIS} for which N / maxDelay is at most half the ceiling;
     * the largest if none is.
     */
    static long chooseDelayMillis(int instances, double ceilingPerSecond) {
        for (long d : DELAY_LADDER_MILLIS) {
            if (instances * 1_000.0 / d <= ceilingPerSecond / 2) {
                return d;
            }
        }
        return DELAY_LADDER_MILLIS[DELAY_LADDER_MILLIS.length - 1];
    }

    /**
     * The slot a caller runs next when the clock says {@code nowIndex} (the schedule's slot due now): its own
     * {@code slot} if it is not behind, else the first of its slots (every {@code callers}-th) at or after
     * {@code nowIndex}. The slots between are skipped.
     */
    static long catchUp(long slot, int callers, long nowIndex) {
        if (nowIndex <= slot) {
            return slot;
        }
        long behind = nowIndex - slot;
        return slot + (behind + callers - 1) / callers * callers;
    }

    /** Extra query parameters of the fleet's clients, per store. */
    static String uriSuffix(String store) {
        switch (store) {
            case "postgres":
                // a pool of 4 per instance (feed included) keeps the fleet under 50 connections on a shared server
                return "&poolSize=4&ApplicationName=redeye-batching-" + StoreFixture.RUN_ID;
            case "dynamodb":
                // one feed item read per poll, not 17: dynalite is one process, and its feed reads would share it
                // with the hot key (the feed items are other items; on DynamoDB other partitions)
                return "&feedShards=1&legacyFeedHead=false";
            default:
                return "";
        }
    }

    static String run(BenchEnv env) {
        boolean quick = env.quick();
        int instances = Integer.getInteger("redeye.batching.instances", DEFAULT_INSTANCES);
        int repetitions = Integer.getInteger("redeye.batching.repetitions", quick ? 2 : DEFAULT_REPETITIONS);
        Long fixedDelay = Long.getLong("redeye.batching.maxDelay");
        if (instances < 1 || repetitions < 1 || (fixedDelay != null && (fixedDelay < 1 || fixedDelay > 10_000))) {
            throw new IllegalArgumentException("redeye.batching: instances and repetitions >= 1, maxDelay 1 to 10000 ms;"
                    + " were " + instances + ", " + repetitions + ", " + fixedDelay);
        }
        Report report = new Report(instances, repetitions, quick);
        report.loadBefore = loadAverage();
        for (String name : env.stores()) {
            if (!BenchEnv.REMOTE.contains(name)) {
                report.notes.add("- " + name + ": in-process, no per-key ceiling to compare with: not run.");
                continue;
            }
            try (StoreFixture fixture = env.fixture(name, true)) {
                Store probe = fixture.open();
                if (probe.capability(OutcomeBatches.class).isEmpty()) {
                    report.notes.add("- " + name + ": skipped, " + Stores.typeOf(probe).getSimpleName()
                            + " does not declare `OutcomeBatches` (a batching breaker over it is refused at build);"
                            + " it joins this section once it does.");
                    continue;
                }
                ScaleBench.Ceiling ceiling = ScaleBench.ceiling(fixture, quick);
                ceiling.addRows(report.ceilings);
                double c = ceiling.redeyePerSecond();
                if (c < 1) {
                    report.notes.add("- " + name + ": no fleet, the ceiling's record made " + Table.fmt(c, 1)
                            + " calls/s (" + ceiling.redeye().errors() + " errors).");
                    continue;
                }
                long delay = fixedDelay != null ? fixedDelay : chooseDelayMillis(instances, c);
                String uri = fixture.uri() + uriSuffix(name);
                for (Long d : new Long[] {delay, null}) {
                    new Fleet(name, uri, instances, MULTIPLE * c, c, d, repetitions, quick, report).run();
                }
            } catch (RuntimeException e) {
                report.notes.add("- " + name + ": the run failed: " + e);
            }
        }
        report.loadAfter = loadAverage();
        return report.toString();
    }

    /** {@code /proc/loadavg}'s three averages, or "unknown". */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + ", " + f[1] + ", " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** The section's tables and notes. */
    private static final class Report {
        final int instances;
        final int repetitions;
        final boolean quick;
        final Table ceilings = ScaleBench.ceilingTable();
        final Table load = new Table("store", "batching", "N", "C: redeye writes/s on one key",
                "fleet calls/s made (target 4·C)", "store writes/s on the hot key", "README bound N/maxDelay + calls/1,024",
                "writes below C (writes / C)", "store reads/s", "call p50 / p99 (µs)", "late", "skipped", "store errors",
                "rejected");
        final Table detection = new Table("store", "batching", "repetitions", "fleet calls/s", "stated bound (ms)",
                "death to store OPEN p50 / max (ms)", "within the stated bound",
                "death to last instance rejecting p50 / max (ms)", "within the bound + 100 ms (local cache)",
                "stored state OPEN after", "not opened in time", "store errors");
        final List<String> notes = new ArrayList<>();
        String loadBefore;
        String loadAfter;

        Report(int instances, int repetitions, boolean quick) {
            this.instances = instances;
            this.repetitions = repetitions;
            this.quick = quick;
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder();
            out.append(quick ? "**--quick: a smoke run of the harness; short phases, figures mean nothing.**\n\n" : "");
            out.append("Load average (1, 5, 15 min) before: ").append(loadBefore).append("; after: ").append(loadAfter)
                    .append(".\n\n");
            out.append("Fleet: ").append(instances).append(" instances in this JVM, each over its own store client"
                    + " (`Stores.open`, strict) in a `CountingStore`; error rate (threshold ").append(ERROR_RATE_THRESHOLD)
                    .append(", decay ").append(ERROR_RATE_DECAY).append(", minimumCalls ").append(MINIMUM_CALLS)
                    .append("), `localCache(").append(LOCAL_CACHE.toMillis()).append(" ms)`; ").append(CALLERS)
                    .append(" callers at ").append(MULTIPLE).append("·C calls/s in all, round robin over the"
                    + " instances; ").append(repetitions).append(" deaths of the dependency per configuration."
                    + " \"late\": a call started over 100 ms after its slot; \"skipped\": calls not made by a caller"
                    + " over 1 s behind its schedule.\n\n");
            out.append("Per-key ceiling C, measured in this run (").append(ScaleBench.ceilingMethod(quick)).append("):\n\n")
                    .append(ceilings).append('\n');
            out.append("Healthy fleet at 4·C calls/s (the fleet calls one operation: every store operation counted is"
                    + " the hot key's):\n\n").append(load).append('\n');
            out.append("The dependency dies (every call fails from t0). Stated bound (README, \"Detection bound\"): "
                    + "the ").append(failuresToOpen(ERROR_RATE_THRESHOLD, ERROR_RATE_DECAY))
                    .append(" failures in a row the error rate needs from 0, at the fleet's call rate (the healthy"
                    + " row's), plus maxDelay with batching; it has no term for the store's own write time. The"
                    + " last instance learns of the opening from its own batch's write, the feed, or at the latest"
                    + " its local cache's stale tolerance later (100 ms, the `localCache` Javadoc's fail-open"
                    + " window): its column is held to the bound plus 100 ms:\n\n").append(detection).append('\n');
            notes.forEach(n -> out.append(n).append('\n'));
            return out.toString();
        }
    }

    /** One fleet, with batching or without, on one store: its healthy phase, then the deaths of the dependency. */
    private static final class Fleet {
        private final String store;
        private final String uri;
        private final int n;
        private final double rate;
        private final double ceiling;
        private final Long delay;
        private final int repetitions;
        private final boolean quick;
        private final Report report;
        private final LongAdder storeErrors = new LongAdder();
        /** Per instance: the first rejection at or after {@link #deathNanos} (0: none yet). */
        private final AtomicLongArray firstRejection;
        /** The first opening at or after {@link #deathNanos} (0: none yet). */
        private final AtomicLong opened = new AtomicLong();
        private final LongAdder healthyOpenings = new LongAdder();
        private volatile long deathNanos = Long.MAX_VALUE;
        /** Store errors counted in the tables' rows. */
        private long reportedErrors;

        Fleet(String store, String uri, int n, double rate, double ceiling, Long delay, int repetitions, boolean quick,
                Report report) {
            this.store = store;
            this.uri = uri;
            this.n = n;
            this.rate = rate;
            this.ceiling = ceiling;
            this.delay = delay;
            this.repetitions = repetitions;
            this.quick = quick;
            this.report = report;
            this.firstRejection = new AtomicLongArray(n);
        }

        private String mode() {
            return delay == null ? "off" : "maxDelay " + delay + " ms";
        }

        void run() {
            List<Store> clients = new ArrayList<>();
            List<CountingStore> counted = new ArrayList<>();
            List<CircuitBreaker> fleet = new ArrayList<>();
            CircuitBreaker operator = null;
            Driver driver = null;
            try {
                Store opClient = Stores.open(uri, OpenMode.STRICT);
                clients.add(opClient);
                operator = CircuitBreaker.builder().store(opClient).closeStore(false).strategy(Strategy.ERROR_RATE)
                        .resetTimeout(Duration.ofMinutes(5)).build();
                for (int i = 0; i < n; i++) {
                    Store client = Stores.open(uri, OpenMode.STRICT);
                    clients.add(client);
                    CountingStore c = new CountingStore(client);
                    counted.add(c);
                    fleet.add(breaker(c));
                }
                int subscribed = awaitSubscriptions(fleet);
                if (subscribed < n) {
                    report.notes.add("- " + store + ", batching " + mode() + ": " + (n - subscribed) + " of " + n
                            + " instances without a feed subscription after 20 s (their local cache is off).");
                }
                driver = new Driver(fleet, rate, this::rejected);
                long warm = quick ? 500 : 2_000;
                long phase = quick ? 1_000 : 5_000;
                driver.start((int) Math.min(2_000_000L / CALLERS, (long) (rate * phase / 1_000 / CALLERS * 1.2) + 16));
                Load.sleep(warm);
                double made = healthy(driver, counted, phase);
                detect(driver, operator, made);
            } catch (RuntimeException e) {
                report.notes.add("- " + store + ", batching " + mode() + ": the run failed: " + e);
            } finally {
                if (driver != null) {
                    driver.stop();
                }
                long warmUpErrors = storeErrors.sum() - reportedErrors;
                if (warmUpErrors > 0) {
                    report.notes.add("- " + store + ", batching " + mode() + ": " + warmUpErrors + " store errors outside"
                            + " the rows' windows (while the fleet warmed up or wound down; the run's log has them).");
                }
                fleet.forEach(CircuitBreaker::close);
                if (operator != null) {
                    operator.close();
                }
                clients.forEach(Store::close);
            }
        }

        private CircuitBreaker breaker(CountingStore store) {
            CircuitBreakerBuilder b = CircuitBreaker.builder().store(store).closeStore(false)
                    .strategy(Strategy.ERROR_RATE).errorRateThreshold(ERROR_RATE_THRESHOLD)
                    .errorRateDecay(ERROR_RATE_DECAY).minimumCalls(MINIMUM_CALLS).resetTimeout(Duration.ofMinutes(5))
                    .localCache(LOCAL_CACHE).onStoreError((op, e) -> storeErrors.increment())
                    .onStateChange(this::transition);
            if (delay != null) {
                b.recordBatching(Duration.ofMillis(delay));
            }
            return b.build();
        }

        private void transition(TransitionEvent e) {
            if (!e.operation().equals(OP) || e.kind() != TransitionKind.OPENED) {
                return;
            }
            long now = System.nanoTime();
            if (now >= deathNanos) {
                opened.compareAndSet(0, now);
            } else {
                healthyOpenings.increment();
            }
        }

        private void rejected(int instance, long now) {
            if (now >= deathNanos) {
                firstRejection.compareAndSet(instance, 0, now);
            }
        }

        /** The healthy phase; returns the calls/s made. */
        private double healthy(Driver driver, List<CountingStore> counted, long phase) {
            CountingStore.Counts[] before = snapshot(counted);
            long[] d0 = driver.totals();
            long errors0 = storeErrors.sum();
            long t0 = System.nanoTime();
            driver.measuring = true;
            Load.sleep(phase);
            driver.measuring = false;
            double seconds = (System.nanoTime() - t0) / 1e9;
            long[] d1 = driver.totals();
            CountingStore.Counts[] after = snapshot(counted);
            long writes = 0;
            long reads = 0;
            for (int i = 0; i < counted.size(); i++) {
                CountingStore.Counts c = after[i].minus(before[i]);
                writes += c.writes();
                reads += c.reads();
            }
            double made = (d1[0] - d0[0]) / seconds;
            double writesPerSecond = writes / seconds;
            Latencies lat = driver.latencies();
            String latency = lat.size() == 0 ? "-"
                    : Table.micros(lat.percentile(50)) + " / " + Table.micros(lat.percentile(99));
            String share = Table.fmt(writesPerSecond / ceiling, 2) + "·C";
            report.load.row(store, mode(), n, Table.fmt(ceiling, 0), Table.fmt(made, 0) + " (" + Table.fmt(rate, 0)
                    + ")", Table.fmt(writesPerSecond, 1), delay == null ? "- (a write per call)"
                    : Table.fmt(writeBoundPerSecond(n, delay, made), 1),
                    delay == null ? "- (a write per call made: " + share + ")"
                            : (writesPerSecond < ceiling ? "yes" : "**no**") + " (" + share + ")",
                    Table.fmt(reads / seconds, 1), latency, d1[1] - d0[1], d1[2] - d0[2],
                    storeErrors.sum() - errors0, d1[3] - d0[3]);
            reportedErrors += storeErrors.sum() - errors0;
            if (delay != null && made < 0.95 * rate) {
                report.notes.add("- " + store + ", batching " + mode() + ": the fleet made " + Table.fmt(made, 0)
                        + " of the " + Table.fmt(rate, 0) + " calls/s asked. With batching a call waits for the"
                        + " store only to write a full batch of " + MAX_BATCH + " or a would-be opening, so this is"
                        + " what this JVM's " + CALLERS + " callers generate on this machine, not the store's limit;"
                        + " the figures are at the rate reached.");
            }
            return made;
        }

        /** The deaths of the dependency. */
        private void detect(Driver driver, CircuitBreaker operator, double made) {
            int failures = failuresToOpen(ERROR_RATE_THRESHOLD, ERROR_RATE_DECAY);
            double bound = statedBoundMillis(failures, made, delay);
            long d = delay == null ? 0 : delay;
            long settle = (quick ? 500 : 1_000) + 2 * d;
            long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(10_000, (long) (10 * bound)));
            Latencies toOpen = new Latencies(repetitions);
            Latencies toLast = new Latencies(repetitions);
            int within = 0;
            int lastWithin = 0;
            int storedOpen = 0;
            int notOpened = 0;
            long errors0 = storeErrors.sum();
            long healthyOpenings0 = healthyOpenings.sum();
            for (int r = 0; r < repetitions; r++) {
                Load.sleep(settle);
                opened.set(0);
                for (int i = 0; i < n; i++) {
                    firstRejection.set(i, 0);
                }
                long t0 = System.nanoTime();
                deathNanos = t0;
                driver.dead = true;
                while (System.nanoTime() - t0 < timeoutNanos && !(opened.get() != 0 && allRejected())) {
                    Load.sleep(1);
                }
                long open = opened.get();
                if (open == 0) {
                    notOpened++;
                } else {
                    toOpen.add(open - t0);
                    if ((open - t0) / 1e6 <= bound) {
                        within++;
                    }
                }
                if (allRejected()) {
                    long last = 0;
                    for (int i = 0; i < n; i++) {
                        last = Math.max(last, firstRejection.get(i));
                    }
                    toLast.add(last - t0);
                    if ((last - t0) / 1e6 <= bound + LOCAL_CACHE.toMillis()) {
                        lastWithin++;
                    }
                }
                Load.sleep(d + 250); // the failures still held land on the open state
                storedOpen += operator.state(OP).open() ? 1 : 0;
                driver.dead = false;
                deathNanos = Long.MAX_VALUE;
                operator.reset(OP);
            }
            report.detection.row(store, mode(), repetitions, Table.fmt(made, 0), Table.fmt(bound, 1),
                    pair(toOpen), within + " of " + repetitions, pair(toLast), lastWithin + " of " + repetitions,
                    storedOpen + " of " + repetitions,
                    notOpened, storeErrors.sum() - errors0);
            reportedErrors += storeErrors.sum() - errors0;
            long falseOpenings = healthyOpenings.sum() - healthyOpenings0;
            if (falseOpenings > 0) {
                report.notes.add("- " + store + ", batching " + mode() + ": " + falseOpenings
                        + " openings while the dependency was healthy.");
            }
        }

        private boolean allRejected() {
            for (int i = 0; i < n; i++) {
                if (firstRejection.get(i) == 0) {
                    return false;
                }
            }
            return true;
        }

        private static String pair(Latencies l) {
            return l.size() == 0 ? "-" : Table.fmt(l.percentile(50) / 1e6, 1) + " / " + Table.fmt(l.percentile(100) / 1e6, 1);
        }

        private static CountingStore.Counts[] snapshot(List<CountingStore> counted) {
            CountingStore.Counts[] out = new CountingStore.Counts[counted.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = counted.get(i).snapshot();
            }
            return out;
        }

        private static int awaitSubscriptions(List<CircuitBreaker> fleet) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                int active = 0;
                for (CircuitBreaker b : fleet) {
                    active += b.isLocalCacheActive() ? 1 : 0;
                }
                if (active == fleet.size() || System.nanoTime() > deadline) {
                    return active;
                }
                Load.sleep(100);
            }
        }
    }

    /** Told of a rejected call: the instance and {@link System#nanoTime()} after the call. */
    @FunctionalInterface
    interface RejectionListener {
        void rejected(int instance, long nanos);
    }

    /**
     * {@value #CALLERS} threads calling {@link #OP} at a fixed rate over the fleet, round robin: slot {@code i} is
     * due at {@code start + i / rate} and made by caller {@code i mod CALLERS} on instance {@code i mod N}, the
     * dependency healthy or dead as {@link #dead} says when the call starts.
     */
    static final class Driver {
        private final List<CircuitBreaker> fleet;
        private final double intervalNanos;
        private final RejectionListener onRejected;
        private final LongAdder made = new LongAdder();
        private final LongAdder late = new LongAdder();
        private final LongAdder skipped = new LongAdder();
        private final LongAdder rejected = new LongAdder();
        private final List<Thread> threads = new ArrayList<>();
        private final List<Latencies> latencies = new ArrayList<>();
        volatile boolean dead;
        volatile boolean measuring;
        private volatile boolean stop;

        Driver(List<CircuitBreaker> fleet, double rate, RejectionListener onRejected) {
            this.fleet = fleet;
            this.intervalNanos = 1e9 / rate;
            this.onRejected = onRejected;
        }

        /** @param samples latency samples each caller keeps while {@link #measuring} */
        void start(int samples) {
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            for (int w = 0; w < CALLERS; w++) {
                Latencies lat = new Latencies(Math.max(1, samples));
                latencies.add(lat);
                int first = w;
                Thread t = new Thread(() -> loop(start, first, lat), "batching-caller-" + w);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        private void loop(long start, int first, Latencies lat) {
            long slot = first;
            while (!stop) {
                long now = System.nanoTime();
                long due = start + (long) (slot * intervalNanos);
                if (now - due > SKIP_NANOS) {
                    long next = catchUp(slot, CALLERS, (long) ((now - start) / intervalNanos));
                    skipped.add((next - slot) / CALLERS);
                    slot = next;
                    continue;
                }
                if (due > now) {
                    LockSupport.parkNanos(due - now);
                    continue; // re-read the clock and the stop flag
                }
                long t0 = System.nanoTime();
                if (t0 - due > LATE_NANOS) {
                    late.increment();
                }
                int instance = (int) (slot % fleet.size());
                Object result;
                try {
                    result = fleet.get(instance).executeOrElse(OP, dead ? Load.FAILING : Load.HEALTHY, REJECTED);
                } catch (Load.DependencyDown e) {
                    result = e;
                }
                long t1 = System.nanoTime();
                if (result == REJECTED) {
                    rejected.increment();
                    onRejected.rejected(instance, t1);
                }
                if (measuring) {
                    synchronized (lat) { // read by latencies() on the bench's thread
                        if (lat.size() < lat.capacity()) {
                            lat.add(t1 - t0);
                        }
                    }
                }
                made.increment();
                slot += CALLERS;
            }
        }

        /** {made, late, skipped, rejected} so far. */
        long[] totals() {
            return new long[] {made.sum(), late.sum(), skipped.sum(), rejected.sum()};
        }

        /** Every caller's samples so far. */
        Latencies latencies() {
            int total = 0;
            for (Latencies l : latencies) {
                total += l.capacity();
            }
            Latencies all = new Latencies(Math.max(1, total));
            for (Latencies l : latencies) {
                synchronized (l) {
                    all.addAll(l);
                }
            }
            return all;
        }

        void stop() {
            stop = true;
            Load.joinAll(threads);
        }
    }
}

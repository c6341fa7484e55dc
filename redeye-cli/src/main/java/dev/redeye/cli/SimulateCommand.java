package dev.redeye.cli;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.InvalidOptionException;
import dev.redeye.charts.TimelineChart;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code redeye simulate}: a fleet of instances, each with its own breaker and store client, calling one
 * dependency that goes down and comes back. Shows what a shared breaker is for: the whole fleet stops after
 * {@code failureThreshold} failures (plus calls already in flight) and recovery goes through one trial at a
 * time; {@code --mode per-instance} shows the local-only alternative and {@code --compare} both side by side.
 *
 * <p>Runs for {@code --duration} of real time ({@code --compare} runs both modes at once, so no longer).
 * Output: a timeline and a summary table on stdout, or with {@code --json} only the summary as JSON; a live
 * progress line on stderr when stderr is a terminal ({@code --progress} to choose); with {@code --chart FILE}
 * also the run drawn as a PNG or SVG timeline ({@link SimulationChart}).
 */
@Command(name = "simulate", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Simulate a fleet of instances calling one dependency that goes down and recovers, with one "
            + "shared breaker (the default) or one breaker per instance, and print what reached the dead dependency.",
            ""},
        footer = {"", "Examples:", "  redeye simulate", "  redeye simulate --compare",
            "  redeye simulate --compare --chart fleet.png",
            "  redeye simulate --store redis://127.0.0.1:6379 --instances 20 --json"})
public final class SimulateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    VerboseOption verbose;

    @Option(names = "--instances", paramLabel = "N", defaultValue = "10",
            description = "Simulated instances (processes), each with its own breaker and store client "
                    + "(default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--threads-per-instance", paramLabel = "N", defaultValue = "2",
            description = "Calling threads per instance (default: ${DEFAULT-VALUE}).")
    int threadsPerInstance;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "12s", converter = DurationConverter.class,
            description = "How long the run lasts (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--down-at", paramLabel = "DURATION", defaultValue = "3s", converter = DurationConverter.class,
            description = "When the dependency goes down, since the start (default: ${DEFAULT-VALUE}).")
    Duration downAt;

    @Option(names = "--up-at", paramLabel = "DURATION", defaultValue = "8s", converter = DurationConverter.class,
            description = "When it comes back (default: ${DEFAULT-VALUE}).")
    Duration upAt;

    @Option(names = "--quorum", paramLabel = "N", defaultValue = "0",
            description = "The shared breaker opens only when failures come from at least N distinct instances "
                    + "(0: no quorum; --mode shared only, on a store with quorum support) (default: ${DEFAULT-VALUE}).")
    int quorum;

    @Option(names = "--bad-instance", paramLabel = "K", defaultValue = "0",
            description = "Instance K (1 to --instances) fails every call, as if its own network were broken, "
                    + "while the dependency is up for the others (0: none) (default: ${DEFAULT-VALUE}).")
    int badInstance;

    @Option(names = "--sliding-window", paramLabel = "SECONDS", defaultValue = "0",
            description = "Judge by the failure rate over a time window of SECONDS (1 to 86400; 0: consecutive "
                    + "failures, --failure-threshold) (default: ${DEFAULT-VALUE}).")
    int slidingWindowSeconds;

    @Option(names = "--failure-rate-threshold", paramLabel = "PERCENT", defaultValue = "50",
            description = "With --sliding-window: the failure rate that opens, in percent (default: ${DEFAULT-VALUE}).")
    double failureRateThreshold;

    @Option(names = "--minimum-number-of-calls", paramLabel = "N", defaultValue = "20",
            description = "With --sliding-window: calls the window must hold before its rate counts "
                    + "(default: ${DEFAULT-VALUE}).")
    int minimumNumberOfCalls;

    /** Where --no-outage puts the outage: far past the longest run. */
    private static final Duration NEVER = Duration.ofDays(365);

    @Option(names = "--no-outage", description = "The dependency never goes down (--down-at and --up-at are "
            + "ignored): with --bad-instance, only that instance's calls fail.")
    boolean noOutage;

    @Option(names = "--failure-threshold", paramLabel = "N",
            description = "Consecutive failures that open a breaker (default: ${DEFAULT-VALUE}).")
    int failureThreshold;

    @Option(names = "--reset-timeout", paramLabel = "DURATION", defaultValue = "2s",
            converter = DurationConverter.class,
            description = "How long a breaker stays open before a trial (default: ${DEFAULT-VALUE}).")
    Duration resetTimeout;

    @Option(names = "--backoff-multiplier", paramLabel = "X",
            description = "Reset window multiplier per failed trial (default: ${DEFAULT-VALUE}).")
    double backoffMultiplier;

    @Option(names = "--jitter", paramLabel = "J",
            description = "Relative jitter of each instance's reset window (default: ${DEFAULT-VALUE}).")
    double jitter;

    @Option(names = "--call-latency", paramLabel = "DURATION", defaultValue = "10ms",
            converter = DurationConverter.class,
            description = "Mean time a call spends at the dependency, up or down (default: ${DEFAULT-VALUE}).")
    Duration callLatency;

    @Option(names = "--think-time", paramLabel = "DURATION", defaultValue = "40ms",
            converter = DurationConverter.class,
            description = "Pause of each thread between calls, rejected ones included (default: ${DEFAULT-VALUE}).")
    Duration thinkTime;

    @Option(names = "--store", paramLabel = "URI", defaultValue = "memory:",
            description = "Shared store for --mode shared: memory: (one in-process store standing for the shared "
                    + "backend) or any store URI, one client per instance (default: ${DEFAULT-VALUE}).")
    String store;

    @Option(names = "--mode", paramLabel = "MODE", defaultValue = "shared", converter = ModeConverter.class,
            description = "shared (one breaker state in the store for the fleet) or per-instance (each instance "
                    + "its own private breaker, like a local-only library) (default: ${DEFAULT-VALUE}).")
    Simulation.Mode mode;

    @Option(names = "--compare", description = "Run both modes at once and print them side by side.")
    boolean compare;

    @Option(names = "--virtual", description = "Run in virtual time on one thread (up to "
            + VirtualFleet.MAX_INSTANCES + " instances in seconds of wall time) over the in-memory store, and print "
            + "the store's load per second in each backend's units; not with --compare, --chart, --store, --quorum "
            + "or --bad-instance.")
    boolean virtual;

    @Option(names = "--json", description = "Print only the summary, as JSON, on stdout.")
    boolean json;

    @Option(names = "--chart", paramLabel = "FILE",
            description = "Also draw the run as a timeline into FILE, a .png image, or .svg with JFreeSVG on the "
                    + "class path (the extension chooses): calls reaching the dependency, rejections and trials per 100 ms (wider past a "
                    + "1-minute run), the outage shaded, the breakers' state changes marked; with --compare "
                    + "one panel per mode.")
    Path chart;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "42",
            description = "Seed of the call latencies and start offsets (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--progress", paramLabel = "WHEN", defaultValue = "auto",
            description = "Live progress line on stderr: auto (when stderr is a terminal; not with --json), "
                    + "always, never (default: ${DEFAULT-VALUE}).")
    String progress;

    /** Creates the command (picocli calls this). */
    public SimulateCommand() {
    }

    /** Parses {@code shared} / {@code per-instance}. */
    static final class ModeConverter implements ITypeConverter<Simulation.Mode> {
        @Override
        public Simulation.Mode convert(String value) {
            try {
                return Simulation.Mode.parse(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    @Override
    public Integer call() throws Exception {
        if (virtual) {
            return runVirtual();
        }
        Simulation.Config config = validatedConfig();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!compare && mode == Simulation.Mode.PER_INSTANCE && !StoreOption.isMemory(store)) {
            err.println("note: per-instance mode keeps each breaker in its own process memory; --store is used by "
                    + "shared mode only");
        }
        Simulation[] sims = compare
                ? new Simulation[] {new Simulation(config, Simulation.Mode.SHARED),
                    new Simulation(config, Simulation.Mode.PER_INSTANCE)}
                : new Simulation[] {new Simulation(config, mode)};
        Simulation.Result[] results = runAll(sims, err);
        TimelineChart timelineChart = null;
        if (chart != null) {
            List<Simulation.PerTick> ticks = new ArrayList<>();
            for (Simulation s : sims) {
                ticks.add(s.perTick());
            }
            timelineChart = SimulationChart.of(List.of(results), ticks);
        }
        for (Simulation.Result r : results) {
            warnIfTheStoreMisbehaved(r, err);
        }
        if (json) {
            if (compare) {
                Map<String, Object> both = new LinkedHashMap<>();
                both.put("shared", results[0]);
                both.put("perInstance", results[1]);
                out.println(Json.pretty(both));
            } else {
                out.println(Json.pretty(results[0]));
            }
        } else if (compare) {
            out.print(SimulationReport.compare(results[0], results[1]));
        } else {
            out.print(SimulationReport.single(results[0]));
        }
        out.flush();
        if (timelineChart != null) {
            try {
                timelineChart.write(chart);
            } catch (IOException e) {
                err.println("redeye simulate: could not write the chart to " + chart + ": " + e);
                err.flush();
                return 1;
            }
            err.println("chart written to " + chart);
            err.flush();
        }
        return 0;
    }

    /**
     * A shared run over a correct store opens once per outage and runs one trial at a time; anything else
     * points at the store (non-exclusive claims, lost updates), which is worth saying when simulating over a
     * user's own store.
     */
    private static void warnIfTheStoreMisbehaved(Simulation.Result r, PrintWriter err) {
        if (!r.mode().equals(Simulation.Mode.SHARED.label())) {
            return;
        }
        if (r.maxConcurrentTrials() != null && r.maxConcurrentTrials() > 1) {
            err.println("warning: " + r.maxConcurrentTrials() + " trials ran at once with halfOpenPermits 1: the "
                    + "store's trial claims are not exclusive (check it with 'redeye tck --store ...')");
        }
        if (r.admittedAfterOpening() > 0) {
            err.println("warning: " + r.admittedAfterOpening() + " call(s) were admitted by a read that started after "
                    + "the opening had been stored: the store served a stale state (check it with 'redeye tck --store "
                    + "...')");
        }
        if (r.openings() > 1 && r.inFlightRecordedAfterClose() >= r.failureThreshold()) {
            err.println("note: the shared breaker opened " + r.openings() + " times: " + r.inFlightRecordedAfterClose()
                    + " failure(s) of calls in flight at the first opening were recorded only after a trial had "
                    + "closed it again (the store answered slowly), and counted in the new closed period");
        } else if (r.openings() > 1) {
            err.println("warning: the shared breaker opened " + r.openings() + " times during one outage: the "
                    + "store may lose updates (check it with 'redeye tck --store ...')");
        }
        err.flush();
    }

    private int runVirtual() {
        check(!compare && chart == null && StoreOption.isMemory(store) && quorum <= 1 && badInstance == 0
                && mode == Simulation.Mode.SHARED, "--virtual runs a shared breaker over the in-memory store: not with "
                + "--compare, --chart, --store, --mode per-instance, --quorum or --bad-instance");
        check(instances >= 1 && instances <= VirtualFleet.MAX_INSTANCES, "--instances must be in [1, "
                + VirtualFleet.MAX_INSTANCES + "] with --virtual, was " + instances);
        check(threadsPerInstance >= 1 && threadsPerInstance <= 64,
                "--threads-per-instance must be in [1, 64], was " + threadsPerInstance);
        checkCommon();
        check(callLatency.toMillis() >= 1, "--call-latency must be at least 1ms with --virtual (virtual time counts "
                + "milliseconds)");
        VirtualFleet.Result r = new VirtualFleet(new VirtualFleet.Config(instances, threadsPerInstance, duration,
                downAt, upAt, failureThreshold, resetTimeout, jitter, callLatency, thinkTime, seed,
                slidingWindowSeconds, failureRateThreshold, minimumNumberOfCalls)).run();
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? Json.pretty(r) + "\n" : SimulationReport.virtual(r));
        out.flush();
        return 0;
    }

    private Simulation.Config validatedConfig() {
        check(instances >= 1 && instances <= 500, "--instances must be in [1, 500], was " + instances);
        check(threadsPerInstance >= 1 && threadsPerInstance <= 64,
                "--threads-per-instance must be in [1, 64], was " + threadsPerInstance);
        check((long) instances * threadsPerInstance <= 2_000,
                "--instances x --threads-per-instance must be at most 2000 threads");
        checkCommon();
        check(progress.matches("(?i)auto|always|never"), "--progress must be auto, always or never, was " + progress);
        check(store != null && !store.isBlank(), "--store must not be blank");
        if (chart != null) {
            // Before the run, not after it: a typo should not cost the run's duration.
            TimelineChart.Format format = null;
            try {
                format = TimelineChart.Format.of(chart);
            } catch (IllegalArgumentException e) {
                check(false, "--chart: " + e.getMessage());
            }
            check(format != TimelineChart.Format.SVG || TimelineChart.svgAvailable(),
                    "--chart: SVG needs JFreeSVG (org.jfree:org.jfree.svg) on the class path; write a .png instead");
            Path dir = chart.toAbsolutePath().getParent();
            check(dir != null && Files.isDirectory(dir), "--chart: the directory " + dir + " does not exist");
            check(!Files.isDirectory(chart), "--chart: " + chart + " is a directory, not a file name");
        }
        return new Simulation.Config(instances, threadsPerInstance, duration, downAt, upAt, failureThreshold,
                resetTimeout, backoffMultiplier, jitter, callLatency, thinkTime, store.trim(), seed, quorum,
                badInstance, slidingWindowSeconds, failureRateThreshold, minimumNumberOfCalls);
    }

    /** The checks of the options both kinds of run take. */
    private void checkCommon() {
        check(!duration.isZero() && duration.compareTo(Duration.ofMinutes(30)) <= 0,
                "--duration must be in (0, 30m], was " + DurationConverter.format(duration));
        if (noOutage) {
            downAt = NEVER; // far past any run (at most 30 minutes): the dependency stays up
            upAt = NEVER.plusMillis(1);
        }
        check(noOutage || downAt.compareTo(duration) < 0, "--down-at must be before the end of the run (--duration "
                + DurationConverter.format(duration) + ")");
        check(upAt.compareTo(downAt) > 0, "--up-at must be after --down-at");
        check(badInstance >= 0 && badInstance <= instances, "--bad-instance must be in [0, --instances ("
                + instances + ")], was " + badInstance);
        check(quorum <= 1 || (mode == Simulation.Mode.SHARED && !compare), "--quorum applies to --mode shared "
                + "(a breaker per instance has no fleet to count), without --compare");
        try { // the breakers' options, checked by the engine's own setters
            CircuitBreaker.builder().failureThreshold(failureThreshold).resetTimeout(resetTimeout)
                    .backoffMultiplier(backoffMultiplier).jitter(jitter).quorum(quorum)
                    .failureRateThreshold(failureRateThreshold).minimumNumberOfCalls(minimumNumberOfCalls);
            if (slidingWindowSeconds != 0) {
                CircuitBreaker.builder().slidingWindow(dev.redeye.api.SlidingWindowType.TIME_BASED,
                        slidingWindowSeconds);
            }
        } catch (InvalidOptionException e) {
            throw OptionErrors.usage(spec, e);
        }
        check(callLatency.compareTo(Duration.ofSeconds(10)) <= 0, "--call-latency must be at most 10s");
        check(thinkTime.toMillis() >= 1 && thinkTime.compareTo(Duration.ofSeconds(10)) <= 0,
                "--think-time must be in [1ms, 10s] (it also paces rejected calls)");
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    private boolean showProgress() {
        if (progress.equalsIgnoreCase("always")) {
            return true;
        }
        // auto: stderr is a terminal, as the ./redeye launcher reports it, or the JVM has an interactive console.
        return progress.equalsIgnoreCase("auto") && !json
                && ("1".equals(System.getenv("REDEYE_STDERR_TTY")) || System.console() != null);
    }

    /** One short line (under 80 columns, so a terminal does not wrap it) describing the running simulations. */
    static String progressLine(Simulation[] sims) {
        Simulation.Progress p = sims[0].progress();
        StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT, "%5.1fs/%ss  dependency %-4s",
                p.elapsedSeconds(), fmt(p.durationSeconds()), !p.started() ? "" : p.dependencyDown() ? "DOWN" : "up"));
        if (sims.length == 1) {
            String breakers = sims[0].mode() == Simulation.Mode.SHARED
                    ? "breaker " + (p.openBreakers() > 0 ? "OPEN  " : "closed")
                    : p.openBreakers() + " breakers open";
            sb.append("  ").append(breakers).append("  reached dead dependency: ").append(p.reachedDeadDependency());
        } else {
            sb.append("  reached dead dependency:");
            for (Simulation s : sims) {
                sb.append(' ').append(s.mode().label()).append(' ').append(s.progress().reachedDeadDependency());
            }
        }
        return sb.length() > 79 ? sb.substring(0, 79) : sb.toString();
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    private Simulation.Result[] runAll(Simulation[] sims, PrintWriter err) throws Exception {
        ExecutorService runners = Executors.newFixedThreadPool(sims.length, r -> {
            Thread t = new Thread(r, "redeye-sim-runner");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService ticker = null;
        boolean progressLine = showProgress();
        Thread hook = new Thread(() -> {
            // Ctrl-C: stop the workers and leave the terminal on a fresh line.
            for (Simulation s : sims) {
                s.stop();
            }
            if (progressLine) {
                synchronized (err) {
                    err.println("\r\u001b[Kredeye simulate: interrupted");
                    err.flush();
                }
            }
        }, "redeye-sim-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            @SuppressWarnings("unchecked")
            Future<Simulation.Result>[] futures = new Future[sims.length];
            for (int i = 0; i < sims.length; i++) {
                futures[i] = runners.submit(sims[i]::run);
            }
            if (progressLine) {
                ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "redeye-sim-progress");
                    t.setDaemon(true);
                    return t;
                });
                ticker.scheduleAtFixedRate(() -> {
                    String line = progressLine(sims);
                    synchronized (err) {
                        // Return to the line start and clear it: one line, rewritten in place.
                        err.print("\r" + line + "\u001b[K");
                        err.flush();
                    }
                }, 0, 250, TimeUnit.MILLISECONDS);
            }
            Simulation.Result[] results = new Simulation.Result[sims.length];
            for (int i = 0; i < sims.length; i++) {
                try {
                    results[i] = futures[i].get();
                } catch (ExecutionException e) {
                    for (Simulation s : sims) {
                        s.stop();
                    }
                    Throwable cause = e.getCause();
                    if (cause instanceof IllegalArgumentException) {
                        // Unknown scheme or a URI the provider rejects: a bad argument.
                        throw new ParameterException(spec.commandLine(), cause.getMessage(), cause);
                    }
                    if (cause instanceof Exception) {
                        throw (Exception) cause;
                    }
                    throw e;
                }
            }
            return results;
        } finally {
            if (ticker != null) {
                ticker.shutdownNow();
                ticker.awaitTermination(1, TimeUnit.SECONDS);
                synchronized (err) {
                    err.print("\r\u001b[K");
                    err.flush();
                }
            }
            for (Simulation s : sims) {
                s.stop();
            }
            runners.shutdownNow();
            runners.awaitTermination(10, TimeUnit.SECONDS);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook is stopping the simulations
            }
        }
    }
}

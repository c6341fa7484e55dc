package dev.redeye.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The distributed and fleet benchmarks, a plain program (not JMH: these figures are counts and round-trip
 * latencies, not nanosecond loops). It prints Markdown tables, each headed by the machine, the date and the
 * command that produced it, for BENCHMARK.md to quote as measured:
 *
 * <ul>
 * <li>{@code ops}: store operations per call by configuration (no caches, defaults, local cache), counted by
 * {@link dev.redeye.CountingStore}, cross-checked once against Redis {@code INFO commandstats} ({@link OpsPerCall});</li>
 * <li>{@code latency}: p50/p99 of a healthy {@code execute} next to the store's own round trip
 * ({@link LatencyBench});</li>
 * <li>{@code record}: p50/p99 of {@code recordFailure} and a failing {@code execute}, below the threshold and
 * at the opening, next to the store's smallest write of its own kind, with the targets checked
 * ({@link RecordPathBench});</li>
 * <li>{@code servertime}: Redis's own time (SLOWLOG) per call of the record path, with the targets
 * ({@link RedisServerTimeBench});</li>
 * <li>{@code wait}: what {@code waitReplicas} costs per transition, on a private primary and replica
 * ({@link RedisWaitBench});</li>
 * <li>{@code atomic}: atomic capabilities vs {@link BestEffortStore}, 8 threads over 2 clients: lost failures
 * and concurrent trials ({@link AtomicBench});</li>
 * <li>{@code growth}: per-call cost and heap with 1, 100 and 10,000 operations ({@link GrowthBench});</li>
 * <li>{@code fleet}: 10 instances and a dependency that dies then recovers ({@link FleetBench});</li>
 * <li>{@code scale}, only when named: fleets of 10, 100 and 1,000 instances per store, each with its own client
 * and feed subscription, over child JVMs, and each backend's per-key ceiling ({@link ScaleBench});</li>
 * <li>{@code batching}, only when named: a fleet at 4x the per-key ceiling measured in the same run, with write
 * batching and without, healthy and then with its dependency dead, on every store with {@code OutcomeBatches}
 * ({@link BatchingBench}).</li>
 * </ul>
 *
 * <p>Run everything (about 5 minutes; Redis and PostgreSQL must be running, see {@code scripts/services.sh}):
 * <pre>
 * mvn -B -q install -pl redeye-bench -DskipTests
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench
 * </pre>
 * or one part: {@code ... DistributedBench --sections fleet --stores memory,redis}. {@code --quick} shrinks
 * every loop for a smoke test of the harness; its figures mean nothing. {@code --chart-dir DIR} (an existing
 * directory; {@code scripts/bench.sh} gives its results directory) makes the fleet section draw its chart
 * there ({@code fleet.png}) and print the Markdown image line for it. The services are read from
 * {@code REDEYE_REDIS_URL} (default {@code redis://127.0.0.1:6379}) and {@code REDEYE_POSTGRES_URL} (default
 * {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}); the run writes under a key prefix and a
 * schema unique to it and deletes them at the end.
 */
public final class DistributedBench {
    private DistributedBench() {
    }

    /**
     * Runs the selected sections and prints their tables to standard output.
     *
     * @param args {@code [--stores memory,redis,postgres,dynamodb,hazelcast]
     *             [--sections ops,latency,record,window,quorum,servertime,wait,atomic,growth,fleet,scale,batching] [--quick]
     *             [--chart-dir DIR]}
     * @throws IllegalArgumentException on an unknown argument
     */
    public static void main(String[] args) {
        BenchEnv env = BenchEnv.parse(args);
        String command = "java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.DistributedBench"
                + (args.length == 0 ? "" : " " + String.join(" ", args));
        System.out.println("# redeye distributed benchmarks");
        System.out.println();
        System.out.println(machine());
        System.out.println("Command: `" + command + "`");
        System.out.println();
        section(env, "ops", "Store operations per call", () -> OpsPerCall.run(env));
        section(env, "latency", "Latency of a healthy execute vs the store's round trip", () -> LatencyBench.run(env));
        section(env, "record", "Record path: a failure vs the store's smallest write", () -> RecordPathBench.run(env));
        section(env, "window", "Record path of a sliding window vs the consecutive one",
                () -> WindowRecordBench.run(env));
        section(env, "quorum", "Record path with a quorum vs without one", () -> QuorumRecordBench.run(env));
        section(env, "servertime", "Redis server time per call of the record path", () -> RedisServerTimeBench.run(env));
        section(env, "wait", "Redis: what waitReplicas costs", () -> RedisWaitBench.run(env));
        section(env, "atomic", "Atomic vs best-effort", () -> AtomicBench.run(env));
        section(env, "growth", "Cost growth with distinct operations", () -> GrowthBench.run(env));
        section(env, "fleet", "Fleet: a dependency dies, then recovers", () -> FleetBench.run(env));
        section(env, "scale", "Fleet scale: N instances on one store, and the per-key ceiling",
                () -> ScaleBench.run(env));
        section(env, "batching", "Write batching: a fleet at 4x the per-key ceiling, healthy then failing",
                () -> BatchingBench.run(env));
    }

    private static void section(BenchEnv env, String id, String title, java.util.function.Supplier<String> body) {
        if (!env.runs(id)) {
            return;
        }
        Instant start = Instant.now();
        String text = body.get();
        System.out.println("## " + title + " (`--sections " + id + "`)");
        System.out.println();
        System.out.println("Started " + start.truncatedTo(ChronoUnit.SECONDS) + ", took "
                + (Instant.now().getEpochSecond() - start.getEpochSecond()) + " s.");
        System.out.println();
        System.out.println(text);
        System.out.flush();
    }

    /** Cores, CPU model, JDK and date, as every table in BENCHMARK.md states them. */
    static String machine() {
        String cpu = "unknown";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            cpu = "unknown (" + e.getMessage() + ")";
        }
        return "Machine: " + Runtime.getRuntime().availableProcessors() + " cores, " + cpu + ", "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + ", max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB; date "
                + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ".";
    }
}

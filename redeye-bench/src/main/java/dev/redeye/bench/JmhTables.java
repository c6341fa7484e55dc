package dev.redeye.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns the JSON results of {@link HealthyPathBenchmark} and {@link RejectionBenchmark} (JMH {@code -rf json},
 * run with {@code -prof gc}) into the Markdown tables of BENCHMARK.md, with the ratios the targets are stated
 * in and a plain MET / MISSED per target, those of {@link ScalingBenchmark}, when given, into its diagnostic
 * table, and those of {@link CachedHealthyPathBenchmark}, when given, into its table and targets. It reads
 * files only; it measures nothing.
 *
 * <pre>
 * java -cp redeye-bench/target/benchmarks.jar dev.redeye.bench.JmhTables \
 *     results/jmh-HealthyPathBenchmark.json results/jmh-RejectionBenchmark.json [results/jmh-ScalingBenchmark.json]
 * </pre>
 */
public final class JmhTables {
    private static final String ALLOC = "gc.alloc.rate.norm";

    private JmhTables() {
    }

    /**
     * Prints the tables of the given result files.
     *
     * @param args the JSON result files, in any order
     * @throws IOException              if a file cannot be read or parsed
     * @throws IllegalArgumentException if no file is given
     */
    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: JmhTables <jmh-result.json>...");
        }
        Map<String, Score> scores = new LinkedHashMap<>();
        ObjectMapper mapper = new ObjectMapper();
        for (String file : args) {
            for (JsonNode run : mapper.readTree(Path.of(file).toFile())) {
                String bench = run.get("benchmark").asText();
                String cls = bench.substring(0, bench.lastIndexOf('.'));
                cls = cls.substring(cls.lastIndexOf('.') + 1);
                String type = run.get("params").get("type").asText();
                String key = cls + "/" + run.get("threads").asInt() + "/" + type;
                JsonNode p = run.get("primaryMetric");
                JsonNode alloc = run.path("secondaryMetrics").path(ALLOC);
                Score score = new Score(p.get("score").asDouble(), p.get("scoreError").asDouble(),
                        alloc.isMissingNode() ? Double.NaN : alloc.get("score").asDouble());
                scores.put(key, score);
                // by method too: ScalingBenchmark has two 2-thread methods
                scores.put(cls + "." + bench.substring(bench.lastIndexOf('.') + 1) + "/" + type, score);
            }
        }
        System.out.println(table(scores, "HealthyPathBenchmark", BreakerType.values()));
        System.out.println(table(scores, "RejectionBenchmark",
                new BreakerType[] {BreakerType.REDEYE, BreakerType.REDEYE_OR_ELSE, BreakerType.RESILIENCE4J,
                    BreakerType.FAILSAFE}));
        System.out.println(targets(scores));
        String scaling = scaling(scores);
        if (scaling != null) {
            System.out.println(scaling);
        }
        String cached = cachedHealthyPath(scores);
        if (cached != null) {
            System.out.println(cached);
        }
    }

    /**
     * The {@link ScalingBenchmark} diagnostic: what 2 threads cost on one shared breaker and on a breaker each
     * (nothing mutable shared), against 1 thread. Null when its results were not given.
     */
    private static String scaling(Map<String, Score> s) {
        Score one = s.get("ScalingBenchmark.oneThread/REDEYE");
        Score shared = s.get("ScalingBenchmark.twoThreadsSharedBreaker/REDEYE");
        Score own = s.get("ScalingBenchmark.twoThreadsOwnBreakers/REDEYE");
        if (one == null || shared == null || own == null) {
            return null;
        }
        Table t = new Table("redeye, healthy call", "ns/op per thread", "x 1 thread");
        t.row("1 thread", one.time(), "1.00");
        t.row("2 threads, one shared breaker", shared.time(), Table.fmt(shared.ns() / one.ns(), 2));
        t.row("2 threads, a breaker each (nothing mutable shared)", own.time(), Table.fmt(own.ns() / one.ns(), 2));
        return "### ScalingBenchmark (diagnostic for the 2-thread target)\n\n" + t
                + "\nSharing the breaker costs " + Table.fmt(shared.ns() / own.ns(), 2)
                + "x the same two threads on a breaker each; the rest of the 2-thread figure is the machine's.\n";
    }

    /** One JMH result: ns/op, its 99.9 % error, and bytes allocated per op. */
    record Score(double ns, double error, double bytes) {
        String time() {
            return Table.fmt(ns, 1) + " ± " + Table.fmt(error, 1);
        }

        String alloc() {
            return Double.isNaN(bytes) ? "n/a" : Table.fmt(bytes, 1);
        }
    }

    private static String table(Map<String, Score> scores, String bench, BreakerType[] types) {
        Table t = new Table("competitor", "1 thread (ns/op)", "1 thread (B/op)", "2 threads (ns/op per thread)",
                "2 threads (B/op)", "2 threads / 1 thread", "1 thread / Resilience4j 1 thread");
        Score r4j = scores.get(bench + "/1/RESILIENCE4J");
        for (BreakerType type : types) {
            Score one = scores.get(bench + "/1/" + type);
            Score two = scores.get(bench + "/2/" + type);
            if (one == null || two == null) {
                continue;
            }
            t.row(type, one.time(), one.alloc(), two.time(), two.alloc(), Table.fmt(two.ns() / one.ns(), 2),
                    r4j == null ? "n/a" : Table.fmt(one.ns() / r4j.ns(), 2));
        }
        return "### " + bench + "\n\n" + t;
    }

    private static String targets(Map<String, Score> s) {
        StringBuilder out = new StringBuilder("### Targets (redeye local mode)\n\n");
        Score h1 = s.get("HealthyPathBenchmark/1/REDEYE");
        Score h2 = s.get("HealthyPathBenchmark/2/REDEYE");
        Score r1 = s.get("HealthyPathBenchmark/1/RESILIENCE4J");
        Score j1 = s.get("RejectionBenchmark/1/REDEYE");
        Score j2 = s.get("RejectionBenchmark/2/REDEYE");
        Score k1 = s.get("RejectionBenchmark/1/RESILIENCE4J");
        Score k2 = s.get("RejectionBenchmark/2/RESILIENCE4J");
        if (h1 != null && r1 != null) {
            line(out, "healthy, 1 thread, at most half of Resilience4j", h1.ns() <= r1.ns() / 2,
                    Table.fmt(h1.ns(), 1) + " ns vs " + Table.fmt(r1.ns(), 1) + " ns (ratio "
                            + Table.fmt(h1.ns() / r1.ns(), 2) + ")");
        }
        if (h1 != null && h2 != null) {
            line(out, "healthy, 0 bytes allocated per call", h1.bytes() < 0.5 && h2.bytes() < 0.5,
                    h1.alloc() + " B/op (1 thread), " + h2.alloc() + " B/op (2 threads)");
            line(out, "healthy, 2 threads on one breaker at most 1.3x its 1-thread figure", h2.ns() <= 1.3 * h1.ns(),
                    Table.fmt(h2.ns(), 1) + " ns vs " + Table.fmt(h1.ns(), 1) + " ns ("
                            + Table.fmt(h2.ns() / h1.ns(), 2) + "x)");
        }
        Score m1 = s.get("HealthyPathBenchmark/1/REDEYE_MICROMETER");
        if (h1 != null && m1 != null) {
            line(out, "healthy with a Micrometer binder, 1 thread, 0 bytes and within 10 % of redeye alone",
                    m1.bytes() < 0.5 && m1.ns() <= 1.1 * h1.ns(),
                    Table.fmt(m1.ns(), 1) + " ns vs " + Table.fmt(h1.ns(), 1) + " ns ("
                            + Table.fmt(m1.ns() / h1.ns(), 2) + "x), " + m1.alloc() + " B/op");
        }
        if (j1 != null && k1 != null) {
            line(out, "rejection, 1 thread, at or below Resilience4j (no stack traces)", j1.ns() <= k1.ns(),
                    Table.fmt(j1.ns(), 1) + " ns vs " + Table.fmt(k1.ns(), 1) + " ns");
        }
        if (j2 != null && k2 != null) {
            line(out, "rejection, 2 threads, at or below Resilience4j (no stack traces)", j2.ns() <= k2.ns(),
                    Table.fmt(j2.ns(), 1) + " ns vs " + Table.fmt(k2.ns(), 1) + " ns");
        }
        if (j1 != null && k1 != null) {
            line(out, "rejection (CircuitOpenException), 1 thread, at most half of Resilience4j's (no stack traces)",
                    j1.ns() <= k1.ns() / 2, Table.fmt(j1.ns(), 1) + " ns vs " + Table.fmt(k1.ns(), 1) + " ns (ratio "
                            + Table.fmt(j1.ns() / k1.ns(), 2) + ")");
        }
        if (j2 != null && k2 != null) {
            line(out, "rejection (CircuitOpenException), 2 threads, at most half of Resilience4j's (no stack traces)",
                    j2.ns() <= k2.ns() / 2, Table.fmt(j2.ns(), 1) + " ns vs " + Table.fmt(k2.ns(), 1) + " ns (ratio "
                            + Table.fmt(j2.ns() / k2.ns(), 2) + ")");
        }
        Score o1 = s.get("RejectionBenchmark/1/REDEYE_OR_ELSE");
        Score o2 = s.get("RejectionBenchmark/2/REDEYE_OR_ELSE");
        if (o1 != null && h1 != null) {
            line(out, "rejection with executeOrElse, 1 thread, at most 2x redeye's healthy 1-thread call",
                    o1.ns() <= 2 * h1.ns(), Table.fmt(o1.ns(), 1) + " ns vs " + Table.fmt(h1.ns(), 1) + " ns ("
                            + Table.fmt(o1.ns() / h1.ns(), 2) + "x)");
        }
        if (o1 != null) {
            line(out, "rejection with executeOrElse, 0 bytes allocated per call",
                    o1.bytes() < 0.5 && (o2 == null || o2.bytes() < 0.5),
                    o1.alloc() + " B/op (1 thread)" + (o2 == null ? "" : ", " + o2.alloc() + " B/op (2 threads)"));
        }
        return out.toString();
    }

    /**
     * The table and targets of {@link CachedHealthyPathBenchmark}: distributed mode with the local cache on Redis
     * and PostgreSQL against local mode, 1 and 2 threads; null if the results hold none of it.
     */
    static String cachedHealthyPath(Map<String, Score> s) {
        String bench = "CachedHealthyPathBenchmark";
        Table t = new Table("backend", "1 thread (ns/op)", "1 thread (B/op)", "2 threads (ns/op per thread)",
                "2 threads (B/op)", "1 thread / local mode", "2 threads / local mode 2 threads");
        StringBuilder targets = new StringBuilder();
        boolean any = false;
        for (CachedHealthyPathBenchmark.Backend b : CachedHealthyPathBenchmark.Backend.values()) {
            Score one = s.get(bench + "/1/" + b);
            Score two = s.get(bench + "/2/" + b);
            if (one == null && two == null) {
                continue;
            }
            any = true;
            Score local1 = s.get(bench + "/1/" + CachedHealthyPathBenchmark.Backend.LOCAL);
            Score local2 = s.get(bench + "/2/" + CachedHealthyPathBenchmark.Backend.LOCAL);
            t.row(b, one == null ? "n/a" : one.time(), one == null ? "n/a" : one.alloc(),
                    two == null ? "n/a" : two.time(), two == null ? "n/a" : two.alloc(),
                    ratio(one, local1), ratio(two, local2));
            if (b == CachedHealthyPathBenchmark.Backend.LOCAL
                    || b == CachedHealthyPathBenchmark.Backend.LOCAL_PLUS_CLOCK_READ) {
                continue; // the baseline, and the decomposition row: no target of their own
            }
            for (int threads = 1; threads <= 2; threads++) {
                Score c = threads == 1 ? one : two;
                Score l = threads == 1 ? local1 : local2;
                String what = b + " with localCache(100 ms), " + threads + " thread" + (threads == 1 ? "" : "s")
                        + ", at most 2x local mode and 0 B/op";
                if (c == null || l == null) {
                    targets.append("- MISSED: ").append(what).append(" — not measured (")
                            .append(c == null ? b : "LOCAL").append(" result missing)\n");
                    continue;
                }
                line(targets, what, c.ns() <= 2 * l.ns() && c.bytes() < 0.5,
                        Table.fmt(c.ns(), 1) + " ns vs " + Table.fmt(l.ns(), 1) + " ns ("
                                + Table.fmt(c.ns() / l.ns(), 2) + "x), " + c.alloc() + " B/op");
            }
        }
        if (!any) {
            return null;
        }
        return "### " + bench + " (distributed mode, local cache)\n\n" + t + "\n### Targets (distributed healthy"
                + " path with the local cache)\n\n" + targets;
    }

    private static String ratio(Score a, Score b) {
        return a == null || b == null ? "n/a" : Table.fmt(a.ns() / b.ns(), 2);
    }

    private static void line(StringBuilder out, String target, boolean met, String measured) {
        out.append("- ").append(met ? "MET" : "MISSED").append(": ").append(target).append(" — measured ")
                .append(measured).append('\n');
    }
}

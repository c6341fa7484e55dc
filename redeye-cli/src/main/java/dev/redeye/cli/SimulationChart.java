package dev.redeye.cli;

import dev.redeye.charts.TimelineChart;
import java.awt.Color;
import java.util.List;
import java.util.Locale;

/**
 * {@code redeye simulate --chart}: the run's own per-bucket counts ({@link Simulation.PerTick}) and state
 * changes ({@link Simulation.Result#timeline()}) as a {@link TimelineChart}, one panel per mode. Per bucket:
 * calls reaching the dependency, calls the breaker rejected, trial calls (dots); the dependency's outage
 * shaded; the breakers' state changes as labelled lines, grouped like the text timeline
 * ({@link SimulationReport#groups}). Pure description, no I/O.
 */
final class SimulationChart {
    static final String CALLS = "calls reaching the dependency";
    static final String REJECTED = "rejected by the breaker";
    static final String TRIALS = "trial calls (half-open)";
    private static final Color TO_OPEN = new Color(0xB2182B);
    private static final Color TO_CLOSED = new Color(0x1A7F37);

    private SimulationChart() {
    }

    /**
     * The chart of one run, or of a comparison (the results and their counts in the same order).
     *
     * @throws IllegalArgumentException if the lists are empty or differ in length
     */
    static TimelineChart of(List<Simulation.Result> results, List<Simulation.PerTick> ticks) {
        if (results.isEmpty() || results.size() != ticks.size()) {
            throw new IllegalArgumentException(results.size() + " results for " + ticks.size() + " tick counts");
        }
        Simulation.Result first = results.get(0);
        StringBuilder reached = new StringBuilder("calls that reached the dead dependency:");
        for (Simulation.Result r : results) {
            reached.append(results.size() > 1 ? " " + r.mode() : "").append(' ').append(r.reachedDeadDependency())
                    .append(results.size() > 1 && r != results.get(results.size() - 1) ? "," : "");
        }
        boolean outage = first.downAtMs() < first.durationMs();
        TimelineChart.Builder b = TimelineChart.builder(String.format(Locale.ROOT,
                        "redeye simulate: %d instances x %d thread(s), one dependency %s",
                        first.instances(), first.threadsPerInstance(), outage
                                ? "down from " + SimulationReport.secs(first.downAtMs()) + " to "
                                        + (first.upAtMs() < first.durationMs()
                                                ? SimulationReport.secs(first.upAtMs()) : "the end")
                                : "up for the whole run"))
                .subtitle(SimulationReport.breakers(first) + (outage ? "; " + reached : ""))
                .xAxis("time since the start of the run (s)");
        if (results.size() > 1) {
            b.sameRange();
        }
        for (int i = 0; i < results.size(); i++) {
            panel(b, results.get(i), ticks.get(i));
        }
        return b.build();
    }

    private static void panel(TimelineChart.Builder b, Simulation.Result r, Simulation.PerTick t) {
        int n = t.calls().length;
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * t.tickMillis() / 1000.0;
        }
        b.panel(r.mode() + " (" + r.store() + ")", "calls per " + t.tickMillis() + " ms", false)
                .line(CALLS, x, doubles(t.calls()))
                .line(REJECTED, x, doubles(t.rejected()));
        if (t.trials() != null) {
            b.points(TRIALS, x, doubles(t.trials()));
        }
        if (r.downAtMs() < r.durationMs()) {
            b.span(r.downAtMs() / 1000.0, Math.min(r.upAtMs(), r.durationMs()) / 1000.0, "dependency down");
        }
        for (List<Simulation.TimelineEntry> group : SimulationReport.groups(r.timeline())) {
            Simulation.TimelineEntry e = group.get(0);
            if (e.instance() == 0) {
                continue; // the shaded span shows the dependency's changes
            }
            String label = e.from() + " -> " + e.to() + (group.size() > 1 ? " (" + group.size() + " instances)" : "");
            b.event(e.atMs() / 1000.0, label, "OPEN".equals(e.to()) ? TO_OPEN : TO_CLOSED);
        }
    }

    private static double[] doubles(long[] counts) {
        double[] d = new double[counts.length];
        for (int i = 0; i < counts.length; i++) {
            d[i] = counts[i];
        }
        return d;
    }
}

package dev.redeye.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders simulation results as text: a compact timeline of transitions, then a summary table (one column
 * per mode in a comparison) and the one-sentence story. Pure formatting, no I/O; thread-safe.
 */
final class SimulationReport {
    /** Transitions of the same kind this close together are one timeline line (per-instance mode has many). */
    private static final long GROUP_WINDOW_MS = 400;
    private static final int MAX_LISTED_INSTANCES = 6;

    private SimulationReport() {
    }

    static String single(Simulation.Result r) {
        StringBuilder sb = new StringBuilder();
        sb.append(header(r)).append('\n');
        sb.append(timeline(r)).append('\n');
        sb.append(summary(List.of(r))).append('\n');
        sb.append(story(r)).append('\n');
        return sb.toString();
    }

    static String compare(Simulation.Result shared, Simulation.Result perInstance) {
        StringBuilder sb = new StringBuilder();
        sb.append(header(shared)).append('\n');
        sb.append(timeline(shared)).append('\n');
        sb.append(timeline(perInstance)).append('\n');
        sb.append(summary(List.of(shared, perInstance))).append('\n');
        sb.append(story(shared)).append('\n');
        sb.append(story(perInstance)).append('\n');
        if (shared.reachedDeadDependency() > 0) {
            sb.append(String.format(Locale.ROOT,
                    "Per-instance breakers let %.1fx as many calls reach the dead dependency as one shared breaker.%n",
                    (double) perInstance.reachedDeadDependency() / shared.reachedDeadDependency()));
        }
        return sb.toString();
    }

    /** A virtual run ({@link VirtualFleet}): its figures, then the store's load in each backend's units. */
    static String virtual(VirtualFleet.Result r) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT,
                "redeye simulate --virtual: %d instances (%d callers) calling one dependency for %s of virtual time%n"
                        + "dependency: %s; failureThreshold %d, seed %d; ran in %s of wall time%n%n",
                r.instances(), r.callers(), secs(r.durationMs()),
                r.downAtMs() >= r.durationMs() ? "up for the whole run" : "DOWN at " + secs(r.downAtMs())
                        + ", back UP at " + (r.upAtMs() < r.durationMs() ? secs(r.upAtMs()) : "never (after the run)"),
                r.failureThreshold(), r.seed(), secs(r.wallMs())));
        Table t = new Table("", "value");
        t.row("calls", r.calls());
        t.row("succeeded", r.succeeded());
        t.row("failed", r.failed());
        t.row("rejected", r.rejected());
        t.row("reached the dead dependency", r.reachedDeadDependency());
        t.row("openings", r.openings());
        t.row("first opening after the outage began", r.firstOpeningAfterDownMs() == null ? "-"
                : secs(r.firstOpeningAfterDownMs()));
        t.row("store operations", r.storeOps() + " " + r.storeOpsByKind());
        t.row("store operations per second, peak / mean", String.format(Locale.ROOT, "%.0f / %.0f",
                r.peakStoreOpsPerSecond(), r.meanStoreOpsPerSecond()));
        sb.append(t.render()).append('\n');
        Table load = new Table("backend", "unit", "peak second", "mean", "per-key limit");
        for (VirtualFleet.Load l : r.loads()) {
            load.row(l.store(), l.unit(), String.format(Locale.ROOT, "%.0f", l.peak()),
                    String.format(Locale.ROOT, "%.0f", l.mean()), l.limit() == null ? "-" : l.limit());
        }
        sb.append("The store's load on the operation's one key, by each store module's costs per operation:\n");
        sb.append(load.render());
        return sb.toString();
    }

    private static String header(Simulation.Result r) {
        return String.format(Locale.ROOT,
                "redeye simulate: %d instances x %d thread(s) calling one dependency for %s%n"
                        + "dependency: %s; call latency %s, think time %s, seed %d%n"
                        + "breakers: %s%n",
                r.instances(), r.threadsPerInstance(), secs(r.durationMs()), dependency(r), ms(r.callLatencyMs()),
                ms(r.thinkTimeMs()), r.seed(), breakers(r));
    }

    /** The dependency's course in a run, as the header and the chart say it. */
    static String dependency(Simulation.Result r) {
        return r.downAtMs() >= r.durationMs() ? "up for the whole run"
                : "DOWN at " + secs(r.downAtMs()) + ", back UP at "
                        + (r.upAtMs() < r.durationMs() ? secs(r.upAtMs()) : "never (after the run)");
    }

    /** The breakers' options in a run, and the bad instance, as the header and the chart say them. */
    static String breakers(Simulation.Result r) {
        String rule = r.slidingWindowSeconds() > 0
                ? "failure rate " + num(r.failureRateThreshold()) + " % over " + r.slidingWindowSeconds()
                        + " s (at least " + r.minimumNumberOfCalls() + " calls)"
                : "failureThreshold " + r.failureThreshold();
        return rule + ", resetTimeout " + secs(r.resetTimeoutMs()) + ", backoff x" + num(r.backoffMultiplier())
                + ", jitter " + num(r.jitter()) + (r.quorum() > 1 ? ", quorum " + r.quorum() : "")
                + (r.badInstance() > 0 ? "; instance " + r.badInstance() + " fails every call" : "");
    }

    /**
     * The timeline's entries in groups: a dependency change alone, transitions of the same kind within
     * {@value #GROUP_WINDOW_MS} ms of the group's first one together (per-instance mode has many). The text
     * timeline and the chart's state-change marks both show these groups.
     */
    static List<List<Simulation.TimelineEntry>> groups(List<Simulation.TimelineEntry> events) {
        List<List<Simulation.TimelineEntry>> groups = new ArrayList<>();
        int i = 0;
        while (i < events.size()) {
            Simulation.TimelineEntry first = events.get(i);
            if (first.instance() == 0) {
                groups.add(List.of(first));
                i++;
                continue;
            }
            List<Simulation.TimelineEntry> group = new ArrayList<>();
            int j = i;
            while (j < events.size() && events.get(j).instance() > 0
                    && events.get(j).kind().equals(first.kind())
                    && events.get(j).atMs() - first.atMs() <= GROUP_WINDOW_MS) {
                group.add(events.get(j));
                j++;
            }
            groups.add(group);
            i = j;
        }
        return groups;
    }

    static String timeline(Simulation.Result r) {
        List<String[]> rows = new ArrayList<>();
        for (List<Simulation.TimelineEntry> group : groups(r.timeline())) {
            Simulation.TimelineEntry first = group.get(0);
            if (first.instance() == 0) {
                rows.add(new String[] {secs(first.atMs()), first.kind().equals("dependency_down")
                        ? "---- dependency goes DOWN ----" : "---- dependency is back UP ----"});
                continue;
            }
            rows.add(new String[] {secs(first.atMs()), instances(group), first.from() + " -> " + first.to(),
                meaning(first.kind(), group.size())});
        }
        int[] width = new int[4];
        for (String[] row : rows) {
            if (row.length == 4) {
                for (int c = 0; c < 4; c++) {
                    width[c] = Math.max(width[c], row[c].length());
                }
            } else {
                width[0] = Math.max(width[0], row[0].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("Timeline, ").append(r.mode()).append(" (").append(r.store()).append("):\n");
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder("  ");
            line.append(" ".repeat(width[0] - row[0].length())).append(row[0]);
            for (int c = 1; c < row.length; c++) {
                line.append("  ").append(row[c]);
                if (c < row.length - 1) {
                    line.append(" ".repeat(width[c] - row[c].length()));
                }
            }
            sb.append(line).append('\n');
        }
        return sb.toString();
    }

    private static String instances(List<Simulation.TimelineEntry> group) {
        if (group.size() == 1) {
            return "instance #" + group.get(0).instance();
        }
        StringBuilder sb = new StringBuilder();
        int listed = 0;
        List<Simulation.TimelineEntry> sorted = new ArrayList<>(group);
        sorted.sort(java.util.Comparator.comparingInt(Simulation.TimelineEntry::instance));
        for (Simulation.TimelineEntry e : sorted) {
            if (listed == MAX_LISTED_INSTANCES) {
                break;
            }
            sb.append(listed == 0 ? "#" : " #").append(e.instance());
            listed++;
        }
        return group.size() + " instances (" + sb + (group.size() > listed ? " ..." : "") + ")";
    }

    private static String meaning(String kind, int count) {
        boolean many = count > 1;
        switch (kind) {
            case "opened":
                return many ? "each opened its own breaker" : "opened: the threshold was reached";
            case "reopened":
                return many ? "trials failed, reopened (longer window)" : "won the trial, it failed: reopened";
            case "closed":
                return many ? "trials succeeded, closed" : "won the trial, it succeeded: closed";
            default:
                return kind;
        }
    }

    static String summary(List<Simulation.Result> results) {
        List<String[]> rows = new ArrayList<>();
        rows.add(row(results, "", r -> r.mode()));
        rows.add(row(results, "calls made", r -> Long.toString(r.calls())));
        rows.add(row(results, "succeeded", r -> Long.toString(r.succeeded())));
        rows.add(row(results, "rejected by the breaker (never ran)", r -> Long.toString(r.rejected())));
        // Without an outage (--no-outage) nothing reached a dead dependency: its rows, and recovery, say nothing.
        boolean outage = results.stream().anyMatch(r -> r.downAtMs() < r.durationMs());
        if (outage) {
            outageRows(results, rows);
        }
        rows.add(row(results, "trial calls (half-open)", r -> orNa(r.trialCalls())));
        rows.add(row(results, "max concurrent trial calls", r -> orNa(r.maxConcurrentTrials())));
        rows.add(row(results, "breaker openings (closed -> open)", r -> Long.toString(r.openings())));
        if (results.stream().anyMatch(r -> r.badInstance() > 0 || r.quorum() > 1)) {
            rows.add(row(results, "healthy instances' calls rejected (dependency up)",
                    r -> Long.toString(r.healthyInstancesRejected())));
            rows.add(row(results, "outlier trips", r -> Long.toString(r.outliers())));
        }
        rows.add(row(results, "store operations per call", r -> String.format(Locale.ROOT, "%.2f", r.storeOpsPerCall())));
        if (outage) {
            rows.add(row(results, "all closed again after dependency UP",
                    r -> r.recoveredAfterUpMs() == null ? "no" : secs(r.recoveredAfterUpMs())));
        }
        if (results.stream().anyMatch(r -> r.storeErrors() + r.storeUnavailable() + r.otherErrors() > 0)) {
            rows.add(row(results, "store errors / unexpected errors",
                    r -> (r.storeErrors() + r.storeUnavailable()) + " / " + r.otherErrors()));
        }
        return table(rows, results.size());
    }

    /** The rows of the calls that reached the dead dependency, sorted as OpeningProbe sorts them. */
    private static void outageRows(List<Simulation.Result> results, List<String[]> rows) {
        rows.add(row(results, "calls that reached the dead dependency", r -> Long.toString(r.reachedDeadDependency())));
        // the normal calls, sorted as OpeningProbe sorts them: the rows below them add up to them
        rows.add(row(results, "  normal calls (not trials)",
                r -> Long.toString(r.reachedDeadDependencyByNormalCalls())));
        rows.add(row(results, "    failures recorded before the opening",
                r -> Long.toString(r.failuresBeforeOpening())));
        rows.add(row(results, "    already in flight at the opening", r -> Long.toString(r.inFlightAtOpening())));
        if (results.stream().anyMatch(r -> r.admittedAfterOpening() > 0)) {
            rows.add(row(results, "      of which admitted after it (stale read)",
                    r -> Long.toString(r.admittedAfterOpening())));
        }
        if (results.stream().anyMatch(r -> r.failuresNotRecorded() > 0)) {
            rows.add(row(results, "    not recorded (the store failed)", r -> Long.toString(r.failuresNotRecorded())));
        }
        rows.add(row(results, "  failed trials", r -> orNa(r.failedTrials())));
    }

    private static String table(List<String[]> rows, int columns) {
        int[] width = new int[columns + 1];
        for (String[] row : rows) {
            for (int c = 0; c < row.length; c++) {
                width[c] = Math.max(width[c], row[c].length());
            }
        }
        StringBuilder sb = new StringBuilder("Summary:\n");
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder("  ");
            line.append(row[0]).append(" ".repeat(width[0] - row[0].length()));
            for (int c = 1; c < row.length; c++) {
                line.append("  ").append(" ".repeat(width[c] - row[c].length())).append(row[c]);
            }
            sb.append(line).append('\n');
        }
        return sb.toString();
    }

    private static String[] row(List<Simulation.Result> results, String label,
            java.util.function.Function<Simulation.Result, String> value) {
        String[] row = new String[results.size() + 1];
        row[0] = label;
        for (int i = 0; i < results.size(); i++) {
            row[i + 1] = value.apply(results.get(i));
        }
        return row;
    }

    /** A trial figure, or why it is missing. */
    private static String orNa(Number n) {
        return n == null ? "n/a (store has no trial claims)" : n.toString();
    }

    static String story(Simulation.Result r) {
        if (r.downAtMs() >= r.durationMs()) {
            return r.badInstance() == 0 ? "shared: the dependency stayed up."
                    : String.format(Locale.ROOT, "shared: instance %d failed every call while the dependency was up; "
                            + "the fleet's breaker opened %d time(s) and rejected %d call(s) of the healthy instances%s.",
                            r.badInstance(), r.openings(), r.healthyInstancesRejected(), r.quorum() > 1
                                    ? String.format(Locale.ROOT, " (quorum %d); instance %d tripped alone %d time(s)",
                                            r.quorum(), r.badInstance(), r.outliers()) : "");
        }
        if (r.maxConcurrentTrials() == null) {
            return String.format(Locale.ROOT,
                    "%s: %d call(s) reached the dead dependency; the store has no TrialClaims capability, so "
                            + "trials are claimed inside each instance and cannot be told apart here.",
                    r.mode(), r.reachedDeadDependency());
        }
        if (r.mode().equals(Simulation.Mode.SHARED.label())) {
            return String.format(Locale.ROOT,
                    "shared: %d normal call(s) reached the dead dependency: %d recorded before the breaker opened "
                            + "(failureThreshold %d) and %d already in flight at the opening; then only trials, at "
                            + "most %d at a time, across all %d instances.",
                    r.reachedDeadDependencyByNormalCalls(), r.failuresBeforeOpening(), r.failureThreshold(),
                    r.inFlightAtOpening(), r.maxConcurrentTrials(), r.instances());
        }
        return String.format(Locale.ROOT,
                "per-instance: each of the %d instances had to see failureThreshold (%d) failures on its own: "
                        + "%d normal call(s) reached the dead dependency, and %d trial call(s) in all.",
                r.instances(), r.failureThreshold(), r.reachedDeadDependencyByNormalCalls(), r.trialCalls());
    }

    static String secs(long ms) {
        return String.format(Locale.ROOT, "%.3fs", ms / 1000.0).replaceAll("\\.?0+s$", "s");
    }

    private static String ms(long ms) {
        return ms + "ms";
    }

    static String num(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}

package dev.redeye.tck;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.StateChange;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/** Exact comparison and printing of breaker states, shared by the scripted rules and the model rules. */
final class States {
    private States() {
    }

    /** Whether two states are equal field by field, {@code errorRate} compared bit for bit. */
    static boolean same(BreakerState expected, BreakerState actual) {
        return expected.equals(actual)
                && Double.doubleToRawLongBits(expected.errorRate()) == Double.doubleToRawLongBits(actual.errorRate());
    }

    /**
     * The fields in which {@code actual} differs from {@code expected} ("failures expected 1 but was 2; ..."),
     * or {@code null} when they are the same.
     */
    static String diff(BreakerState expected, BreakerState actual) {
        if (same(expected, actual)) {
            return null;
        }
        List<String> diffs = new ArrayList<>();
        diff(diffs, "failures", expected.failures(), actual.failures());
        diff(diffs, "lastFailureAt", expected.lastFailureAt(), actual.lastFailureAt());
        diff(diffs, "open", expected.open(), actual.open());
        diff(diffs, "openedAt", expected.openedAt(), actual.openedAt());
        diff(diffs, "openCount", expected.openCount(), actual.openCount());
        if (Double.doubleToRawLongBits(expected.errorRate()) != Double.doubleToRawLongBits(actual.errorRate())) {
            diffs.add("errorRate expected " + expected.errorRate() + " but was " + actual.errorRate()
                    + (Math.abs(expected.errorRate() - actual.errorRate()) < 1e-9
                            ? " (not bit-exact: the EWMA must be evaluated as decay * errorRate + (1 - decay) * x)"
                            : ""));
        }
        diff(diffs, "samples", expected.samples(), actual.samples());
        diff(diffs, "trialSuccesses", expected.trialSuccesses(), actual.trialSuccesses());
        diff(diffs, "forced", expected.forced(), actual.forced());
        diff(diffs, "window", String.valueOf(expected.window()), String.valueOf(actual.window()));
        diff(diffs, "mode", expected.mode(), actual.mode());
        diff(diffs, "version", expected.version(), actual.version());
        return String.join("; ", diffs);
    }

    /**
     * How {@code actual} differs from {@code expected} (previous state, new state and transition kind), or
     * {@code null} when it does not.
     */
    static String diff(StateChange expected, StateChange actual) {
        List<String> out = new ArrayList<>();
        String prev = diff(expected.previous(), actual.previous());
        if (prev != null) {
            out.add("previous state: " + prev);
        }
        String next = diff(expected.state(), actual.state());
        if (next != null) {
            out.add("new state: " + next);
        }
        if (!Objects.equals(expected.transition(), actual.transition())) {
            out.add("transition expected " + expected.transition() + " but was " + actual.transition());
        }
        return out.isEmpty() ? null : String.join("; ", out);
    }

    private static void diff(List<String> out, String field, Object expected, Object actual) {
        if (!expected.equals(actual)) {
            out.add(field + " expected " + expected + " but was " + actual);
        }
    }

    /** A state as a Java expression that rebuilds it exactly (for printed replays). */
    static String java(BreakerState s) {
        if (s.window() != null || s.mode() != BreakerMode.DEFAULT) {
            return String.format(Locale.ROOT, "new BreakerState(%d, %dL, %b, %dL, %d, %s, %dL, %d, %b, %s, "
                    + "BreakerMode.%s, %dL)", s.failures(), s.lastFailureAt(), s.open(), s.openedAt(), s.openCount(),
                    javaDouble(s.errorRate()), s.samples(), s.trialSuccesses(), s.forced(),
                    s.window() == null ? "null" : "SlidingWindow.decode(\"" + s.window().encode() + "\")",
                    s.mode().name(), s.version());
        }
        return String.format(Locale.ROOT, "new BreakerState(%d, %dL, %b, %dL, %d, %s, %dL, %d, %b, %dL)",
                s.failures(), s.lastFailureAt(), s.open(), s.openedAt(), s.openCount(), javaDouble(s.errorRate()),
                s.samples(), s.trialSuccesses(), s.forced(), s.version());
    }

    /** A double as a Java literal that reads back bit for bit. */
    static String javaDouble(double d) {
        return d == Double.MIN_VALUE ? "Double.MIN_VALUE" : Double.toString(d);
    }

    /** A short, readable form of a state for traces. */
    static String brief(BreakerState s) {
        StringBuilder sb = new StringBuilder();
        sb.append(s.forced() ? "forced-open" : s.open() ? "open" : "closed").append(" v").append(s.version());
        sb.append(" failures=").append(s.failures());
        if (s.lastFailureAt() != 0) {
            sb.append(" lastFailureAt=").append(time(s.lastFailureAt()));
        }
        if (s.open()) {
            sb.append(" openedAt=").append(time(s.openedAt()));
        }
        if (s.openCount() != 0) {
            sb.append(" openCount=").append(s.openCount());
        }
        if (s.samples() != 0 || s.errorRate() != 0.0) {
            sb.append(" errorRate=").append(s.errorRate()).append(" samples=").append(s.samples());
        }
        if (s.trialSuccesses() != 0) {
            sb.append(" trialSuccesses=").append(s.trialSuccesses());
        }
        if (s.window() != null) {
            sb.append(" window=").append(s.window().encode());
        }
        if (s.mode() != BreakerMode.DEFAULT) {
            sb.append(" mode=").append(s.mode().name());
        }
        return sb.toString();
    }

    /** A virtual time as an offset from the TCK's epoch: {@code T0+1250}. */
    static String time(long t) {
        long d = t - TckSupport.T0;
        return d >= 0 ? "T0+" + d : "T0" + d;
    }
}

package dev.redeye.spi.support;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one stored layout of a {@link BreakerState} as named string fields, and of a {@link TransitionEvent}
 * as fields or as one line, shared by every store that keeps fields (Redis hashes and stream entries,
 * NOTIFY payloads, map values). Field names and codes are explicit and stable; ordinals and Java
 * serialization are never persisted.
 *
 * <table>
 * <caption>State fields</caption>
 * <tr><th>field</th><th>encoding</th></tr>
 * <tr><td>{@code failures}</td><td>decimal int</td></tr>
 * <tr><td>{@code lastFailureAt}</td><td>decimal epoch ms</td></tr>
 * <tr><td>{@code open}</td><td>{@code 0} or {@code 1}</td></tr>
 * <tr><td>{@code openedAt}</td><td>decimal epoch ms</td></tr>
 * <tr><td>{@code openCount}</td><td>decimal int</td></tr>
 * <tr><td>{@code errorRate}</td><td>decimal double that round-trips exactly (Java {@code Double.toString},
 * or {@code %.17g})</td></tr>
 * <tr><td>{@code samples}</td><td>decimal long</td></tr>
 * <tr><td>{@code trialSuccesses}</td><td>decimal int</td></tr>
 * <tr><td>{@code forced}</td><td>{@code 0} or {@code 1}</td></tr>
 * <tr><td>{@code window}</td><td>{@link SlidingWindow#encode()}; absent when there is no window</td></tr>
 * <tr><td>{@code mode}</td><td>{@link BreakerMode#code()}; absent for {@link BreakerMode#DEFAULT}</td></tr>
 * <tr><td>{@code contributors}</td><td>{@link Contribution#encodeAll}; absent when there are none</td></tr>
 * <tr><td>{@code version}</td><td>decimal long; absent in a foreign or older layout, read as
 * {@link BreakerState#UNKNOWN_VERSION}</td></tr>
 * </table>
 *
 * <p>An event adds {@code op} (the operation name), {@code kind} ({@link TransitionKind#wireName()}) and
 * {@code from} ({@link BreakerStatus#code()}).
 */
public final class StateCodec {
    public static final String FAILURES = "failures";
    public static final String LAST_FAILURE_AT = "lastFailureAt";
    public static final String OPEN = "open";
    public static final String OPENED_AT = "openedAt";
    public static final String OPEN_COUNT = "openCount";
    public static final String ERROR_RATE = "errorRate";
    public static final String SAMPLES = "samples";
    public static final String TRIAL_SUCCESSES = "trialSuccesses";
    public static final String FORCED = "forced";
    public static final String WINDOW = "window";
    public static final String MODE = "mode";
    public static final String CONTRIBUTORS = "contributors";
    public static final String VERSION = "version";
    public static final String EVENT_OPERATION = "op";
    public static final String EVENT_KIND = "kind";
    public static final String EVENT_FROM = "from";

    private StateCodec() {
    }

    /** The state as fields, in the order of the table above. */
    public static Map<String, String> toFields(BreakerState s) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(FAILURES, Integer.toString(s.failures()));
        m.put(LAST_FAILURE_AT, Long.toString(s.lastFailureAt()));
        m.put(OPEN, s.open() ? "1" : "0");
        m.put(OPENED_AT, Long.toString(s.openedAt()));
        m.put(OPEN_COUNT, Integer.toString(s.openCount()));
        m.put(ERROR_RATE, Double.toString(s.errorRate()));
        m.put(SAMPLES, Long.toString(s.samples()));
        m.put(TRIAL_SUCCESSES, Integer.toString(s.trialSuccesses()));
        m.put(FORCED, s.forced() ? "1" : "0");
        if (s.window() != null) {
            m.put(WINDOW, s.window().encode());
        }
        if (s.mode() != BreakerMode.DEFAULT) {
            m.put(MODE, Integer.toString(s.mode().code()));
        }
        if (!s.contributors().isEmpty()) {
            m.put(CONTRIBUTORS, Contribution.encodeAll(s.contributors()));
        }
        m.put(VERSION, Long.toString(s.version()));
        return m;
    }

    /**
     * Reads a state from fields. Extra fields are ignored; a missing {@code version} reads as
     * {@link BreakerState#UNKNOWN_VERSION}, a missing {@code window} as none, a missing {@code mode} as
     * {@link BreakerMode#DEFAULT}, missing {@code contributors} as none.
     *
     * @param where names the data in the error message (for example the key); must not hold secrets
     * @throws StoreException if a field is missing, not a number, or the values break an invariant
     */
    public static BreakerState fromFields(Map<String, String> f, String where) {
        if (f == null || f.isEmpty()) {
            throw new StoreException("malformed breaker state at " + where + ": no fields");
        }
        try {
            String version = f.get(VERSION);
            String window = f.get(WINDOW);
            String mode = f.get(MODE);
            String contributors = f.get(CONTRIBUTORS);
            return new BreakerState(
                    Integer.parseInt(required(f, FAILURES, where)),
                    Long.parseLong(required(f, LAST_FAILURE_AT, where)),
                    bool(required(f, OPEN, where), OPEN, where),
                    Long.parseLong(required(f, OPENED_AT, where)),
                    Integer.parseInt(required(f, OPEN_COUNT, where)),
                    Double.parseDouble(required(f, ERROR_RATE, where)),
                    Long.parseLong(required(f, SAMPLES, where)),
                    Integer.parseInt(required(f, TRIAL_SUCCESSES, where)),
                    bool(required(f, FORCED, where), FORCED, where),
                    window == null ? null : SlidingWindow.decode(window),
                    mode == null ? BreakerMode.DEFAULT : BreakerMode.fromCode(Integer.parseInt(mode)),
                    contributors == null ? List.of() : Contribution.decodeAll(contributors),
                    version == null ? BreakerState.UNKNOWN_VERSION : Long.parseLong(version));
        } catch (IllegalArgumentException e) { // NumberFormatException included
            throw new StoreException("malformed breaker state at " + where + ": " + e.getMessage(), e);
        }
    }

    /** The event as fields: the state's fields plus {@code op}, {@code kind} and {@code from}. */
    public static Map<String, String> eventToFields(TransitionEvent e) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(EVENT_OPERATION, e.operation());
        m.put(EVENT_KIND, e.kind().wireName());
        m.put(EVENT_FROM, Integer.toString(e.from().code()));
        m.putAll(toFields(e.state()));
        return m;
    }

    /**
     * Reads an event from fields.
     *
     * @throws StoreException if a field is missing or malformed
     */
    public static TransitionEvent eventFromFields(Map<String, String> f, String where) {
        try {
            String op = required(f, EVENT_OPERATION, where);
            TransitionKind kind = TransitionKind.fromWireName(required(f, EVENT_KIND, where));
            BreakerStatus from = BreakerStatus.fromCode(Integer.parseInt(required(f, EVENT_FROM, where)));
            return new TransitionEvent(op, kind, from, fromFields(f, where));
        } catch (IllegalArgumentException e) {
            throw new StoreException("malformed transition event at " + where + ": " + e.getMessage(), e);
        }
    }

    /** The event as one line of {@code k=v&k=v} with percent-encoded keys and values. */
    public static String eventToLine(TransitionEvent e) {
        StringBuilder sb = new StringBuilder(160 + e.operation().length());
        for (Map.Entry<String, String> en : eventToFields(e).entrySet()) {
            if (sb.length() > 0) {
                sb.append('&');
            }
            sb.append(URLEncoder.encode(en.getKey(), StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(en.getValue(), StandardCharsets.UTF_8));
        }
        return sb.toString();
    }

    /**
     * Reads an event from a line written by {@link #eventToLine(TransitionEvent)}.
     *
     * @throws StoreException if the line is malformed
     */
    public static TransitionEvent eventFromLine(String line, String where) {
        Map<String, String> m = new LinkedHashMap<>();
        try {
            for (String pair : line.split("&")) {
                int eq = pair.indexOf('=');
                if (eq < 0) {
                    throw new StoreException("malformed transition event at " + where + ": no '=' in a pair");
                }
                m.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        } catch (IllegalArgumentException e) {
            throw new StoreException("malformed transition event at " + where + ": " + e.getMessage(), e);
        }
        return eventFromFields(m, where);
    }

    private static String required(Map<String, String> f, String name, String where) {
        String v = f.get(name);
        if (v == null) {
            throw new StoreException("malformed breaker state at " + where + ": missing field '" + name + "'");
        }
        return v;
    }

    private static boolean bool(String v, String name, String where) {
        if (v.equals("1") || v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equals("0") || v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new StoreException("malformed breaker state at " + where + ": field '" + name
                + "' is not 0 or 1");
    }
}

package dev.redeye.http;

import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Strategy;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The map and properties forms of {@link HttpRuleSet}: parsing only (the rules validate themselves). Keys are
 * compared in Spring's relaxed way (case, {@code -} and {@code _} ignored), so a starter can bind the same
 * shape.
 */
final class RuleConfig {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");
    private static final Pattern INDEXED = Pattern.compile("([^\\[\\]]*)((?:\\[\\d+\\])*)");

    private RuleConfig() {
    }

    static HttpRuleSet fromMap(Map<String, ?> config) {
        HttpRuleSet.Builder b = HttpRuleSet.builder();
        Object rules = null;
        for (Map.Entry<String, ?> e : config.entrySet()) {
            switch (relaxed(e.getKey())) {
                case "defaults":
                    b.defaults(defaults(asMap(e.getValue(), "defaults")));
                    break;
                case "rules":
                    rules = e.getValue();
                    break;
                default:
                    throw new IllegalArgumentException("unknown key '" + e.getKey() + "' (expected defaults or rules)");
            }
        }
        if (rules != null) {
            List<?> list = asList(rules, "rules");
            for (int i = 0; i < list.size(); i++) {
                b.rule(rule(asMap(list.get(i), "rules[" + i + "]"), "rules[" + i + "]"));
            }
        }
        return b.build();
    }

    static HttpRuleSet fromProperties(Properties properties, String prefix) {
        Map<String, Object> root = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            if (!name.startsWith(prefix)) {
                continue;
            }
            String rest = name.substring(prefix.length());
            put(root, rest, properties.getProperty(name), name);
        }
        try {
            return fromMap(root);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((prefix.isEmpty() ? "" : "under '" + prefix + "': ") + e.getMessage(), e);
        }
    }

    /** Puts {@code value} at the dotted, indexed path {@code rest} ({@code rules[0].skip-list[1]}) of {@code root}. */
    @SuppressWarnings("unchecked")
    private static void put(Map<String, Object> root, String rest, String value, String property) {
        Map<String, Object> node = root;
        String[] parts = rest.split("\\.");
        List<String> path = new ArrayList<>();
        for (String part : parts) {
            Matcher m = INDEXED.matcher(part);
            if (part.isEmpty() || !m.matches() || m.group(1).isEmpty()) {
                throw new IllegalArgumentException("malformed property name '" + property + "'");
            }
            path.add(m.group(1));
            Matcher idx = Pattern.compile("\\[(\\d+)\\]").matcher(m.group(2));
            while (idx.find()) {
                path.add(idx.group(1));
            }
        }
        for (int i = 0; i < path.size() - 1; i++) {
            Object next = node.computeIfAbsent(path.get(i), k -> new TreeMap<String, Object>(RuleConfig::byIndex));
            if (!(next instanceof Map)) {
                throw new IllegalArgumentException("property '" + property + "' nests under a plain value");
            }
            node = (Map<String, Object>) next;
        }
        node.put(path.get(path.size() - 1), value);
    }

    /** Orders numeric keys as numbers ({@code 2 < 10}) and the rest as text. */
    private static int byIndex(String a, String b) {
        boolean na = a.chars().allMatch(Character::isDigit);
        boolean nb = b.chars().allMatch(Character::isDigit);
        if (na && nb) {
            return Long.compare(Long.parseLong(a), Long.parseLong(b));
        }
        return a.compareTo(b);
    }

    private static RuleDefaults defaults(Map<String, ?> m) {
        RuleDefaults d = RuleDefaults.defaults();
        for (Map.Entry<String, ?> e : m.entrySet()) {
            String where = "defaults." + e.getKey();
            Object v = e.getValue();
            try {
                switch (relaxed(e.getKey())) {
                    case "failurethreshold":
                        d = d.withFailureThreshold(integer(v, where));
                        break;
                    case "resettimeout":
                        d = d.withResetTimeout(duration(v, where));
                        break;
                    case "successthreshold":
                        d = d.withSuccessThreshold(integer(v, where));
                        break;
                    case "strategy":
                        d = d.withStrategy(strategy(v, where));
                        break;
                    case "successstatuses":
                        d = d.withSuccessStatuses(statuses(v, where));
                        break;
                    case "failurestatuses":
                        d = d.withFailureStatuses(statuses(v, where));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown key '" + where + "' (expected failureThreshold, "
                                + "resetTimeout, successThreshold, strategy, successStatuses or failureStatuses)");
                }
            } catch (InvalidOptionException ex) { // the option's own check, in the defaults' record
                throw new IllegalArgumentException("defaults." + ex.getMessage(), ex);
            }
        }
        return d;
    }

    @SuppressWarnings("unchecked")
    private static HttpRule rule(Map<String, ?> m, String where) {
        Object type = null;
        Object match = null;
        for (Map.Entry<String, ?> e : m.entrySet()) {
            String k = relaxed(e.getKey());
            if (k.equals("type")) {
                type = e.getValue();
            } else if (k.equals("match")) {
                match = e.getValue();
            }
        }
        if (type == null) {
            throw new IllegalArgumentException(where + ".type is required (service or endpoint)");
        }
        if (match == null) {
            throw new IllegalArgumentException(where + ".match is required (a substring of the request path)");
        }
        HttpRule.Builder b;
        try {
            b = HttpRule.of(Level.fromName(String.valueOf(type)), String.valueOf(match));
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(where + ".type: " + ex.getMessage(), ex);
        }
        for (Map.Entry<String, ?> e : m.entrySet()) {
            String at = where + "." + e.getKey();
            Object v = e.getValue();
            try {
                switch (relaxed(e.getKey())) {
                    case "type":
                    case "match":
                        break;
                    case "name":
                        b.name(String.valueOf(v));
                        break;
                    case "skiplist":
                    case "skip":
                        b.skipList(strings(v, at));
                        break;
                    case "failurethreshold":
                        b.failureThreshold(integer(v, at));
                        break;
                    case "resettimeout":
                        b.resetTimeout(duration(v, at));
                        break;
                    case "successthreshold":
                        b.successThreshold(integer(v, at));
                        break;
                    case "strategy":
                        b.strategy(strategy(v, at));
                        break;
                    case "successstatuses":
                        b.successStatuses(statuses(v, at));
                        break;
                    case "failurestatuses":
                        b.failureStatuses(statuses(v, at));
                        break;
                    case "onstatechange":
                        if (!(v instanceof Consumer)) {
                            throw new IllegalArgumentException(at + " must be a Consumer<HttpStateChange>, was "
                                    + (v == null ? "null" : v.getClass().getName()));
                        }
                        b.onStateChange((Consumer<HttpStateChange>) v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown key '" + at + "' (expected type, match, name, "
                                + "skipList, failureThreshold, resetTimeout, successThreshold, strategy, "
                                + "successStatuses, failureStatuses or onStateChange)");
                }
            } catch (InvalidOptionException ex) { // the option's own check, in the rule builder's setter
                throw new IllegalArgumentException(where + ": " + ex.getMessage(), ex);
            }
        }
        try {
            return b.build();
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException(where + ": " + ex.getMessage(), ex);
        }
    }

    /** {@code skipList}, {@code skip-list} and {@code SKIP_LIST} all read as {@code skiplist}. */
    static String relaxed(String key) {
        return key.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, ?> asMap(Object v, String where) {
        if (v instanceof Map) {
            return (Map<String, ?>) v;
        }
        throw new IllegalArgumentException(where + " must be a map of keys to values, was " + describe(v));
    }

    /** A list, or a map from index to element (flat binders' form), in index order. */
    private static List<?> asList(Object v, String where) {
        if (v instanceof List) {
            return (List<?>) v;
        }
        if (v instanceof Map) {
            Map<String, Object> sorted = new TreeMap<>(RuleConfig::byIndex);
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                String k = String.valueOf(e.getKey());
                if (!k.chars().allMatch(Character::isDigit) || k.isEmpty()) {
                    throw new IllegalArgumentException(where + " must be a list; found key '" + k + "'");
                }
                sorted.put(k, e.getValue());
            }
            return new ArrayList<>(sorted.values());
        }
        throw new IllegalArgumentException(where + " must be a list, was " + describe(v));
    }

    private static List<String> strings(Object v, String where) {
        List<String> out = new ArrayList<>();
        if (v instanceof String) {
            for (String s : ((String) v).split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim());
                }
            }
            return out;
        }
        for (Object o : asList(v, where)) {
            out.add(String.valueOf(o).trim());
        }
        return out;
    }

    private static StatusCodes statuses(Object v, String where) {
        try {
            if (v instanceof StatusCodes) {
                return (StatusCodes) v;
            }
            if (v instanceof String) {
                return StatusCodes.parse((String) v);
            }
            if (v instanceof Number) {
                return StatusCodes.of(((Number) v).intValue());
            }
            if (v instanceof Collection || v instanceof Map) {
                return StatusCodes.parse(asList(v, where));
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        throw new IllegalArgumentException(where + " must be statuses (404, 5xx, 500-504), was " + describe(v));
    }

    private static int integer(Object v, String where) {
        if (v instanceof Integer || v instanceof Long || v instanceof Short) {
            return Math.toIntExact(((Number) v).longValue());
        }
        try {
            return Integer.parseInt(String.valueOf(v).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(where + " must be an integer, was " + describe(v), e);
        }
    }

    private static Strategy strategy(Object v, String where) {
        if (v instanceof Strategy) {
            return (Strategy) v;
        }
        try {
            return Strategy.fromName(String.valueOf(v).trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    /** {@code 60s}, {@code 500ms}, {@code 2m}, {@code 1h}, {@code 1d}, ISO-8601 ({@code PT30S}), or ms. */
    static Duration duration(Object v, String where) {
        if (v instanceof Duration) {
            return (Duration) v;
        }
        if (v instanceof Integer || v instanceof Long) {
            return Duration.ofMillis(((Number) v).longValue());
        }
        String s = String.valueOf(v).trim().toLowerCase(Locale.ROOT);
        Matcher m = DURATION.matcher(s);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "ms" : m.group(2);
            switch (unit) {
                case "s":
                    return Duration.ofSeconds(n);
                case "m":
                    return Duration.ofMinutes(n);
                case "h":
                    return Duration.ofHours(n);
                case "d":
                    return Duration.ofDays(n);
                default:
                    return Duration.ofMillis(n);
            }
        }
        try {
            return Duration.parse(s.toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(where + " must be a duration (60s, 500ms, 2m, 1h, PT30S, or ms), was "
                    + describe(v), e);
        }
    }

    private static String describe(Object v) {
        return v == null ? "null" : v instanceof String ? "'" + v + "'" : v.getClass().getSimpleName() + " " + v;
    }
}

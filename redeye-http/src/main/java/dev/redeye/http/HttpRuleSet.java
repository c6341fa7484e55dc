package dev.redeye.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;

/**
 * The rules, in order, and the {@link RuleDefaults}: what {@link HttpBreakers} is built from. Immutable.
 *
 * <h2>Matching</h2>
 * A request's path (never its query string or fragment, which may carry tokens or personal data: they are
 * stripped before matching and never logged) is matched per level: the <b>first</b> rule of the level, in
 * order, whose {@code match} is a substring of the path wins. A service rule whose {@code skipList} holds a
 * substring of the path leaves the request out of the service level altogether (no later service rule is
 * tried: the first match decides). A request matching no rule on either level passes untouched.
 *
 * <h2>Configuration</h2>
 * Built with {@link #builder()}, or from a plain map ({@link #fromMap(Map)}, the shape YAML or a Spring
 * {@code @ConfigurationProperties} binding produces) or flat properties ({@link #fromProperties(Properties,
 * String)}); see {@link #fromMap(Map)} for the keys.
 */
public final class HttpRuleSet {
    private final List<HttpRule> rules;
    private final RuleDefaults defaults;

    private HttpRuleSet(List<HttpRule> rules, RuleDefaults defaults) {
        this.rules = Collections.unmodifiableList(new ArrayList<>(rules));
        this.defaults = defaults;
        Set<String> operations = new HashSet<>();
        for (HttpRule r : rules) {
            if (!operations.add(r.operation())) {
                throw new IllegalArgumentException("two " + r.level().wireName() + " rules have the key '" + r.key()
                        + "' (they would share one breaker); give one a distinct name");
            }
        }
    }

    /** A builder of an empty rule set with the reference defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Rules from a plain map, keys in camelCase or kebab-case (Spring's relaxed forms: {@code skipList},
     * {@code skip-list}, {@code skip_list}):
     *
     * <pre>
     * defaults:
     *   failureThreshold: 5          # >= 1
     *   resetTimeout: 60s                # 60s, 500ms, 2m, 1h, PT30S, or a number of ms
     *   successThreshold: 1
     *   strategy: leaky              # leaky, consecutive or errorRate
     *   successStatuses: "2xx"       # codes, classes (5xx), ranges (500-504); a list or a comma-separated string
     *   failureStatuses: "429"
     * rules:
     *   - type: service              # service or endpoint (required)
     *     match: /payments           # substring of the path (required)
     *     name: payments             # optional key; default: match
     *     skipList: [/payments/health]
     *   - type: endpoint
     *     match: /payments/v1/charges
     *     failureThreshold: 3
     *     resetTimeout: 20s
     *     successStatuses: [404]
     *     failureStatuses: [429, 5xx]
     *     onStateChange: !java-object  # a Consumer&lt;HttpStateChange&gt; value, where the map is built in code
     * </pre>
     *
     * {@code rules} may be a list or a map from index ({@code "0"}, {@code "1"}, ...) to rule, as flat binders
     * produce; it is read in index order.
     *
     * @throws IllegalArgumentException naming the key and the rule, for a missing or bad value or an unknown key
     * @throws NullPointerException     if {@code config} is null
     */
    public static HttpRuleSet fromMap(Map<String, ?> config) {
        return RuleConfig.fromMap(Objects.requireNonNull(config, "config"));
    }

    /**
     * Rules from flat properties under {@code prefix} (empty for none): {@code <prefix>defaults.failureThreshold=5},
     * {@code <prefix>rules[0].type=service}, {@code <prefix>rules[0].match=/payments},
     * {@code <prefix>rules[0].skip-list=/payments/health,/payments/status} (or {@code skipList[0]=...}); the keys
     * of {@link #fromMap(Map)}. Properties outside the prefix are ignored.
     *
     * @throws IllegalArgumentException naming the property, for a missing or bad value or an unknown key
     */
    public static HttpRuleSet fromProperties(Properties properties, String prefix) {
        return RuleConfig.fromProperties(Objects.requireNonNull(properties, "properties"),
                Objects.requireNonNull(prefix, "prefix"));
    }

    /** The rules, in matching order. */
    public List<HttpRule> rules() {
        return rules;
    }

    public RuleDefaults defaults() {
        return defaults;
    }

    /**
     * The path of {@code pathOrUri} without its query string and fragment: everything before the first
     * {@code ?} or {@code #}.
     */
    public static String stripQuery(String pathOrUri) {
        int q = pathOrUri.indexOf('?');
        int h = pathOrUri.indexOf('#');
        int end = q < 0 ? h : h < 0 ? q : Math.min(q, h);
        return end < 0 ? pathOrUri : pathOrUri.substring(0, end);
    }

    /**
     * The rule of {@code level} that governs {@code path} (query already stripped): the first that matches;
     * null if none does, or if the first matching service rule skips the path.
     */
    public HttpRule match(Level level, String path) {
        for (HttpRule r : rules) {
            if (r.level() == level && r.matches(path)) {
                return level == Level.SERVICE && r.skips(path) ? null : r;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "HttpRuleSet" + rules;
    }

    /** Builds an {@link HttpRuleSet}; rules keep the order they were added in. Not thread-safe. */
    public static final class Builder {
        private final List<HttpRule> rules = new ArrayList<>();
        private RuleDefaults defaults = RuleDefaults.defaults();

        private Builder() {
        }

        /** Appends a rule (the order decides the first match). */
        public Builder rule(HttpRule rule) {
            rules.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /** Builds and appends a rule. */
        public Builder rule(HttpRule.Builder rule) {
            return rule(rule.build());
        }

        public Builder defaults(RuleDefaults v) {
            defaults = Objects.requireNonNull(v, "defaults");
            return this;
        }

        /**
         * @throws IllegalArgumentException if two rules of one level have the same key
         */
        public HttpRuleSet build() {
            return new HttpRuleSet(rules, defaults);
        }
    }
}

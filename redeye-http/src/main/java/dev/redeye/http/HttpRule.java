package dev.redeye.http;

import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One rule: a level ({@link Level#SERVICE} or {@link Level#ENDPOINT}), a {@code match} (a substring of the
 * request path, query string stripped), and the options that differ from the {@linkplain RuleDefaults
 * defaults}. Immutable; build one with {@link #service(String)} or {@link #endpoint(String)}:
 *
 * <pre>{@code
 * HttpRule payments = HttpRule.service("/payments")
 *         .skip("/payments/health", "/payments/reports")     // not counted toward the service
 *         .failureThreshold(10)
 *         .build();
 * HttpRule charges = HttpRule.endpoint("/payments/v1/charges")
 *         .failureThreshold(3).resetTimeout(Duration.ofSeconds(20))
 *         .successStatuses("404").failureStatuses("429")
 *         .onStateChange(change -> pager.page(change.toString()))
 *         .build();
 * }</pre>
 *
 * <p>Each rule gets its own breaker, named {@code "<level>:<key>"} where the key is the rule's
 * {@linkplain Builder#name(String) name}, or its match when it has none ({@code service:/payments}). Rules with
 * the same key on the same level are refused, since they would share one breaker state.
 */
public final class HttpRule {
    private final Level level;
    private final String match;
    private final String name;
    private final List<String> skipList;
    private final Integer failureThreshold;
    private final Duration resetTimeout;
    private final Integer successThreshold;
    private final Strategy strategy;
    private final StatusCodes successStatuses;
    private final StatusCodes failureStatuses;
    private final Consumer<HttpStateChange> onStateChange;

    private HttpRule(Builder b) {
        this.level = b.level;
        this.match = b.match;
        this.name = b.name;
        this.skipList = Collections.unmodifiableList(new ArrayList<>(b.skipList));
        this.failureThreshold = b.failureThreshold;
        this.resetTimeout = b.resetTimeout;
        this.successThreshold = b.successThreshold;
        this.strategy = b.strategy;
        this.successStatuses = b.successStatuses;
        this.failureStatuses = b.failureStatuses;
        this.onStateChange = b.onStateChange;
    }

    /** A builder of a service rule matching paths that contain {@code match}. */
    public static Builder service(String match) {
        return new Builder(Level.SERVICE, match);
    }

    /** A builder of an endpoint rule matching paths that contain {@code match}. */
    public static Builder endpoint(String match) {
        return new Builder(Level.ENDPOINT, match);
    }

    /** A builder of a rule of {@code level}. */
    public static Builder of(Level level, String match) {
        return new Builder(Objects.requireNonNull(level, "type"), match);
    }

    public Level level() {
        return level;
    }

    /** The substring of the path this rule matches. */
    public String match() {
        return match;
    }

    /** The rule's key: its name, or its match when it has none. */
    public String key() {
        return name != null ? name : match;
    }

    /** The breaker's operation name: {@code "<level>:<key>"}. */
    public String operation() {
        return level.wireName() + ":" + key();
    }

    /** Service rules: path substrings whose requests are not counted toward (nor held back by) the service. */
    public List<String> skipList() {
        return skipList;
    }

    public Optional<Integer> failureThreshold() {
        return Optional.ofNullable(failureThreshold);
    }

    /** How long the breaker stays open before a trial (the engine's {@code resetTimeout}). */
    public Optional<Duration> resetTimeout() {
        return Optional.ofNullable(resetTimeout);
    }

    public Optional<Integer> successThreshold() {
        return Optional.ofNullable(successThreshold);
    }

    public Optional<Strategy> strategy() {
        return Optional.ofNullable(strategy);
    }

    public Optional<StatusCodes> successStatuses() {
        return Optional.ofNullable(successStatuses);
    }

    public Optional<StatusCodes> failureStatuses() {
        return Optional.ofNullable(failureStatuses);
    }

    /** This rule's own state-change callback, called before the registry-wide one. */
    public Optional<Consumer<HttpStateChange>> onStateChange() {
        return Optional.ofNullable(onStateChange);
    }

    /** Whether {@code path} (query already stripped) belongs to this rule: contains the match, and is not skipped. */
    boolean matches(String path) {
        return path.contains(match);
    }

    /** Whether a service rule's skip list exempts {@code path}. */
    boolean skips(String path) {
        for (String s : skipList) {
            if (path.contains(s)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "HttpRule[" + operation() + (name != null ? ", match " + match : "")
                + (skipList.isEmpty() ? "" : ", skip " + skipList) + "]";
    }

    /**
     * Builds an {@link HttpRule}. The breaker options' setters check their value with the option's own check
     * ({@link Policy#FAILURE_THRESHOLD} and the others) and throw {@link dev.redeye.api.InvalidOptionException}
     * naming it; {@link #build()} checks the rule's own fields and throws {@link IllegalArgumentException}
     * naming the field and the rule. Unset options come from the {@link RuleDefaults}. Not thread-safe.
     */
    public static final class Builder {
        private final Level level;
        private final String match;
        private String name;
        private final List<String> skipList = new ArrayList<>();
        private Integer failureThreshold;
        private Duration resetTimeout;
        private Integer successThreshold;
        private Strategy strategy;
        private StatusCodes successStatuses;
        private StatusCodes failureStatuses;
        private Consumer<HttpStateChange> onStateChange;

        private Builder(Level level, String match) {
            this.level = level;
            this.match = match;
        }

        /** The rule's key (default: its match); the breaker is named {@code "<level>:<name>"}. */
        public Builder name(String v) { name = v; return this; }

        /** Adds path substrings a service rule does not count. */
        public Builder skip(String... v) { skipList.addAll(List.of(v)); return this; }

        /** Adds path substrings a service rule does not count. */
        public Builder skipList(List<String> v) { skipList.addAll(v); return this; }

        /** Failures that open this rule's breaker ({@link Policy#FAILURE_THRESHOLD}'s check). */
        public Builder failureThreshold(int v) { failureThreshold = Policy.FAILURE_THRESHOLD.check(v); return this; }

        /** How long this rule's breaker stays open before a trial ({@link Policy#RESET_TIMEOUT}'s check). */
        public Builder resetTimeout(Duration v) { resetTimeout = Policy.RESET_TIMEOUT.check(v); return this; }

        /** Successful trials that close this rule's breaker ({@link Policy#SUCCESS_THRESHOLD}'s check). */
        public Builder successThreshold(int v) { successThreshold = Policy.SUCCESS_THRESHOLD.check(v); return this; }

        /** How failures are counted; {@link Strategy#LEAKY} unless the defaults say otherwise. */
        public Builder strategy(Strategy v) { strategy = v; return this; }

        /** Statuses that are successes (after the failure statuses, before the 2xx default). */
        public Builder successStatuses(StatusCodes v) { successStatuses = v; return this; }

        /** {@link #successStatuses(StatusCodes)} parsed from {@code "404, 3xx"}. */
        public Builder successStatuses(String v) { return successStatuses(StatusCodes.parse(v)); }

        /** Statuses that are failures, first in precedence (over success statuses and the 2xx default). */
        public Builder failureStatuses(StatusCodes v) { failureStatuses = v; return this; }

        /** {@link #failureStatuses(StatusCodes)} parsed from {@code "429, 5xx"}. */
        public Builder failureStatuses(String v) { return failureStatuses(StatusCodes.parse(v)); }

        /** This rule's own state-change callback (called first, then the registry-wide one; each isolated). */
        public Builder onStateChange(Consumer<HttpStateChange> v) { onStateChange = v; return this; }

        /**
         * Validates and builds the rule.
         *
         * @throws IllegalArgumentException naming the bad option and the rule
         */
        public HttpRule build() {
            String where = " (rule " + level.wireName() + " '" + match + "')";
            if (match == null || match.isBlank()) {
                throw new IllegalArgumentException("match must not be blank (rule " + level.wireName() + ")");
            }
            if (name != null && name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank" + where);
            }
            if (!skipList.isEmpty() && level != Level.SERVICE) {
                throw new IllegalArgumentException("skipList is for service rules only" + where);
            }
            for (String s : skipList) {
                if (s == null || s.isBlank()) {
                    throw new IllegalArgumentException("skipList entries must not be blank" + where);
                }
            }
            return new HttpRule(this);
        }
    }
}

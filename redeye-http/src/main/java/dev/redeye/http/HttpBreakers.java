package dev.redeye.http;

import dev.redeye.CircuitBreaker;
import dev.redeye.CircuitBreakerBuilder;
import dev.redeye.Permit;
import dev.redeye.Ticker;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.Policy;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two-level circuit breakers for outbound HTTP: every request is matched against the {@link HttpRuleSet} to find
 * its service rule and its endpoint rule, runs only if both rules' breakers admit it, and its outcome (the
 * response status, or no response) is recorded on both.
 *
 * <pre>{@code
 * HttpBreakers breakers = HttpBreakers.builder(HttpRuleSet.fromMap(config))
 *         .store(Stores.open("redis://127.0.0.1:6379?prefix=myapp:"))   // omit for local mode
 *         .onStateChange(change -> log.warn("{}", change))
 *         .build();
 * HttpClient client = RedeyeHttpClient.wrap(HttpClient.newHttpClient(), breakers);
 * }</pre>
 *
 * <h2>Breakers</h2>
 * One redeye {@link CircuitBreaker} per rule, with the rule's policy ({@code failureThreshold},
 * {@code resetTimeout}, {@code successThreshold}, {@code strategy}), guarding one operation
 * named {@code "<level>:<key>"} ({@code service:payments}, {@code endpoint:/v1/charges}). All of them share the
 * one store given to the builder, so instances configured with the same rules over a shared store share every
 * breaker: a service tripped by one instance is open for all. Over a store with a transition feed every breaker
 * follows it ({@link Builder#followFeed(boolean)}), so a reset or an opening by another instance is seen at once.
 * Without a store each breaker keeps its state in process memory (local mode).
 *
 * <h2>Admission</h2>
 * {@link #acquire(URI)} asks the service breaker first, then the endpoint breaker, through the engine's
 * permission API; if the endpoint rejects, the service permit is released unused, so a half-open trial claim
 * the service level granted goes back at once instead of holding the service's trial hostage. A rejection
 * throws {@link HttpCircuitOpenException} naming the level and rule key and carrying {@code retryAfter} (empty for
 * a forced-open breaker, which admits no trial until it is reset).
 *
 * <h2>Classification</h2>
 * A response's status is a failure or a success for each rule, in this precedence: the rule's
 * {@code failureStatuses}, then its {@code successStatuses}, then the default (2xx success, anything else a
 * failure); a request without a response (connect error, timeout) is a failure; an interrupt or a cancellation
 * is not recorded. The classification is each breaker's own {@code recordResult} predicate, applied by the
 * engine when a permit completes with the status ({@code Permit#onResult}), and its default
 * {@code recordFailure}: the same code path as {@code execute}.
 *
 * <h2>Callbacks</h2>
 * On a transition, the rule's own {@code onStateChange} runs first, then the registry-wide one given to the
 * builder; each is isolated (an exception is logged, never thrown into the request), and each runs on the
 * thread of the request whose outcome caused the transition, so keep them quick or hand off (see
 * {@code dev.redeye.http.alert.AlertNotifier}). They fire on the instance whose write caused the transition.
 *
 * <h2>Cost</h2>
 * A request matching no rule costs one scan of the rules (a substring search per rule) and nothing else. A
 * guarded request costs what the engine's admission costs per level (in distributed mode one store read per
 * level by default, zero with {@code localCache()} set through {@link Builder#customize(Consumer)}), plus the
 * scan.
 *
 * <p>Thread-safe. {@link #close()} closes every breaker, and the store if the builder was told to.
 */
public final class HttpBreakers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpBreakers.class);

    private final HttpRuleSet rules;
    private final List<RuleBreaker> breakers;
    private final Map<HttpRule, RuleBreaker> byRule = new IdentityHashMap<>();
    private final Store store;
    private final boolean closeStore;
    private final Clock clock;

    private HttpBreakers(Builder b) {
        this.rules = b.rules;
        this.store = b.store;
        this.closeStore = b.closeStore;
        this.clock = b.clock;
        List<RuleBreaker> list = new ArrayList<>();
        boolean follow = b.followFeed && store != null && store.capability(TransitionFeed.class).isPresent();
        try {
            for (HttpRule rule : rules.rules()) {
                RuleBreaker rb = new RuleBreaker(rule, rules.defaults(), b.onStateChange);
                CircuitBreakerBuilder cb = CircuitBreaker.builder();
                if (b.customizer != null) {
                    b.customizer.accept(cb);
                }
                RuleDefaults d = rules.defaults();
                cb.clock(clock)
                        .ticker(b.ticker)
                        .strategy(rule.strategy().orElse(d.strategy()))
                        .failureThreshold(rb.failureThreshold)
                        .resetTimeout(rule.resetTimeout().orElse(d.resetTimeout()))
                        .successThreshold(rule.successThreshold().orElse(d.successThreshold()))
                        .recordResult(rb::resultIsFailure)
                        .onStateChange(rb::stateChanged);
                if (store != null) {
                    cb.store(store).closeStore(false);
                    if (follow) {
                        cb.followFeed(true);
                    }
                }
                try {
                    rb.breaker = cb.build();
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("rule " + rule.operation() + ": " + e.getMessage(), e);
                }
                list.add(rb);
                byRule.put(rule, rb);
            }
        } catch (RuntimeException e) {
            list.forEach(rb -> rb.breaker.close());
            throw e;
        }
        this.breakers = Collections.unmodifiableList(list);
    }

    /** A builder over {@code rules}. */
    public static Builder builder(HttpRuleSet rules) {
        return new Builder(Objects.requireNonNull(rules, "rules"));
    }

    /**
     * Asks both levels to admit a request to {@code uri}; only its path is used (see {@link HttpRuleSet}).
     *
     * @return the permit to complete with the request's outcome; an unguarded no-op permit when no rule matches
     * @throws HttpCircuitOpenException if the service or the endpoint breaker rejects the request
     * @throws dev.redeye.api.StoreUnavailableException if the store failed and the breakers were customized with
     *                                  {@code StoreErrorPolicy.REJECT}
     * @throws IllegalStateException    if closed
     */
    public HttpPermit acquire(URI uri) {
        String path = uri.getRawPath();
        return acquirePath(path != null ? path : "");
    }

    /**
     * Like {@link #acquire(URI)} for a path, a path with a query string, or a whole URL as text; everything
     * from the first {@code ?} or {@code #} on is ignored.
     */
    public HttpPermit acquire(String pathOrUrl) {
        String s = HttpRuleSet.stripQuery(Objects.requireNonNull(pathOrUrl, "pathOrUrl"));
        int scheme = s.indexOf("://");
        if (scheme >= 0) {
            int slash = s.indexOf('/', scheme + 3);
            s = slash < 0 ? "" : s.substring(slash);
        }
        return acquirePath(s);
    }

    private HttpPermit acquirePath(String path) {
        RuleBreaker service = guard(Level.SERVICE, path);
        RuleBreaker endpoint = guard(Level.ENDPOINT, path);
        if (service == null && endpoint == null) {
            return HttpPermit.UNGUARDED;
        }
        Permit sp = null;
        if (service != null) {
            sp = service.breaker.tryAcquire(service.operation);
            if (!sp.isPermitted()) {
                throw rejection(service, sp.rejection());
            }
        }
        Permit ep = null;
        if (endpoint != null) {
            try {
                ep = endpoint.breaker.tryAcquire(endpoint.operation);
            } catch (RuntimeException e) {
                if (sp != null) {
                    sp.release();
                }
                throw e;
            }
            if (!ep.isPermitted()) {
                if (sp != null) {
                    sp.release(); // a service trial claim goes back at once: the request never ran
                }
                throw rejection(endpoint, ep.rejection());
            }
        }
        return new HttpPermit(service, sp, endpoint, ep);
    }

    private RuleBreaker guard(Level level, String path) {
        HttpRule r = rules.match(level, path);
        return r == null ? null : byRule.get(r);
    }

    private static RuntimeException rejection(RuleBreaker rb, RuntimeException rejection) {
        if (rejection instanceof CircuitOpenException) {
            return new HttpCircuitOpenException(rb.rule.level(), rb.rule.key(), (CircuitOpenException) rejection);
        }
        return rejection;
    }

    // --------------------------------------------------------------------------------------------- operate

    /**
     * The status of one rule's breaker as this instance sees it now: one store read.
     *
     * @throws IllegalArgumentException if no rule of {@code level} has that key
     */
    public BreakerStatus stateOf(Level level, String key) {
        RuleBreaker rb = find(level, key);
        return rb.breaker.status(rb.operation);
    }

    /**
     * Closes one rule's breaker and resets its counters, for every instance sharing the store (a transition:
     * callbacks fire), unless it is closed with clean counters already: then nothing is written and no callback
     * fires (no CLOSED to CLOSED change).
     *
     * @throws IllegalArgumentException if no rule of {@code level} has that key
     */
    public void reset(Level level, String key) {
        RuleBreaker rb = find(level, key);
        rb.breaker.reset(rb.operation);
    }

    /** {@link #reset(Level, String)} for every rule: callbacks fire only for the breakers it closed or cleaned. */
    public void resetAll() {
        for (RuleBreaker rb : breakers) {
            rb.breaker.reset(rb.operation);
        }
    }

    /**
     * Every rule's breaker, in rule order, read now (one store read each); statuses are the nominal,
     * jitter-free view.
     */
    public List<BreakerSnapshot> snapshots() {
        List<BreakerSnapshot> out = new ArrayList<>(breakers.size());
        for (RuleBreaker rb : breakers) {
            out.add(snapshot(rb));
        }
        return Collections.unmodifiableList(out);
    }

    private BreakerSnapshot snapshot(RuleBreaker rb) {
        BreakerState s = rb.breaker.state(rb.operation);
        Policy policy = rb.breaker.config().policy();
        long now = clock.millis();
        // the nominal (jitter-free) view: one read, and the same answer on every instance
        BreakerStatus status = Transitions.status(s, policy, now, 1.0);
        Optional<Duration> retryAfter = Optional.of(Duration.ZERO);
        if (status == BreakerStatus.OPEN) {
            retryAfter = Optional.of(Duration.ofMillis(Math.max(0, Transitions.trialEligibleAt(s, policy, 1.0) - now)));
        } else if (status == BreakerStatus.FORCED_OPEN) {
            retryAfter = Optional.empty(); // no request until a reset
        }
        return new BreakerSnapshot(rb.rule.level(), rb.rule.key(), status, rb.failureThreshold, retryAfter, s);
    }

    /**
     * Prints one line per breaker ({@link BreakerSnapshot#line()}) to {@code out}, in rule order. A breaker
     * whose store cannot be read prints as such instead of ending the print.
     */
    public void printStatus(Consumer<String> out) {
        Objects.requireNonNull(out, "out");
        for (RuleBreaker rb : breakers) {
            String line;
            try {
                line = snapshot(rb).line();
            } catch (RuntimeException e) {
                line = String.format("%-8s  %s  unknown: %s", rb.rule.level().wireName(), rb.rule.key(), e);
            }
            out.accept(line);
        }
    }

    /** {@link #printStatus(Consumer)} to {@code logger}, one INFO line per breaker. */
    public void printStatus(Logger logger) {
        Objects.requireNonNull(logger, "logger");
        printStatus(line -> logger.info("{}", line));
    }

    /**
     * The breaker of one rule, for what this class does not wrap (metrics: {@code RedeyeMetrics.builder(breaker)};
     * {@code forceOpen}).
     *
     * @throws IllegalArgumentException if no rule of {@code level} has that key
     */
    public CircuitBreaker breaker(Level level, String key) {
        return find(level, key).breaker;
    }

    /** The breaker's operation name of one rule: {@code "<level>:<key>"}. */
    public String operation(Level level, String key) {
        return find(level, key).operation;
    }

    /** The rules this registry was built from. */
    public HttpRuleSet rules() {
        return rules;
    }

    private RuleBreaker find(Level level, String key) {
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(key, "key");
        for (RuleBreaker rb : breakers) {
            if (rb.rule.level() == level && rb.rule.key().equals(key)) {
                return rb;
            }
        }
        throw new IllegalArgumentException("no " + level.wireName() + " rule has the key '" + key + "'");
    }

    /** Closes every breaker, then the store if the builder was given {@code closeStore(true)}. Idempotent. */
    @Override
    public void close() {
        for (RuleBreaker rb : breakers) {
            try {
                rb.breaker.close();
            } catch (RuntimeException e) {
                LOG.warn("closing the breaker of {} failed", rb.operation, e);
            }
        }
        if (store != null && closeStore) {
            store.close();
        }
    }

    @Override
    public String toString() {
        return "HttpBreakers[" + breakers.size() + " rules, " + (store == null ? "local" : store.getClass().getSimpleName())
                + "]";
    }

    /**
     * Builds {@link HttpBreakers}. Not thread-safe.
     */
    public static final class Builder {
        private final HttpRuleSet rules;
        private Store store;
        private boolean closeStore;
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.systemTicker();
        private Consumer<HttpStateChange> onStateChange;
        private Consumer<CircuitBreakerBuilder> customizer;
        private boolean followFeed = true;

        private Builder(HttpRuleSet rules) {
            this.rules = rules;
        }

        /** The store every rule's breaker keeps its state in (shared by the fleet); default none (local mode). */
        public Builder store(Store v) { store = Objects.requireNonNull(v, "store"); return this; }

        /**
         * Whether every rule's breaker follows the store's transition feed, when the store has one; default true.
         * Following it, an instance learns at once what the others do: a service another instance reset lets
         * this instance's requests through from the next one on, instead of after its open view's refresh
         * ({@code openCacheRefresh}, 2 s by default). It costs the store's one feed subscription per store
         * client (shared by every rule's breaker) and nothing per request. Over a store without a feed, or with
         * {@code false}, other instances' transitions are seen at the next store read.
         */
        public Builder followFeed(boolean v) { followFeed = v; return this; }

        /** Whether {@link HttpBreakers#close()} closes the store; default false (the caller owns it). */
        public Builder closeStore(boolean v) { closeStore = v; return this; }

        /**
         * The wall clock of every rule's stored times and of the snapshots; default {@link Clock#systemUTC()}
         * (see {@link CircuitBreakerBuilder#clock}).
         */
        public Builder clock(Clock v) { clock = Objects.requireNonNull(v, "clock"); return this; }

        /**
         * The ticker of every rule's local durations; default {@link Ticker#systemTicker()} (see
         * {@link CircuitBreakerBuilder#ticker}). A test on a virtual clock passes a virtual ticker too.
         */
        public Builder ticker(Ticker v) { ticker = Objects.requireNonNull(v, "ticker"); return this; }

        /** The registry-wide state-change callback, called after the rule's own; see the class comment. */
        public Builder onStateChange(Consumer<HttpStateChange> v) { onStateChange = v; return this; }

        /**
         * Sets engine options every rule's breaker shares ({@code jitter}, {@code halfOpenPermits},
         * {@code localCache()}, {@code storeErrorPolicy}, {@code maxGapBetweenFailures}, observers' listeners,
         * ...). Runs first for each breaker; the rule's own options, the clock, the ticker, the store,
         * {@code recordResult} and {@code onStateChange} are set after it and win.
         */
        public Builder customize(Consumer<CircuitBreakerBuilder> v) { customizer = v; return this; }

        /**
         * Builds one breaker per rule.
         *
         * @throws IllegalArgumentException naming the rule and the option, for an option the engine refuses
         */
        public HttpBreakers build() {
            return new HttpBreakers(this);
        }
    }
}

package dev.redeye.tck;

import dev.redeye.api.AtomicUpdates;
import dev.redeye.api.BreakerState;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.Store;
import dev.redeye.api.TransitionFeed;
import dev.redeye.api.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The root of the TCK: the implementer's hooks and the support every rule group uses (client tracking, a
 * fresh random key prefix per test, capability assumptions, races, polling). Implementers extend
 * {@link StoreTck}, not this class.
 */
@ExtendWith({RuleFailureReporter.class, TckBase.Settings.class})
abstract class TckBase {
    private static final Logger LOG = LoggerFactory.getLogger(TckBase.class);

    /** The virtual epoch of every rule: {@code now} values are {@code T0} plus offsets. */
    static final long T0 = 1_000_000L;
    /** How long feed and expiry rules wait by default for something that should happen. */
    static final Duration DEFAULT_PATIENCE = Duration.ofSeconds(10);
    /** A clean-up ttl for put, far above anything a rule waits. */
    static final Duration STATE_TTL = Duration.ofHours(1);

    private final List<Store> opened = new CopyOnWriteArrayList<>();
    private String prefix;
    private volatile Duration patience = DEFAULT_PATIENCE;
    private volatile long seed = TckRunner.DEFAULT_SEED;
    private volatile int tries = TckRunner.DEFAULT_TRIES;

    /**
     * A new independent client each call (two clients stand for two processes). The TCK closes every client
     * it opens, after each test.
     *
     * @throws Exception if the store cannot be opened; the rule then fails with that cause
     */
    protected abstract Store newClient() throws Exception;

    /**
     * Runs after each test, once every client of the test is closed. The default does nothing: every test
     * uses a fresh random key prefix, so stores need no cleanup.
     *
     * @throws Exception on failure; logged, the test result is kept
     */
    protected void cleanup() throws Exception {
    }

    /**
     * Optional hook for R1.7: write malformed data under {@code key} using raw backend access, exactly where
     * the store would keep the state of {@code key} (apply the store's own prefix and escaping). The default
     * throws {@link UnsupportedOperationException}, and R1.7 is then skipped with the reason.
     *
     * @param client a client of this test, to find its configuration (prefix, table)
     * @param key    the key as the TCK passes it to {@code get}
     */
    protected void corrupt(Store client, String key) throws Exception {
        throw new UnsupportedOperationException("corrupt(Store, String) hook not provided");
    }

    /**
     * Optional hook for R6.8: cut the feed connection of {@code client} (for example {@code CLIENT KILL} in
     * Redis, {@code pg_terminate_backend} in PostgreSQL) so that the store must notice, call {@code onGap} and
     * reconnect. The default throws {@link UnsupportedOperationException}, and R6.8 is then skipped.
     */
    protected void interruptFeed(Store client) throws Exception {
        throw new UnsupportedOperationException("interruptFeed(Store) hook not provided");
    }

    /**
     * Optional hook for R6.12: write {@code state}, an earlier state of {@code key} (a lower version than the
     * one stored), exactly where the store keeps the state of {@code key}, with raw backend access, as a lost
     * write leaves it: a fail-over to a replica that missed the latest write, a restart that lost it. Write
     * the state only: publish no event and leave the feed as it is, so the next transition re-issues a
     * version the feed already delivered. The state must read back through {@code get} as given and be the
     * prior state of the next atomic call; it must not expire while the rule runs. The default throws
     * {@link UnsupportedOperationException}, and R6.12 is then skipped with the reason.
     *
     * @param client a client of this test, to find its configuration (prefix, table, map)
     * @param key    the key as the TCK passes it to {@code get}
     * @param state  the state to write back, version included
     */
    protected void rewind(Store client, String key, BreakerState state) throws Exception {
        throw new UnsupportedOperationException("rewind(Store, String, BreakerState) hook not provided");
    }

    /**
     * Optional hook for R6.7: whether {@code thread} belongs to the backend or to a client the test shares
     * between stores, rather than to a store instance (members of a cluster embedded in the test JVM, the
     * pooled threads of a driver instance the store does not own). R6.7 checks that a closed store leaves no
     * thread of its own alive; threads this answers true for are not counted. The default answers false:
     * every new thread is the store's.
     */
    protected boolean backendThread(Thread thread) {
        return false;
    }

    /**
     * The capabilities the implementer expects the store to declare, stated explicitly: a missing one fails
     * R0.1, so a store cannot silently skip a whole group of rules. A store meant to offer only the plain
     * methods returns {@code Set.of()}; that is the only way such a store passes R0.1.
     *
     * @return some of {@code AtomicUpdates}, {@code TrialClaims},
     *         {@code TransitionFeed}
     */
    protected abstract Set<Class<?>> expectedCapabilities();

    /**
     * Whether {@link #expectedCapabilities()} was stated by the implementer. Always true for a subclass (the
     * method is abstract); the runner's own test classes report whether {@value TckRunner#EXPECT_PARAMETER}
     * was given, so that a store declaring nothing is not taken for a plain store by default.
     */
    boolean expectationsStated() {
        return true;
    }

    /** Where the expectation of R0.1 comes from, as a failure message names it. */
    String expectationSource() {
        return "expectedCapabilities()";
    }

    @BeforeEach
    final void tckNewPrefix() {
        prefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    @AfterEach
    final void tckCloseClients() {
        List<Store> toClose = new ArrayList<>(opened);
        opened.clear();
        Collections.reverse(toClose);
        for (Store s : toClose) {
            try {
                s.close();
            } catch (RuntimeException e) {
                LOG.warn("closing a store client after a TCK test failed", e);
            }
        }
        try {
            cleanup();
        } catch (Exception e) {
            LOG.warn("TCK cleanup() failed", e);
        }
    }

    /** Opens a new client through the implementer's factory; the TCK closes it after the test. */
    final Store client() {
        Store s;
        try {
            s = newClient();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("newClient() failed: " + e, e);
        }
        Objects.requireNonNull(s, "newClient() returned null");
        opened.add(s);
        return s;
    }

    /** A key unique to this test: the per-test random prefix plus {@code name}. */
    final String key(String name) {
        return prefix + name;
    }

    /** The capability, or the test is skipped with "store does not declare X". */
    static <C> C need(Store s, Class<C> type) {
        var c = s.capability(type);
        Assumptions.assumeTrue(c.isPresent(), () -> "store does not declare " + type.getSimpleName());
        return c.get();
    }

    /** The store's {@link AtomicUpdates}; the rule is skipped, with the reason, if it lacks it. */
    static AtomicUpdates updates(Store s) {
        return need(s, AtomicUpdates.class);
    }

    static TrialClaims claims(Store s) {
        return need(s, TrialClaims.class);
    }

    static TransitionFeed feed(Store s) {
        return need(s, TransitionFeed.class);
    }

    /** A consecutive-strategy policy without jitter. */
    static Policy consecutive(int failureThreshold) {
        return Policy.builder().failureThreshold(failureThreshold).jitter(0.0).build();
    }

    /**
     * How long feed and expiry rules wait for something that should happen (they finish as soon as it does):
     * 10 s, or the JUnit configuration parameter / system property {@value TckRunner#PATIENCE_PARAMETER} in ms.
     */
    final Duration patience() {
        return patience;
    }

    /** Polls {@code condition} every 20 ms until it holds or {@link #patience()} runs out; returns whether it held. */
    final boolean eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            sleep(20);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The body of one racing thread. */
    @FunctionalInterface
    interface RaceBody {
        void run(int thread, Store client) throws Exception;
    }

    /**
     * Runs {@code threads} threads, thread {@code i} on {@code clients[i % clients.length]}, released together
     * ({@link Race}). Fails with the first exception any thread threw, or if a thread is still running after
     * 60 s.
     */
    static void race(int threads, Store[] clients, RaceBody body) throws InterruptedException {
        Race.run(threads, Duration.ofSeconds(60), i -> body.run(i, clients[i % clients.length]));
    }

    /**
     * Keys that break naive schemes: braces (Redis hash tags), quotes and SQL, whitespace, a newline, 10 KB,
     * non-BMP characters, pairs a naive prefix confuses, and the largest names the engine accepts
     * ({@link OperationNames#MAX_LENGTH} code units of 3-byte UTF-8, and of surrogate pairs), which every store
     * must take, since the engine lets them through.
     */
    static List<String> hostileNames() {
        return List.of(
                "{a}", "a}", "{a", "a", "a:trial", "a:claims", "'; DROP TABLE x; --", "\"quoted\" 'single'",
                "with space", "new\nline", "tab\tand\\backslash", "%s %d ${x} $1 ? :name", "emoji \uD83D\uDE00 "
                        + "\uD834\uDD1E", "\u00e9\u00e8 \u4e2d\u6587", "x".repeat(10 * 1024), "a*", "[a]",
                "\u4e2d".repeat(OperationNames.MAX_LENGTH), "\uD83D\uDE00".repeat(OperationNames.MAX_LENGTH / 2));
    }

    /** A key or name as it appears in a failure message: quoted, escaped, long ones shortened. */
    static String describe(String name) {
        String shown = name.length() > 40 ? name.substring(0, 20) + "...(" + name.length() + " chars)" : name;
        return "'" + shown.replace("\n", "\\n").replace("\t", "\\t") + "'";
    }

    /**
     * The seed of the model rules' random scenarios: {@value TckRunner#DEFAULT_SEED}, or the JUnit
     * configuration parameter / system property {@value TckRunner#SEED_PARAMETER}.
     */
    final long seed() {
        return seed;
    }

    /**
     * How many random scenarios each model rule runs: {@value TckRunner#DEFAULT_TRIES}, or the JUnit
     * configuration parameter / system property {@value TckRunner#TRIES_PARAMETER}.
     */
    final int tries() {
        return tries;
    }

    /**
     * Reads {@value TckRunner#PATIENCE_PARAMETER}, {@value TckRunner#SEED_PARAMETER} and
     * {@value TckRunner#TRIES_PARAMETER} (JUnit configuration parameter, else system property) into each test
     * instance; a malformed value fails every rule with a message naming the parameter.
     */
    static final class Settings implements TestInstancePostProcessor {
        @Override
        public void postProcessTestInstance(Object testInstance, ExtensionContext context) {
            TckBase tck = (TckBase) testInstance;
            parameter(context, TckRunner.PATIENCE_PARAMETER).ifPresent(v -> {
                long ms = number(TckRunner.PATIENCE_PARAMETER, v, "a number of ms");
                if (ms <= 0) {
                    throw new IllegalArgumentException(TckRunner.PATIENCE_PARAMETER + " must be > 0 ms, was " + ms);
                }
                tck.patience = Duration.ofMillis(ms);
            });
            parameter(context, TckRunner.SEED_PARAMETER).ifPresent(v -> tck.seed = number(TckRunner.SEED_PARAMETER, v,
                    "a number"));
            parameter(context, TckRunner.TRIES_PARAMETER).ifPresent(v -> {
                long n = number(TckRunner.TRIES_PARAMETER, v, "a number of scenarios");
                if (n < 1 || n > 1_000_000) {
                    throw new IllegalArgumentException(TckRunner.TRIES_PARAMETER + " must be within 1 .. 1000000, was "
                            + n);
                }
                tck.tries = (int) n;
            });
        }

        static Optional<String> parameter(ExtensionContext context, String name) {
            return context.getConfigurationParameter(name).or(() -> Optional.ofNullable(System.getProperty(name)))
                    .filter(v -> !v.isBlank());
        }

        private static long number(String name, String value, String what) {
            try {
                return Long.parseLong(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be " + what + ", was '" + value + "'", e);
            }
        }
    }
}

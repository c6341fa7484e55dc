package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.DEFAULT_PATIENCE;
import static dev.redeye.tck.TckSupport.T0;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of a running test behind {@link TckContext}: the implementer's hooks, the clients the test opened
 * (closed after it, after its breakers), a fresh random key prefix per test, the virtual clock and the run's
 * settings. Implementers extend {@link StoreTck}, not this class.
 */
@ExtendWith({RuleFailureReporter.class, TckBase.Settings.class})
abstract class TckBase implements TckContext {
    private static final Logger LOG = LoggerFactory.getLogger(TckBase.class);

    private final List<Store> opened = new CopyOnWriteArrayList<>();
    private String prefix;
    private volatile Duration patience = DEFAULT_PATIENCE;
    private volatile long seed = TckRunner.DEFAULT_SEED;
    private volatile int tries = TckRunner.DEFAULT_TRIES;
    private final AtomicLong clock = new AtomicLong(T0);
    private final List<CircuitBreaker> breakers = new ArrayList<>();
    private final AtomicLong runs = new AtomicLong();
    private final TckHooks hooks = new TckHooks() {
        @Override
        public void corrupt(Store client, String key) throws Exception {
            TckBase.this.corrupt(client, key);
        }

        @Override
        public void interruptFeed(Store client) throws Exception {
            TckBase.this.interruptFeed(client);
        }

        @Override
        public void rewind(Store client, String key, BreakerState state) throws Exception {
            TckBase.this.rewind(client, key, state);
        }

        @Override
        public boolean backendThread(Thread thread) {
            return TckBase.this.backendThread(thread);
        }

        @Override
        public Set<Class<?>> expectedCapabilities() {
            return TckBase.this.expectedCapabilities();
        }

        @Override
        public boolean expectationsStated() {
            return TckBase.this.expectationsStated();
        }

        @Override
        public String expectationSource() {
            return TckBase.this.expectationSource();
        }
    };

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
        for (CircuitBreaker b : breakers) {
            b.close();
        }
        breakers.clear();
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
    @Override
    public final Store client() {
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
    @Override
    public final String key(String name) {
        return prefix + name;
    }

    /**
     * How long feed and expiry rules wait for something that should happen (they finish as soon as it does):
     * 10 s, or the JUnit configuration parameter / system property {@value TckRunner#PATIENCE_PARAMETER} in ms.
     */
    @Override
    public final Duration patience() {
        return patience;
    }

    /**
     * The seed of the model rules' random scenarios: {@value TckRunner#DEFAULT_SEED}, or the JUnit
     * configuration parameter / system property {@value TckRunner#SEED_PARAMETER}.
     */
    @Override
    public final long seed() {
        return seed;
    }

    /**
     * How many random scenarios each model rule runs: {@value TckRunner#DEFAULT_TRIES}, or the JUnit
     * configuration parameter / system property {@value TckRunner#TRIES_PARAMETER}.
     */
    @Override
    public final int tries() {
        return tries;
    }

    @Override
    public final long now() {
        return clock.addAndGet(1_000);
    }

    @Override
    public final TckHooks hooks() {
        return hooks;
    }

    @Override
    public final List<CircuitBreaker> breakers() {
        return breakers;
    }

    @Override
    public final AtomicLong modelRuns() {
        return runs;
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

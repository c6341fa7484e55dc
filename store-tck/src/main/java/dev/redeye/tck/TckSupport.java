package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.api.OperationNames;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Assumptions;

/**
 * The constants and static helpers the rule groups share: capability lookups that skip a rule, policies,
 * races, hostile names, shared assertions. Rule groups import them statically.
 */
final class TckSupport {
    /** The virtual epoch of every rule: {@code now} values are {@code T0} plus offsets. */
    static final long T0 = 1_000_000L;
    /** How long feed and expiry rules wait by default for something that should happen. */
    static final Duration DEFAULT_PATIENCE = Duration.ofSeconds(10);
    /** A clean-up ttl for put, far above anything a rule waits. */
    static final Duration STATE_TTL = Duration.ofHours(1);
    /** A consecutive policy that opens on the first failure. */
    static final Policy ONE = consecutive(1);
    static final List<Class<?>> CAPABILITIES = List.of(
            AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
    /** A ttl short enough for real-time expiry rules. */
    static final Duration SHORT_STATE_TTL = Duration.ofMillis(300);
    /** How long the forced-state rules wait: well past {@link #SHORT_STATE_TTL}. */
    static final long FORCED_WAIT_MILLIS = 800;
    /** A state with a distinct, awkward value in every field (bit-exact double checks). */
    static final BreakerState RICH = new BreakerState(7, 1_700_000_123_456L, true, 1_700_000_100_000L, 3,
            0.1 + 0.2, 12_345_678_901L, 2, false, 42L);
    /** A forced state with a subnormal rate. */
    static final BreakerState RICH_FORCED = new BreakerState(Integer.MAX_VALUE, 1L, true, 2L, 0, Double.MIN_VALUE,
            1L, 0, true, 9_007_199_254_740_991L);
    /** Long enough that no claim of a non-expiry rule expires while the rule runs. */
    static final Duration LONG_TTL = Duration.ofMinutes(5);
    /** The short ttl of the real-time expiry rules. */
    static final Duration SHORT_TTL = Duration.ofMillis(300);
    /** The ttls of R4.10, in the engine's range, with the permits each is claimed under. */
    static final long[][] LONG_CLAIMS = {{1_500, 1}, {10_000, 2}};
    /** How early a backend may free a claim (its clock's granularity: PX in whole ms). */
    static final long EARLY_MILLIS = 5;
    /** How late a backend may free a claim after its ttl in R4.10. */
    static final long LATE_MILLIS = 100;
    /** The transitions of R6.11, in an order that reaches every kind, also through the engine's puts. */
    static final TransitionKind[] EVERY_KIND = {TransitionKind.OPENED, TransitionKind.REOPENED,
        TransitionKind.CLOSED, TransitionKind.FORCED_OPEN, TransitionKind.FORCED_HALF_OPEN, TransitionKind.FORCED_OPEN,
        TransitionKind.FORCED_CLOSED};
    /**
     * What the faults R7.9 injects say: the engine logs them as store errors (a WARN line in the middle of a
     * report), so they name themselves as the TCK's own, not the store's.
     */
    static final String INJECTED_FAULT = "injected by the TCK on purpose (R7.9 makes claimTrial fail): not a fault "
            + "of the store under test";
    /** The most steps of one R8.1 sequence. */
    static final int MAX_STEPS = 40;
    /** The most steps of one R8.2 sequence. */
    static final int MAX_EXPIRY_STEPS = 14;
    /** The most steps of the sequential prefix of an R8.3 scenario. */
    static final int MAX_PREFIX_STEPS = 8;
    /** Threads of an R8.3 scenario, over the two clients. */
    static final int THREADS = 3;
    /** Calls of each thread of an R8.3 scenario. */
    static final int CALLS_PER_THREAD = 3;
    /** The most candidate runs shrinking spends on one failure. */
    static final int MAX_SHRINK_RUNS = 2_000;
    /** The most wall time shrinking spends on one failure. */
    static final long SHRINK_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** The body of one racing thread. */
    @FunctionalInterface
    interface RaceBody {
        void run(int thread, Store client) throws Exception;
    }

    /** How a call through a breaker went. */
    enum Outcome { RAN, REJECTED }

    /** The failure a failing TCK call throws. */
    static final class CallFailed extends Exception {
        private static final long serialVersionUID = 1L;

        CallFailed() {
            super("TCK call failed on purpose", null, false, false);
        }
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

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * How long a race may run before the TCK takes a thread for hung: a bound for a store call that never
     * returns, not a speed limit. The slowest backend the build runs, dynalite, takes about 35 s for R2.7's
     * 4,000 contended conditional writes alone on 2 cores, and up to 60 s beside the other modules' tests.
     */
    static final Duration RACE_TIMEOUT = Duration.ofMinutes(3);

    /**
     * Runs {@code threads} threads, thread {@code i} on {@code clients[i % clients.length]}, released together
     * ({@link Race}). Fails with the first exception any thread threw, or if a thread is still running after
     * {@link #RACE_TIMEOUT}.
     */
    static void race(int threads, Store[] clients, RaceBody body) throws InterruptedException {
        Race.run(threads, RACE_TIMEOUT, i -> body.run(i, clients[i % clients.length]));
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

    /** The rule is skipped unless the store can make transitions atomically (R1.10, R1.11). */
    static void needAtomic(Store s) {
        Assumptions.assumeTrue(s.capability(AtomicUpdates.class).isPresent(),
                "store declares not AtomicUpdates: this rule makes transitions with one");
    }

    /**
     * One transition of {@code k} made by an atomic operation, never to a forced state: with
     * {@link AtomicUpdates} force HALF_OPEN when closed and CLOSED when open; else an opening failure
     * under {@code p} (whose failureThreshold must be 1), after a put of the closed state when open.
     */
    static StateChange atomicTransition(Store s, String k, Policy p, long now) {
        Optional<AtomicUpdates> tr = s.capability(AtomicUpdates.class);
        BreakerState cur = s.get(k).orElse(null);
        boolean open = cur != null && cur.open();
        StateChange c;
        if (tr.isPresent()) {
            c = tr.get().apply(k, AtomicOperation.force(open ? BreakerStatus.CLOSED : BreakerStatus.HALF_OPEN), p, now);
        } else {
            if (open) {
                s.put(k, Transitions.closedFrom(cur), p.stateTtl());
            }
            c = need(s, AtomicUpdates.class).apply(k, AtomicOperation.failure(), p, now);
        }
        assertTrue(c.isTransition(), "the TCK's transition of " + describe(k) + " was not a transition: " + c);
        return c;
    }

    static void assertSameState(BreakerState expected, BreakerState actual, String what) {
        String diff = States.diff(expected, actual);
        if (diff != null) {
            fail(what + ": " + diff + "\n  expected " + expected + "\n  actual   " + actual);
        }
    }

    static Policy errorRate(int minimumCalls, double threshold, double decay) {
        return Policy.builder().strategy(Strategy.ERROR_RATE).minimumCalls(minimumCalls)
                .errorRateThreshold(threshold).errorRateDecay(decay).jitter(0.0).build();
    }

    /**
     * The state a key never written (or deleted, or expired) starts from, as an atomic operation reported it:
     * {@link BreakerState#initial(long)} of the store's starting version (0, or a base such as its clock).
     */
    static BreakerState startOf(StateChange first, String where) {
        BreakerState p = first.previous();
        assertTrue(p.version() >= 0 && p.equals(BreakerState.initial(p.version())), where
                + ": a key never written must start from BreakerState.initial(v) (every counter 0, a starting "
                + "version v >= 0), but the store reported the previous state " + p);
        return p;
    }

    static String token(Optional<String> claim, String what) {
        assertNotNull(claim, what + ": claimTrial returned null instead of an Optional");
        assertTrue(claim.isPresent(), what + ": the claim must succeed");
        assertFalse(claim.get().isEmpty(), what + ": the token must not be empty");
        return claim.get();
    }

    static FeedCollector subscribe(Store s) {
        return FeedCollector.subscribe(s);
    }

    /** Runs one call through {@code b}: a success or a failure; returns whether it ran or was rejected. */
    static Outcome call(CircuitBreaker b, String op, boolean succeed) {
        AtomicBoolean ran = new AtomicBoolean();
        try {
            b.execute(op, () -> {
                ran.set(true);
                if (!succeed) {
                    throw new CallFailed();
                }
                return "ok";
            });
        } catch (CircuitOpenException e) {
            assertFalse(ran.get(), "a call that ran was reported as rejected");
            return Outcome.REJECTED;
        } catch (CallFailed e) {
            // the call's own failure, rethrown unchanged: expected
        }
        assertTrue(ran.get(), "execute returned without running the call or rejecting it");
        return Outcome.RAN;
    }

    private TckSupport() {
    }
}

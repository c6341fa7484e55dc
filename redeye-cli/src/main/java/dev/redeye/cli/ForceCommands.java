package dev.redeye.cli;

import dev.redeye.CircuitBreaker;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.function.BiConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The fleet-wide manual controls: {@code force-open}, {@code force-half-open}, {@code reset} and
 * {@code force-mode}. Each goes through the engine ({@link CircuitBreaker#forceOpen},
 * {@link CircuitBreaker#forceHalfOpen}, {@link CircuitBreaker#reset}, {@link CircuitBreaker#forceMode}) over the
 * store, so it is the same atomic transition an application's own
 * call would make, published on the store's transition feed: every instance sharing the store sees it.
 *
 * <p>A change whose target is already in force (forcing open a breaker forced open, resetting one closed with
 * clean counters or without state) changes nothing: no write, no version bump, no event; the command says so and
 * succeeds. The line names the store last, so a URI ending in {@code :} (a Redis prefix) reads as it is. The
 * first version of a new state is the store's base (its clock in microseconds for most stores), so a change
 * that creates the state prints "a new state" rather than that number.
 *
 * <p>Cost: one read before (which also proves the store is reachable), the engine's read and the forced
 * transition, one read after to confirm it. Fails with exit 1 if the store did not record a transition.
 */
public final class ForceCommands {

    private ForceCommands() {
    }

    /** Shared body of the commands. */
    abstract static class Base extends StoreCommand {
        @Mixin
        PolicyOptions policyOptions;

        @Option(names = "--json", description = "Print the resulting state as JSON.")
        boolean json;

        @Parameters(index = "0", paramLabel = "OP", description = "The operation name.")
        String operation;

        /** The status the operation has after a successful change. */
        private final BreakerStatus expected;

        /** The change, made through the engine. */
        private final BiConsumer<CircuitBreaker, String> change;

        /** The line printed after a change that reached {@link #expected}. */
        private final String effect;

        Base(BreakerStatus expected, BiConsumer<CircuitBreaker, String> change, String effect) {
            this.expected = expected;
            this.change = change;
            this.effect = effect;
        }

        @Override
        public Integer call() {
            Policy policy = policyOptions.policy();
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try (Store s = store.open(err);
                    CircuitBreaker breaker = CircuitBreaker.builder()
                            .store(s)
                            .closeStore(false)
                            .resetTimeout(policy.resetTimeout())
                            .backoffMultiplier(policy.backoffMultiplier())
                            .maxResetTimeout(policy.maxResetTimeout())
                            .build()) {
                Optional<BreakerState> stored = s.get(operation);
                BreakerState before = stored.orElse(BreakerState.INITIAL);
                long beforeNow = System.currentTimeMillis();
                // the engine skips a change already in force (Transitions.inForce): no write, no event
                boolean inForce = inForce(stored.orElse(null), policy, beforeNow);
                change(breaker, operation);
                BreakerState after = s.get(operation).orElse(BreakerState.INITIAL);
                long now = System.currentTimeMillis();
                if (!inForce && after.version() <= before.version() && after.hasKnownVersion()) {
                    throw new IllegalStateException("the store did not record the change of '"
                            + Table.printable(operation) + "' (version still " + after.version() + ")");
                }
                BreakerStatus was = Transitions.status(before, policy, beforeNow, 1.0);
                BreakerStatus is = Transitions.status(after, policy, now, 1.0);
                String head = spec.name() + " '" + Table.printable(operation) + "': ";
                String where = " on " + store.redacted();
                if (json) {
                    out.println(Json.pretty(StatusCommand.describe(operation, Optional.of(after), policy, now)));
                } else if (inForce && after.version() == before.version()) {
                    out.println(head + "already " + is + mode(after) + ", nothing changed (" + version(stored) + ")"
                            + where);
                } else {
                    // the first version of a key's life is the store's base (often a clock), not a count: omit it
                    String versions = stored.isEmpty() ? "a new state"
                            : "version " + before.version() + " -> " + after.version();
                    out.println(head + was + mode(before) + " -> " + is + mode(after) + " (" + versions + ")" + where);
                    if (is == expected) {
                        out.println(effect);
                    }
                }
                if (is != expected) {
                    err.println("warning: '" + Table.printable(operation) + "' now reads " + is + ", not "
                            + expected + ": another instance changed it meanwhile");
                }
                out.flush();
                err.flush();
                return 0;
            }
        }

        /** Whether the change would change nothing that matters ({@link Transitions#inForce}). */
        boolean inForce(BreakerState stored, Policy policy, long now) {
            return Transitions.inForce(stored, expected, policy, now);
        }

        /** Makes the change through the engine. */
        void change(CircuitBreaker breaker, String op) {
            this.change.accept(breaker, op);
        }
    }

    /** An operator's stored mode, printed after the status; nothing for the default. */
    static String mode(BreakerState s) {
        return mode(s.mode().wireName());
    }

    /** {@link #mode(BreakerState)} of a mode's wire name. */
    static String mode(String wireName) {
        return BreakerMode.DEFAULT.wireName().equals(wireName) ? "" : " (" + wireName + ")";
    }

    /** How a stored state's version is printed: none for an operation without state. */
    private static String version(Optional<BreakerState> stored) {
        return stored.map(st -> "version " + st.version()).orElse("no state stored");
    }

    /** {@code redeye force-open --store URI OP}. */
    @Command(name = "force-open", mixinStandardHelpOptions = true,
            description = {"Hold a breaker open for the whole fleet: every instance rejects calls, no trials, "
                + "until 'redeye reset'."},
            footer = {"", "Example:", "  redeye force-open --store redis://127.0.0.1:6379 payment-gateway"})
    public static final class ForceOpen extends Base {
        /** Creates the command (picocli calls this). */
        public ForceOpen() {
            super(BreakerStatus.FORCED_OPEN, CircuitBreaker::forceOpen,
                    "Every instance sharing this store now rejects calls to it, with no trials, until 'redeye reset'.");
        }
    }

    /** {@code redeye force-half-open --store URI OP}. */
    @Command(name = "force-half-open", mixinStandardHelpOptions = true,
            description = {"Make a breaker half-open for the whole fleet: the next call anywhere may run as the "
                + "trial (exactly halfOpenPermits at a time).",
                "Give the application's timing options: the open period is dated 2 x --max-reset-timeout ago so "
                + "every instance's reset window has elapsed."},
            footer = {"", "Example:", "  redeye force-half-open --store redis://127.0.0.1:6379 payment-gateway"})
    public static final class ForceHalfOpen extends Base {
        /** Creates the command (picocli calls this). */
        public ForceHalfOpen() {
            super(BreakerStatus.HALF_OPEN, CircuitBreaker::forceHalfOpen,
                    "The next call from any instance may run as the trial; its outcome closes or reopens the breaker.");
        }
    }

    /** {@code redeye reset --store URI OP}. */
    @Command(name = "reset", mixinStandardHelpOptions = true,
            description = {"Close a breaker for the whole fleet and clear its counters (also ends a force-open)."},
            footer = {"", "Example:", "  redeye reset --store redis://127.0.0.1:6379 payment-gateway"})
    public static final class Reset extends Base {
        /** Creates the command (picocli calls this). */
        public Reset() {
            super(BreakerStatus.CLOSED, CircuitBreaker::reset,
                    "Every instance sharing this store lets calls through again.");
        }
    }

    /** {@code redeye force-mode --store URI OP MODE}. */
    @Command(name = "force-mode", mixinStandardHelpOptions = true,
            description = {"Store a mode for the whole fleet: metrics_only (count and publish what would open, never "
                + "reject), disabled (admit every call, record nothing), normal (obey the strategy whatever the "
                + "application configured), or default (remove the operator's mode). The breaker closes with fresh "
                + "counters; 'redeye reset' also returns to the application's mode."},
            footer = {"", "Example:", "  redeye force-mode --store redis://127.0.0.1:6379 payment-gateway metrics_only"})
    public static final class ForceMode extends Base {
        @Parameters(index = "1", paramLabel = "MODE", converter = ModeConverter.class,
                description = "default, normal, metrics_only or disabled.")
        BreakerMode mode;

        /** Creates the command (picocli calls this). */
        public ForceMode() {
            super(BreakerStatus.CLOSED, null, "Every instance sharing this store now runs in this mode.");
        }

        @Override
        boolean inForce(BreakerState stored, Policy policy, long now) {
            return Transitions.inForce(stored, mode);
        }

        @Override
        void change(CircuitBreaker breaker, String op) {
            breaker.forceMode(op, mode);
        }
    }

    /** Reads a mode by its wire name ({@link BreakerMode#fromName}). */
    static final class ModeConverter implements picocli.CommandLine.ITypeConverter<BreakerMode> {
        @Override
        public BreakerMode convert(String value) {
            try {
                return BreakerMode.fromName(value);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}

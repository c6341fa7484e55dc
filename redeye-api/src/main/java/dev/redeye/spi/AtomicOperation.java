package dev.redeye.spi;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import java.util.Objects;

/**
 * One atomic read-modify-write of a breaker's state as a value: which {@link Transitions} rule runs, with the
 * argument it needs beyond {@code (state, policy, now)}. A store that runs Java where its data lives implements
 * {@link AtomicUpdates#apply} by applying {@link #apply(BreakerState, Policy, long)} inside its own atomic
 * step (a row lock, a conditional-write loop, an entry processor, a monitor); a store that cannot run Java
 * (Redis Lua) names the rule with {@link Kind#wireName()}.
 *
 * <p>Immutable and thread-safe. The operations without an argument are shared constants, so recording an
 * outcome allocates nothing here.
 */
public final class AtomicOperation {

    /**
     * The rules, each with an explicit, stable {@link #code()} and {@link #wireName()} for scripts and for
     * processors shipped to a backend; never rely on {@link #ordinal()}.
     */
    public enum Kind {
        /** {@link Transitions#recordFailure}. */
        FAILURE(1, "failure", "recordFailure"),
        /** {@link Transitions#recordSuccess}. */
        SUCCESS(2, "success", "recordSuccess"),
        /** {@link Transitions#trialSucceeded}, fenced by the trial version. */
        TRIAL_SUCCESS(3, "trial_success", "trialSucceeded"),
        /** {@link Transitions#trialFailed}, fenced by the trial version. */
        TRIAL_FAILURE(4, "trial_failure", "trialFailed"),
        /** {@link Transitions#force} to {@link BreakerStatus#FORCED_OPEN}. */
        FORCE_OPEN(5, "force_open", "force"),
        /**
         * {@link Transitions#force} to {@link BreakerStatus#HALF_OPEN}; also removes every trial claim of the key
         * (a forced half-open starts a new period: a hung trial of the old one must not hold it).
         */
        FORCE_HALF_OPEN(6, "force_half_open", "force"),
        /** {@link Transitions#force} to {@link BreakerStatus#CLOSED}; also removes every trial claim of the key. */
        FORCE_CLOSED(7, "force_closed", "force");

        private final int code;
        private final String wireName;
        private final String method;

        Kind(int code, String wireName, String method) {
            this.code = code;
            this.wireName = wireName;
            this.method = method;
        }

        /** The stable code of this rule. */
        public int code() {
            return code;
        }

        /** The stable lower-case name of this rule, as scripts name it (for example {@code "trial_failure"}). */
        public String wireName() {
            return wireName;
        }

        /** The SPI method this rule implements, for messages (for example {@code "recordFailure"}). */
        public String method() {
            return method;
        }

        /**
         * Looks a rule up by its code.
         *
         * @throws IllegalArgumentException if no rule has that code
         */
        public static Kind fromCode(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown redeye atomic operation code " + code);
        }
    }

    private static final AtomicOperation FAILURE = new AtomicOperation(Kind.FAILURE, 0);
    private static final AtomicOperation SUCCESS = new AtomicOperation(Kind.SUCCESS, 0);
    private static final AtomicOperation FORCE_OPEN = new AtomicOperation(Kind.FORCE_OPEN, 0);
    private static final AtomicOperation FORCE_HALF_OPEN = new AtomicOperation(Kind.FORCE_HALF_OPEN, 0);
    private static final AtomicOperation FORCE_CLOSED = new AtomicOperation(Kind.FORCE_CLOSED, 0);

    private final Kind kind;
    private final long trialVersion;

    private AtomicOperation(Kind kind, long trialVersion) {
        this.kind = kind;
        this.trialVersion = trialVersion;
    }

    /** One failed call that was not a trial. */
    public static AtomicOperation failure() {
        return FAILURE;
    }

    /** One successful call that was not a trial. */
    public static AtomicOperation success() {
        return SUCCESS;
    }

    /** {@link #success()} when {@code success}, else {@link #failure()}. */
    public static AtomicOperation outcome(boolean success) {
        return success ? SUCCESS : FAILURE;
    }

    /** One successful trial admitted under the open period {@code trialVersion}. */
    public static AtomicOperation trialSucceeded(long trialVersion) {
        return new AtomicOperation(Kind.TRIAL_SUCCESS, trialVersion);
    }

    /** One failed trial admitted under the open period {@code trialVersion}. */
    public static AtomicOperation trialFailed(long trialVersion) {
        return new AtomicOperation(Kind.TRIAL_FAILURE, trialVersion);
    }

    /**
     * An operator change to {@code status} ({@link BreakerStatus#OPEN} reads as forced open).
     *
     * @throws NullPointerException     if {@code status} is null
     * @throws IllegalArgumentException if {@code status} cannot be forced
     */
    public static AtomicOperation force(BreakerStatus status) {
        switch (TransitionKind.forcedTo(Objects.requireNonNull(status, "status"))) {
            case FORCED_OPEN:
                return FORCE_OPEN;
            case FORCED_HALF_OPEN:
                return FORCE_HALF_OPEN;
            default:
                return FORCE_CLOSED;
        }
    }

    /**
     * The operation of a rule and its trial version, as a backend that shipped them stores them.
     *
     * @param trialVersion ignored unless {@code kind} is a trial outcome
     * @throws NullPointerException if {@code kind} is null
     */
    public static AtomicOperation of(Kind kind, long trialVersion) {
        switch (Objects.requireNonNull(kind, "kind")) {
            case TRIAL_SUCCESS:
                return trialSucceeded(trialVersion);
            case TRIAL_FAILURE:
                return trialFailed(trialVersion);
            case FAILURE:
                return FAILURE;
            case SUCCESS:
                return SUCCESS;
            case FORCE_OPEN:
                return FORCE_OPEN;
            case FORCE_HALF_OPEN:
                return FORCE_HALF_OPEN;
            default:
                return FORCE_CLOSED;
        }
    }

    /** The rule. */
    public Kind kind() {
        return kind;
    }

    /** The open period a trial outcome was admitted under; 0 for the other rules. */
    public long trialVersion() {
        return trialVersion;
    }

    /**
     * The status an operator's change goes to: {@link BreakerStatus#FORCED_OPEN}, {@link BreakerStatus#HALF_OPEN}
     * or {@link BreakerStatus#CLOSED}.
     *
     * @throws IllegalStateException if this is not an operator's change
     */
    public BreakerStatus target() {
        switch (kind) {
            case FORCE_OPEN:
                return BreakerStatus.FORCED_OPEN;
            case FORCE_HALF_OPEN:
                return BreakerStatus.HALF_OPEN;
            case FORCE_CLOSED:
                return BreakerStatus.CLOSED;
            default:
                throw new IllegalStateException(kind.wireName + " is not an operator's change");
        }
    }

    /**
     * Whether the operation also removes every trial claim of the key, in the same step: a forced close, and a
     * forced half-open (a new period, whose trials must not wait for the claims of the old one to expire).
     */
    public boolean removesClaims() {
        return kind == Kind.FORCE_CLOSED || kind == Kind.FORCE_HALF_OPEN;
    }

    /**
     * Applies the rule to {@code current} ({@code null} for a key never written, or the store's new-life state
     * {@link BreakerState#initial(long)}).
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public StateChange apply(BreakerState current, Policy policy, long now) {
        switch (kind) {
            case FAILURE:
                return Transitions.recordFailure(current, policy, now);
            case SUCCESS:
                return Transitions.recordSuccess(current, policy, now);
            case TRIAL_SUCCESS:
                return Transitions.trialSucceeded(current, trialVersion, policy, now);
            case TRIAL_FAILURE:
                return Transitions.trialFailed(current, trialVersion, policy, now);
            default:
                return Transitions.force(current, target(), policy, now);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AtomicOperation && ((AtomicOperation) o).kind == kind
                && ((AtomicOperation) o).trialVersion == trialVersion;
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + Long.hashCode(trialVersion);
    }

    @Override
    public String toString() {
        return kind == Kind.TRIAL_SUCCESS || kind == Kind.TRIAL_FAILURE ? kind.wireName + "@" + trialVersion
                : kind.wireName;
    }
}

package dev.redeye.spi;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionKind;
import java.util.Arrays;
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
        FORCE_CLOSED(7, "force_closed", "force"),
        /** {@link Transitions#recordOutcome(BreakerState, boolean, boolean, Policy, long)} of a slow success. */
        SLOW_SUCCESS(8, "slow_success", "recordOutcome"),
        /** {@link Transitions#recordOutcome(BreakerState, boolean, boolean, Policy, long)} of a slow failure. */
        SLOW_FAILURE(9, "slow_failure", "recordOutcome"),
        /** {@link Transitions#slowCall}: a call still running crossed the slow-call duration threshold. */
        SLOW_CALL(10, "slow_call", "slowCall"),
        /**
         * {@link Transitions#slowCallFailed}: a call counted by {@link #SLOW_CALL} ended in failure; fenced by the
         * version its slow call was recorded under.
         */
        SLOW_CALL_FAILED(11, "slow_call_failed", "slowCallFailed"),
        /** {@link Transitions#forceMode}; also removes every trial claim of the key (the breaker closes). */
        FORCE_MODE(12, "force_mode", "forceMode"),
        /**
         * A batch of one instance's ordinary outcomes ({@link AtomicOperation#outcomes}), each applied in order by
         * {@link Transitions#recordOutcome(BreakerState, boolean, boolean, Policy, long, String)} at its own time;
         * only for a store with the {@link OutcomeBatches} capability.
         */
        OUTCOMES(13, "outcomes", "recordOutcomes");

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

    /**
     * The most outcomes one batch ({@link #outcomes}) carries: what one atomic step folds is bounded, and so is
     * the time a store holds its lock or its script runs for one write.
     */
    public static final int MAX_BATCH = 1024;
    /** The instants a packed outcome ({@link #packOutcome}) holds: {@code [-2^61, 2^61)} ms. */
    private static final long MAX_PACKED_AT = 1L << 61;

    private static final AtomicOperation FAILURE = new AtomicOperation(Kind.FAILURE, 0);
    private static final AtomicOperation SUCCESS = new AtomicOperation(Kind.SUCCESS, 0);
    private static final AtomicOperation FORCE_OPEN = new AtomicOperation(Kind.FORCE_OPEN, 0);
    private static final AtomicOperation FORCE_HALF_OPEN = new AtomicOperation(Kind.FORCE_HALF_OPEN, 0);
    private static final AtomicOperation FORCE_CLOSED = new AtomicOperation(Kind.FORCE_CLOSED, 0);
    private static final AtomicOperation SLOW_SUCCESS = new AtomicOperation(Kind.SLOW_SUCCESS, 0);
    private static final AtomicOperation SLOW_FAILURE = new AtomicOperation(Kind.SLOW_FAILURE, 0);
    private static final AtomicOperation SLOW_CALL = new AtomicOperation(Kind.SLOW_CALL, 0);

    private final Kind kind;
    /** The trial's or the slow call's version; the mode's code for {@link Kind#FORCE_MODE}. */
    private final long trialVersion;
    /** The slow call's window position ({@link Kind#SLOW_CALL_FAILED}), else 0. */
    private final long slot;
    /** The instance an outcome is attributed to, for a quorum ({@link #outcome(boolean, boolean, String)}); else null. */
    private final String instance;
    /** The packed outcomes of {@link Kind#OUTCOMES} ({@link #packOutcome}), in order; null for the other rules. */
    private final long[] outcomes;

    private AtomicOperation(Kind kind, long trialVersion) {
        this(kind, trialVersion, 0L);
    }

    private AtomicOperation(Kind kind, long trialVersion, long slot) {
        this.kind = kind;
        this.trialVersion = trialVersion;
        this.slot = slot;
        this.instance = null;
        this.outcomes = null;
    }

    private AtomicOperation(Kind kind, String instance) {
        this(kind, instance, null);
    }

    private AtomicOperation(Kind kind, String instance, long[] outcomes) {
        this.kind = kind;
        this.trialVersion = 0L;
        this.slot = 0L;
        this.instance = instance;
        this.outcomes = outcomes;
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

    /**
     * One call that was not a trial, timed: a slow one counts toward a sliding window's slow-call rate (the
     * other strategies read it as {@link #outcome(boolean)}).
     */
    public static AtomicOperation outcome(boolean success, boolean slow) {
        if (!slow) {
            return outcome(success);
        }
        return success ? SLOW_SUCCESS : SLOW_FAILURE;
    }

    /**
     * {@link #outcome(boolean, boolean)} attributed to {@code instance}: under a quorum
     * ({@link Policy#quorumOn()}) it updates the instance's {@link dev.redeye.api.Contribution}
     * ({@link Transitions#recordOutcome(BreakerState, boolean, boolean, Policy, long, String)}); a new object per
     * call (the engine asks for one only under a quorum).
     *
     * @throws IllegalArgumentException if {@code instance} is not a valid instance id
     */
    public static AtomicOperation outcome(boolean success, boolean slow, String instance) {
        Kind k = slow ? (success ? Kind.SLOW_SUCCESS : Kind.SLOW_FAILURE) : (success ? Kind.SUCCESS : Kind.FAILURE);
        return new AtomicOperation(k, dev.redeye.api.Contribution.requireValidInstance(instance));
    }

    /** A call still running crossed the slow-call duration threshold: it is counted now, as a slow success. */
    public static AtomicOperation slowCall() {
        return SLOW_CALL;
    }

    /**
     * One ordinary outcome packed in a {@code long} for {@link #outcomes}: the instant {@code at} (epoch ms of the
     * configured clock) shifted left by two, bit 0 set for a failure, bit 1 for a slow call.
     *
     * @throws IllegalArgumentException if {@code at} is outside {@code [-2^61, 2^61)}
     */
    public static long packOutcome(boolean success, boolean slow, long at) {
        if (at < -MAX_PACKED_AT || at >= MAX_PACKED_AT) {
            throw new IllegalArgumentException("outcome instant out of range: " + at);
        }
        return at << 2 | (slow ? 2L : 0L) | (success ? 0L : 1L);
    }

    /**
     * A batch of ordinary outcomes of one instance, in the order they happened: its {@link #apply} is the fold of
     * {@link Transitions#recordOutcome(BreakerState, boolean, boolean, Policy, long, String)} over them, each at
     * its own instant, so the store ends in the state the outcomes one by one would leave. Only ordinary outcomes
     * are batched: never a trial's, a slow call counted in flight, nor an operator's change. A store applies it
     * only if it declares {@link OutcomeBatches}.
     *
     * <p>The {@link StateChange} of a batch: {@code previous} is the state before the first outcome, {@code state}
     * the state after the last, and {@code transition} the <b>first</b> transition the fold made, or null. From
     * a closed state, ordinary outcomes make at most one {@link TransitionKind#OPENED} (an open breaker counts
     * failures and ignores successes until a trial or an operator moves it); the outcomes after it apply to
     * the open state exactly as they would one by one. In {@link BreakerMode#METRICS_ONLY} every would-be opening
     * is a {@link TransitionKind#WOULD_OPEN} that resets the counters, so a batch may make several: the version
     * goes up once for each, and the batch reports one {@code WOULD_OPEN} (one feed event, carrying the final
     * state).
     *
     * @param packed   outcomes made with {@link #packOutcome}; the first {@code count} are copied
     * @param count    how many, 1 to {@value #MAX_BATCH}
     * @param instance the instance they are attributed to under a quorum, or null
     * @throws IllegalArgumentException if {@code count} is out of range or {@code instance} is not a valid id
     * @throws NullPointerException     if {@code packed} is null
     */
    public static AtomicOperation outcomes(long[] packed, int count, String instance) {
        Objects.requireNonNull(packed, "packed");
        if (count < 1 || count > MAX_BATCH || count > packed.length) {
            throw new IllegalArgumentException("a batch holds 1 to " + MAX_BATCH + " outcomes of the "
                    + packed.length + " given, not " + count);
        }
        return new AtomicOperation(Kind.OUTCOMES,
                instance == null ? null : dev.redeye.api.Contribution.requireValidInstance(instance),
                Arrays.copyOf(packed, count));
    }

    /**
     * The call counted by {@link #slowCall()} failed.
     *
     * @param slot    the window's {@link dev.redeye.api.SlidingWindow#position()} in the state the slow call
     *                returned
     * @param version that state's version: the failure counts only while the window is the same
     */
    public static AtomicOperation slowCallFailed(long slot, long version) {
        return new AtomicOperation(Kind.SLOW_CALL_FAILED, version, slot);
    }

    /**
     * An operator stores {@code mode} for the fleet.
     *
     * @throws NullPointerException if {@code mode} is null
     */
    public static AtomicOperation forceMode(BreakerMode mode) {
        return new AtomicOperation(Kind.FORCE_MODE, Objects.requireNonNull(mode, "mode").code());
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
     * The operation of a rule and its arguments, as a backend that shipped them stores them.
     *
     * @param trialVersion the trial's or slow call's version, or the mode's code for {@link Kind#FORCE_MODE};
     *                     ignored by the other rules
     * @param slot         the slow call's window position; ignored unless {@code kind} is
     *                     {@link Kind#SLOW_CALL_FAILED}
     * @throws NullPointerException     if {@code kind} is null
     * @throws IllegalArgumentException if a mode's code is unknown
     */
    public static AtomicOperation of(Kind kind, long trialVersion, long slot) {
        switch (Objects.requireNonNull(kind, "kind")) {
            case SLOW_CALL_FAILED:
                return slowCallFailed(slot, trialVersion);
            case FORCE_MODE:
                if (trialVersion < Integer.MIN_VALUE || trialVersion > Integer.MAX_VALUE) {
                    throw new IllegalArgumentException("unknown breaker mode code " + trialVersion);
                }
                return forceMode(BreakerMode.fromCode((int) trialVersion));
            case SLOW_SUCCESS:
                return SLOW_SUCCESS;
            case SLOW_FAILURE:
                return SLOW_FAILURE;
            case SLOW_CALL:
                return SLOW_CALL;
            case OUTCOMES:
                throw new IllegalArgumentException("a batch carries its outcomes: use outcomes(packed, count, "
                        + "instance)");
            default:
                return of(kind, trialVersion);
        }
    }

    /**
     * The operation of a rule and its trial version, as a backend that shipped them stores them:
     * {@link #of(Kind, long, long)} with slot 0.
     *
     * @throws NullPointerException     if {@code kind} is null
     * @throws IllegalArgumentException if a mode's code is unknown
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
            case FORCE_CLOSED:
                return FORCE_CLOSED;
            case OUTCOMES:
                throw new IllegalArgumentException("a batch carries its outcomes: use outcomes(packed, count, "
                        + "instance)");
            default:
                return of(kind, trialVersion, 0L);
        }
    }

    /** The rule. */
    public Kind kind() {
        return kind;
    }

    /**
     * The open period a trial outcome was admitted under, the version a slow call was recorded under, or the
     * mode's code of {@link Kind#FORCE_MODE}; 0 for the other rules.
     */
    public long trialVersion() {
        return trialVersion;
    }

    /** The slow call's window position ({@link Kind#SLOW_CALL_FAILED}); 0 for the other rules. */
    public long slot() {
        return slot;
    }

    /**
     * The instance an outcome, or a batch's outcomes, are attributed to ({@link #outcome(boolean, boolean, String)},
     * {@link #outcomes}), or null.
     */
    public String instance() {
        return instance;
    }

    /** How many outcomes a batch ({@link Kind#OUTCOMES}) carries; 0 for the other rules. */
    public int outcomeCount() {
        return outcomes == null ? 0 : outcomes.length;
    }

    /**
     * Whether the {@code i}th outcome of a batch succeeded.
     *
     * @throws IndexOutOfBoundsException if {@code i} is not below {@link #outcomeCount()}
     */
    public boolean outcomeSucceeded(int i) {
        return (packed(i) & 1L) == 0;
    }

    /** Whether the {@code i}th outcome of a batch was a slow call. */
    public boolean outcomeSlow(int i) {
        return (packed(i) & 2L) != 0;
    }

    /** The instant (epoch ms) of the {@code i}th outcome of a batch. */
    public long outcomeAt(int i) {
        return packed(i) >> 2;
    }

    private long packed(int i) {
        if (outcomes == null || i < 0 || i >= outcomes.length) {
            throw new IndexOutOfBoundsException("outcome " + i + " of " + outcomeCount());
        }
        return outcomes[i];
    }

    /**
     * The mode an operator's {@link Kind#FORCE_MODE} stores.
     *
     * @throws IllegalStateException if this is not {@link Kind#FORCE_MODE}
     */
    public BreakerMode mode() {
        if (kind != Kind.FORCE_MODE) {
            throw new IllegalStateException(kind.wireName + " stores no mode");
        }
        return BreakerMode.fromCode((int) trialVersion);
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
        return kind == Kind.FORCE_CLOSED || kind == Kind.FORCE_HALF_OPEN || kind == Kind.FORCE_MODE;
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
                return Transitions.recordOutcome(current, false, false, policy, now, instance);
            case SUCCESS:
                return Transitions.recordOutcome(current, true, false, policy, now, instance);
            case TRIAL_SUCCESS:
                return Transitions.trialSucceeded(current, trialVersion, policy, now);
            case TRIAL_FAILURE:
                return Transitions.trialFailed(current, trialVersion, policy, now);
            case SLOW_SUCCESS:
                return Transitions.recordOutcome(current, true, true, policy, now, instance);
            case SLOW_FAILURE:
                return Transitions.recordOutcome(current, false, true, policy, now, instance);
            case SLOW_CALL:
                return Transitions.slowCall(current, policy, now);
            case SLOW_CALL_FAILED:
                return Transitions.slowCallFailed(current, slot, trialVersion, policy, now);
            case FORCE_MODE:
                return Transitions.forceMode(current, mode(), policy, now);
            case OUTCOMES:
                return fold(current, policy);
            default:
                return Transitions.force(current, target(), policy, now);
        }
    }

    /** A batch: each outcome in order at its own instant; the first transition is the batch's (see {@link #outcomes}). */
    private StateChange fold(BreakerState current, Policy policy) {
        Objects.requireNonNull(policy, "policy");
        BreakerState previous = null;
        BreakerState s = current;
        TransitionKind first = null;
        for (long o : outcomes) {
            StateChange c = Transitions.recordOutcome(s, (o & 1L) == 0, (o & 2L) != 0, policy, o >> 2, instance);
            if (previous == null) {
                previous = c.previous();
            }
            if (first == null) {
                first = c.transition();
            }
            s = c.state();
        }
        return new StateChange(previous, s, first);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AtomicOperation && ((AtomicOperation) o).kind == kind
                && ((AtomicOperation) o).trialVersion == trialVersion && ((AtomicOperation) o).slot == slot
                && Objects.equals(((AtomicOperation) o).instance, instance)
                && Arrays.equals(((AtomicOperation) o).outcomes, outcomes);
    }

    @Override
    public int hashCode() {
        return ((kind.hashCode() * 31 + Long.hashCode(trialVersion)) * 31 + Long.hashCode(slot)) * 31
                + Objects.hashCode(instance) + Arrays.hashCode(outcomes);
    }

    @Override
    public String toString() {
        switch (kind) {
            case TRIAL_SUCCESS:
            case TRIAL_FAILURE:
                return kind.wireName + "@" + trialVersion;
            case SLOW_CALL_FAILED:
                return kind.wireName + "#" + slot + "@" + trialVersion;
            case FORCE_MODE:
                return kind.wireName + ":" + mode().wireName();
            case OUTCOMES:
                return kind.wireName + "[" + outcomes.length + "]" + (instance == null ? "" : " by " + instance);
            default:
                return instance == null ? kind.wireName : kind.wireName + " by " + instance;
        }
    }
}

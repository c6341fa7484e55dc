package dev.redeye.api;

import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import java.util.List;
import java.util.Objects;

/**
 * The immutable state of one breaker (one operation name), as stored.
 *
 * <p>Half-open is not stored: a breaker is half-open when it is {@link #open()}, not {@link #forced()},
 * and its reset window has elapsed. See {@link Transitions} for the rules that move a state and
 * {@link StateCodec} for the stored field names.
 *
 * @param failures        consecutive failures counted (consecutive strategy); also counts failures while open
 * @param lastFailureAt   epoch ms of the last recorded failure, 0 if none
 * @param open            the breaker is open (calls are rejected unless they win a trial)
 * @param openedAt        epoch ms the current open period started; a failure that arrives while already
 *                        open does not move it
 * @param openCount       failed trials since the breaker last fully closed; drives backoff
 * @param errorRate       EWMA failure rate in [0, 1] (error-rate strategy)
 * @param samples         outcomes folded into {@code errorRate}
 * @param trialSuccesses  successful trials so far in the current half-open period
 * @param forced          held open by an operator: no trials until reset
 * @param window          the outcomes a sliding-window policy judges ({@link Strategy#SLIDING_WINDOW}); {@code null}
 *                        when none were recorded since the breaker last closed
 * @param mode            the mode an operator stored for the fleet ({@link BreakerMode#DEFAULT}: the policy's
 *                        mode applies)
 * @param contributors    the instances that recorded in the current scope, most recent first, at most
 *                        {@link #MAX_CONTRIBUTORS}: kept only under a quorum ({@link Policy#quorumOn()}), else
 *                        empty (see {@link Contribution})
 * @param version         monotonic; bumped only on a transition; never goes backwards for a key, also across
 *                        a delete or an expiry (a never-transitioned key has the starting version of its
 *                        life: 0, or a store's base such as its clock in microseconds, see
 *                        {@link #initial(long)}); {@link #UNKNOWN_VERSION} for a state read from a layout that
 *                        carries no version
 */
public record BreakerState(
        int failures,
        long lastFailureAt,
        boolean open,
        long openedAt,
        int openCount,
        double errorRate,
        long samples,
        int trialSuccesses,
        boolean forced,
        SlidingWindow window,
        BreakerMode mode,
        List<Contribution> contributors,
        long version) {

    /** The most instances a state holds contributions of: the least recent is dropped past it. */
    public static final int MAX_CONTRIBUTORS = 16;

    /** The version of a state read from a layout that carries none; never trusted by a cache. */
    public static final long UNKNOWN_VERSION = -1L;

    /** The state of a breaker that has never seen an outcome: closed, all counters 0, version 0. */
    public static final BreakerState INITIAL = new BreakerState(0, 0L, false, 0L, 0, 0.0, 0L, 0, false, 0L);

    /**
     * A state with no window and the {@link BreakerMode#DEFAULT} mode, for the strategies that keep no window.
     *
     * @throws IllegalArgumentException if an invariant is broken (see the canonical constructor)
     */
    public BreakerState(int failures, long lastFailureAt, boolean open, long openedAt, int openCount,
            double errorRate, long samples, int trialSuccesses, boolean forced, long version) {
        this(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples, trialSuccesses, forced, null,
                BreakerMode.DEFAULT, List.of(), version);
    }

    /**
     * A state with no contributions, for the policies without a quorum.
     *
     * @throws IllegalArgumentException if an invariant is broken (see the canonical constructor)
     */
    public BreakerState(int failures, long lastFailureAt, boolean open, long openedAt, int openCount,
            double errorRate, long samples, int trialSuccesses, boolean forced, SlidingWindow window,
            BreakerMode mode, long version) {
        this(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples, trialSuccesses, forced, window,
                mode, List.of(), version);
    }

    /**
     * The initial state of a new life of a key: {@link #INITIAL} with {@code version} as its version. A store
     * that creates an absent key starts from this, with a version above any the key had before a
     * {@code delete} or an expiry, so that versions of a key never go backwards (see {@link Transitions}).
     *
     * @param version the starting version, {@code >= 0}
     * @throws IllegalArgumentException if {@code version} is negative
     */
    public static BreakerState initial(long version) {
        if (version < 0) {
            throw new IllegalArgumentException("a starting version must be >= 0: " + version);
        }
        return version == 0 ? INITIAL : INITIAL.withVersion(version);
    }

    /**
     * Validates the invariants every stored state must satisfy.
     *
     * @throws IllegalArgumentException if a counter is negative, the rate is outside [0, 1] or not a
     *                                  number, {@code forced} is set on a closed state, or the version is
     *                                  below {@link #UNKNOWN_VERSION}
     * @throws NullPointerException     if {@code mode} or {@code contributors} is null
     */
    public BreakerState {
        Objects.requireNonNull(mode, "mode");
        contributors = List.copyOf(contributors);
        checkContributors(contributors);
        if (failures < 0) {
            throw new IllegalArgumentException("failures must be >= 0: " + failures);
        }
        if (openCount < 0) {
            throw new IllegalArgumentException("openCount must be >= 0: " + openCount);
        }
        if (samples < 0) {
            throw new IllegalArgumentException("samples must be >= 0: " + samples);
        }
        if (trialSuccesses < 0) {
            throw new IllegalArgumentException("trialSuccesses must be >= 0: " + trialSuccesses);
        }
        if (!(errorRate >= 0.0 && errorRate <= 1.0)) {
            throw new IllegalArgumentException("errorRate must be in [0, 1]: " + errorRate);
        }
        if (forced && !open) {
            throw new IllegalArgumentException("a forced state must be open");
        }
        if (version < UNKNOWN_VERSION) {
            throw new IllegalArgumentException("version must be >= -1: " + version);
        }
    }

    /**
     * Checks a list of contributions: at most {@link #MAX_CONTRIBUTORS}, each instance once.
     *
     * @throws IllegalArgumentException if it breaks either
     */
    static void checkContributors(List<Contribution> contributors) {
        if (contributors.size() > MAX_CONTRIBUTORS) {
            throw new IllegalArgumentException("at most " + MAX_CONTRIBUTORS + " contributions: "
                    + contributors.size());
        }
        for (int i = 0; i < contributors.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (contributors.get(i).instance().equals(contributors.get(j).instance())) {
                    throw new IllegalArgumentException("instance '" + contributors.get(i).instance()
                            + "' contributes twice");
                }
            }
        }
    }

    /** Whether the version is known (not {@link #UNKNOWN_VERSION}). */
    public boolean hasKnownVersion() {
        return version != UNKNOWN_VERSION;
    }

    /** A copy with another version. */
    public BreakerState withVersion(long newVersion) {
        return new BreakerState(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples,
                trialSuccesses, forced, window, mode, contributors, newVersion);
    }

    /**
     * Whether an operator's decision is held in this state (a forced state, or a stored mode other than
     * {@link BreakerMode#DEFAULT}), so that a store keeps it without expiry: it must not lapse back to the
     * configured behaviour when the clean-up TTL passes.
     */
    public boolean pinned() {
        return forced || mode != BreakerMode.DEFAULT;
    }

    /** The mode in force under {@code policy}: the stored {@link #mode()}, or the policy's when it is the default. */
    public BreakerMode effectiveMode(Policy policy) {
        return mode != BreakerMode.DEFAULT ? mode : policy.mode();
    }

    /** A builder seeded with this state's fields. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** A builder seeded with {@link #INITIAL}. */
    public static Builder builder() {
        return new Builder(INITIAL);
    }

    /** Mutable builder for {@link BreakerState}; validation happens in {@link #build()}. Not thread-safe. */
    public static final class Builder {
        private int failures;
        private long lastFailureAt;
        private boolean open;
        private long openedAt;
        private int openCount;
        private double errorRate;
        private long samples;
        private int trialSuccesses;
        private boolean forced;
        private SlidingWindow window;
        private BreakerMode mode;
        private List<Contribution> contributors;
        private long version;

        private Builder(BreakerState s) {
            failures = s.failures;
            lastFailureAt = s.lastFailureAt;
            open = s.open;
            openedAt = s.openedAt;
            openCount = s.openCount;
            errorRate = s.errorRate;
            samples = s.samples;
            trialSuccesses = s.trialSuccesses;
            forced = s.forced;
            window = s.window;
            mode = s.mode;
            contributors = s.contributors;
            version = s.version;
        }

        public Builder failures(int v) { failures = v; return this; }
        public Builder lastFailureAt(long v) { lastFailureAt = v; return this; }
        public Builder open(boolean v) { open = v; return this; }
        public Builder openedAt(long v) { openedAt = v; return this; }
        public Builder openCount(int v) { openCount = v; return this; }
        public Builder errorRate(double v) { errorRate = v; return this; }
        public Builder samples(long v) { samples = v; return this; }
        public Builder trialSuccesses(int v) { trialSuccesses = v; return this; }
        public Builder forced(boolean v) { forced = v; return this; }
        public Builder window(SlidingWindow v) { window = v; return this; }
        public Builder mode(BreakerMode v) { mode = v; return this; }
        public Builder contributors(List<Contribution> v) { contributors = v; return this; }
        public Builder version(long v) { version = v; return this; }

        /**
         * Builds the state.
         *
         * @throws IllegalArgumentException if an invariant of {@link BreakerState} is broken
         */
        public BreakerState build() {
            return new BreakerState(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples,
                    trialSuccesses, forced, window, mode, contributors, version);
        }
    }
}

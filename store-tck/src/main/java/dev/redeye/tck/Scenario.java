package dev.redeye.tck;

import dev.redeye.api.Policy;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A generated scenario of a model rule (R8): the keys (each with its own policy) and the steps. Steps are
 * abstract and relative to the model ("release a stale token of key 0", "a trial outcome carrying the current
 * version"), so that every subsequence of a scenario is a valid scenario: that is what lets the
 * {@link Shrinker} delete and simplify steps freely. The {@link SequenceRunner} turns each step into a
 * concrete {@link Call}. Immutable.
 *
 * @param keys  the keys, by index
 * @param steps the steps, in order; {@link Step#at()} never decreases
 * @param skews the clock skew of each client in ms (R8.4), added to the {@code now} of its calls: a client whose
 *              clock is behind passes a {@code now} below what the other one stored; zero for every client in
 *              the other rules
 */
record Scenario(List<KeySpec> keys, List<Step> steps, List<Long> skews) {
    /** No client's clock is skewed. */
    static final List<Long> NO_SKEW = List.of(0L, 0L);

    Scenario {
        keys = List.copyOf(keys);
        steps = List.copyOf(steps);
        skews = List.copyOf(skews);
        if (skews.size() != NO_SKEW.size()) {
            throw new IllegalArgumentException("one skew per client: " + skews);
        }
    }

    /** A scenario whose clients' clocks agree. */
    Scenario(List<KeySpec> keys, List<Step> steps) {
        this(keys, steps, NO_SKEW);
    }

    /** The skew of {@code client}'s clock, in ms. */
    long skew(int client) {
        return skews.get(client);
    }

    /** Whether some client's clock is skewed. */
    boolean skewed() {
        return !skews.equals(NO_SKEW);
    }

    /**
     * One key of a scenario.
     *
     * @param name   the name under the run's fresh prefix
     * @param policy the policy of every atomic call on the key
     */
    record KeySpec(String name, Policy policy) {
        KeySpec {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(policy, "policy");
        }
    }

    /** What a step does; each maps to one {@link Call.Op}, except {@link #WAIT}. */
    enum Kind {
        RECORD_FAILURE(Call.Op.RECORD_FAILURE),
        RECORD_SUCCESS(Call.Op.RECORD_SUCCESS),
        /** {@code arg} odd: success. */
        RECORD_OUTCOME(Call.Op.RECORD_OUTCOME),
        /** {@code arg} picks the version carried: {@link Step#VERSION_CHOICES}. */
        TRIAL_SUCCEEDED(Call.Op.TRIAL_SUCCEEDED),
        /** As {@link #TRIAL_SUCCEEDED}. */
        TRIAL_FAILED(Call.Op.TRIAL_FAILED),
        /** {@code arg % 3}: 0 CLOSED, 1 HALF_OPEN, 2 FORCED_OPEN. */
        FORCE(Call.Op.FORCE),
        /** {@code arg} seeds the state written. */
        PUT(Call.Op.PUT),
        DELETE(Call.Op.DELETE),
        GET(Call.Op.GET),
        /** permits {@code 1 + arg % 3}; a short ttl when {@code arg / 3} is odd (R8.2 only). */
        CLAIM(Call.Op.CLAIM),
        /** {@code arg % 5} picks the token: {@link Step#TOKEN_CHOICES}. */
        RELEASE(Call.Op.RELEASE),
        /** Real time: sleep until every short claim surely expired (R8.2 only). */
        WAIT(null),
        /** A slow outcome; {@code arg} odd: success. */
        RECORD_SLOW(Call.Op.SLOW_OUTCOME),
        /** A call still running is counted as slow. */
        SLOW_CALL(Call.Op.SLOW_CALL),
        /**
         * The failure of a slow call: {@code arg % 5} picks the version carried ({@link Step#VERSION_CHOICES}),
         * {@code (arg / 5) % 3} the slot: the window's position, one below, one above.
         */
        SLOW_CALL_FAILED(Call.Op.SLOW_CALL_FAILED),
        /** {@code arg % 4} is the code of the mode stored (0 DEFAULT, 1 NORMAL, 2 METRICS_ONLY, 3 DISABLED). */
        FORCE_MODE(Call.Op.FORCE_MODE),
        /**
         * A batch of outcomes ending at the step's time: {@code arg} seeds them ({@link StepResolver#batchOf}); 0 is
         * one success.
         */
        RECORD_BATCH(Call.Op.RECORD_BATCH);

        final Call.Op op;

        Kind(Call.Op op) {
            this.op = op;
        }
    }

    /**
     * One abstract step.
     *
     * @param kind   what it does
     * @param client which client runs it (0 or 1)
     * @param key    which key
     * @param at     virtual ms since the scenario began (the call's {@code now} is {@code T0 + at})
     * @param arg    the kind's choice, {@code >= 0}; 0 is the simplest
     */
    record Step(Kind kind, int client, int key, long at, int arg) {
        /** The versions a trial outcome may carry, by {@code arg % 5}. */
        static final String[] VERSION_CHOICES = {"current", "previous", "next", "0", "unknown (-1)"};
        /** The tokens a release may carry, by {@code arg % 5}. */
        static final String[] TOKEN_CHOICES = {"oldest live", "newest live", "stale", "other key's", "never issued"};

        Step {
            Objects.requireNonNull(kind, "kind");
            if (client < 0 || key < 0 || at < 0 || arg < 0) {
                throw new IllegalArgumentException("negative field in " + kind);
            }
        }

        Step withAt(long newAt) {
            return new Step(kind, client, key, newAt, arg);
        }

        Step withClient(int c) {
            return new Step(kind, c, key, at, arg);
        }

        Step withKey(int k) {
            return new Step(kind, client, k, at, arg);
        }

        Step withArg(int a) {
            return new Step(kind, client, key, at, a);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s(client %d, key %d, at %d, arg %d)", kind, client, key, at, arg);
        }
    }

    /** The same keys and skews with other steps. */
    Scenario withSteps(List<Step> s) {
        return new Scenario(keys, s, skews);
    }

    /** The same keys and steps with other skews. */
    Scenario withSkews(List<Long> s) {
        return new Scenario(keys, steps, s);
    }
}

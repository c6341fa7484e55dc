package dev.redeye.tck;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.OutcomeBatches;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * One concrete call of the Store SPI made by a model rule (R8), with every argument it carries: what the
 * store under test runs and what the {@link ReferenceModel} judges. Immutable.
 *
 * @param op           which method
 * @param key          the index of the key in its scenario
 * @param policy       the key's policy (atomic operations)
 * @param now          the virtual time passed to an atomic operation
 * @param success      the outcome of {@code recordOutcome}
 * @param trialVersion the version a trial outcome carries
 * @param status       the target of {@code force}
 * @param state        the state of {@code put}
 * @param permits      the permits of {@code claimTrial}
 * @param ttl          the ttl of {@code claimTrial}
 * @param token        the token of {@code releaseTrial}
 * @param tokens       the tokens a {@linkplain Op#CLAIM_TABLE claim-table read-back} releases one by one
 * @param slot         the window position a {@code slowCallFailed} carries (its version is {@code trialVersion})
 * @param mode         the mode of {@code forceMode}
 * @param batch        the outcomes of a batch ({@link AtomicOperation#packOutcome}), in order; empty otherwise
 */
record Call(Op op, int key, Policy policy, long now, boolean success, long trialVersion, BreakerStatus status,
        BreakerState state, int permits, Duration ttl, String token, List<String> tokens, long slot,
        BreakerMode mode, List<Long> batch) {

    /** The ttl of every put: far above anything a sequence lasts, so no state expires within one. */
    static final Duration PUT_TTL = Duration.ofHours(1);

    /** The methods a model rule calls, each with the capability it needs ({@code null}: every store has it). */
    enum Op {
        RECORD_FAILURE(AtomicUpdates.class, "recordFailure"),
        RECORD_SUCCESS(AtomicUpdates.class, "recordSuccess"),
        RECORD_OUTCOME(AtomicUpdates.class, "recordOutcome"),
        TRIAL_SUCCEEDED(AtomicUpdates.class, "trialSucceeded"),
        TRIAL_FAILED(AtomicUpdates.class, "trialFailed"),
        FORCE(AtomicUpdates.class, "force"),
        PUT(null, "put"),
        DELETE(null, "delete"),
        GET(null, "get"),
        CLAIM(TrialClaims.class, "claimTrial"),
        RELEASE(TrialClaims.class, "releaseTrial"),
        /**
         * Not one SPI method: the read-back of a key's claim table at the end of an R8.5 scenario, made of
         * claims and releases ({@link ClaimTable#read}). Never drawn by the generator.
         */
        CLAIM_TABLE(TrialClaims.class, "claim table read-back"),
        /** A timed outcome: {@code recordOutcome} of a slow call (slow_success, slow_failure). */
        SLOW_OUTCOME(AtomicUpdates.class, "recordOutcome(slow)"),
        /** A call still running crossed the slow-call duration threshold (slow_call). */
        SLOW_CALL(AtomicUpdates.class, "slowCall"),
        /** The call a slow_call counted failed (slow_call_failed), fenced by version. */
        SLOW_CALL_FAILED(AtomicUpdates.class, "slowCallFailed"),
        /** An operator stores a mode (force_mode). */
        FORCE_MODE(AtomicUpdates.class, "forceMode"),
        /** A batch of one instance's outcomes (outcomes), each at its own instant. */
        RECORD_BATCH(OutcomeBatches.class, "apply(outcomes)");

        final Class<?> capability;
        final String method;

        Op(Class<?> capability, String method) {
            this.capability = capability;
            this.method = method;
        }

        /** Whether the call returns a {@link StateChange} that {@link Transitions} predicts. */
        boolean atomic() {
            return capability == AtomicUpdates.class || this == RECORD_BATCH;
        }

        /** Whether the call can change the stored state (so the state is read back after it). */
        boolean writes() {
            return atomic() || this == PUT || this == DELETE;
        }
    }

    Call {
        Objects.requireNonNull(op, "op");
        tokens = tokens == null ? List.of() : List.copyOf(tokens);
        batch = batch == null ? List.of() : List.copyOf(batch);
    }

    static Call of(Op op, int key, Policy policy, long now) {
        return new Call(op, key, policy, now, false, 0, null, null, 0, null, null, null, 0, null, null);
    }

    static Call outcome(int key, boolean success, Policy policy, long now) {
        return new Call(Op.RECORD_OUTCOME, key, policy, now, success, 0, null, null, 0, null, null, null, 0, null,
                null);
    }

    static Call trial(boolean success, int key, long trialVersion, Policy policy, long now) {
        return new Call(success ? Op.TRIAL_SUCCEEDED : Op.TRIAL_FAILED, key, policy, now, success, trialVersion,
                null, null, 0, null, null, null, 0, null, null);
    }

    static Call force(int key, BreakerStatus status, Policy policy, long now) {
        return new Call(Op.FORCE, key, policy, now, false, 0, status, null, 0, null, null, null, 0, null, null);
    }

    static Call put(int key, BreakerState state) {
        return new Call(Op.PUT, key, null, 0, false, 0, null, state, 0, null, null, null, 0, null, null);
    }

    static Call plain(Op op, int key) {
        return new Call(op, key, null, 0, false, 0, null, null, 0, null, null, null, 0, null, null);
    }

    static Call claim(int key, int permits, Duration ttl) {
        return new Call(Op.CLAIM, key, null, 0, false, 0, null, null, permits, ttl, null, null, 0, null, null);
    }

    static Call release(int key, String token) {
        return new Call(Op.RELEASE, key, null, 0, false, 0, null, null, 0, null, token, null, 0, null, null);
    }

    /** A slow outcome ({@code slow_success} or {@code slow_failure}). */
    static Call slowOutcome(int key, boolean success, Policy policy, long now) {
        return new Call(Op.SLOW_OUTCOME, key, policy, now, success, 0, null, null, 0, null, null, null, 0, null,
                null);
    }

    /** The failure of the slow call counted at window position {@code slot} under {@code version}. */
    static Call slowCallFailed(int key, long slot, long version, Policy policy, long now) {
        return new Call(Op.SLOW_CALL_FAILED, key, policy, now, false, version, null, null, 0, null, null, null, slot,
                null, null);
    }

    /** An operator stores {@code mode}. */
    static Call forceMode(int key, BreakerMode mode, Policy policy, long now) {
        return new Call(Op.FORCE_MODE, key, policy, now, false, 0, null, null, 0, null, null, null, 0, mode, null);
    }

    /** A batch of {@code packed} outcomes ({@link AtomicOperation#packOutcome}), applied at {@code now}. */
    static Call batch(int key, List<Long> packed, Policy policy, long now) {
        return new Call(Op.RECORD_BATCH, key, policy, now, false, 0, null, null, 0, null, null, null, 0, null,
                packed);
    }

    /** The read-back of the claim table of {@code key}, releasing {@code issued} (every token issued for it). */
    static Call claimTable(int key, List<String> issued) {
        return new Call(Op.CLAIM_TABLE, key, null, 0, false, 0, null, null, 0, null, null, issued, 0, null, null);
    }

    /**
     * The update an atomic call applies.
     *
     * @throws IllegalStateException if this call is not one of {@link Op#atomic()}
     */
    AtomicOperation operation() {
        switch (op) {
            case RECORD_FAILURE:
                return AtomicOperation.failure();
            case RECORD_SUCCESS:
                return AtomicOperation.success();
            case RECORD_OUTCOME:
                return AtomicOperation.outcome(success);
            case TRIAL_SUCCEEDED:
                return AtomicOperation.trialSucceeded(trialVersion);
            case TRIAL_FAILED:
                return AtomicOperation.trialFailed(trialVersion);
            case FORCE:
                return AtomicOperation.force(status);
            case SLOW_OUTCOME:
                return AtomicOperation.outcome(success, true);
            case SLOW_CALL:
                return AtomicOperation.slowCall();
            case SLOW_CALL_FAILED:
                return AtomicOperation.slowCallFailed(slot, trialVersion);
            case FORCE_MODE:
                return AtomicOperation.forceMode(mode);
            case RECORD_BATCH:
                long[] packed = new long[batch.size()];
                for (int i = 0; i < packed.length; i++) {
                    packed[i] = batch.get(i);
                }
                return AtomicOperation.outcomes(packed, packed.length, null);
            default:
                throw new IllegalStateException(op + " is not an update");
        }
    }

    /** {@code o} as the Java expression that makes it. */
    private static String java(AtomicOperation o) {
        switch (o.kind()) {
            case FAILURE:
                return "AtomicOperation.failure()";
            case SUCCESS:
                return "AtomicOperation.success()";
            case TRIAL_SUCCESS:
                return "AtomicOperation.trialSucceeded(" + o.trialVersion() + "L)";
            case TRIAL_FAILURE:
                return "AtomicOperation.trialFailed(" + o.trialVersion() + "L)";
            case SLOW_SUCCESS:
            case SLOW_FAILURE:
                return "AtomicOperation.outcome(" + (o.kind() == AtomicOperation.Kind.SLOW_SUCCESS) + ", true)";
            case SLOW_CALL:
                return "AtomicOperation.slowCall()";
            case SLOW_CALL_FAILED:
                return "AtomicOperation.slowCallFailed(" + o.slot() + "L, " + o.trialVersion() + "L)";
            case FORCE_MODE:
                return "AtomicOperation.forceMode(BreakerMode." + o.mode().name() + ")";
            case OUTCOMES:
                StringBuilder sb = new StringBuilder("AtomicOperation.outcomes(new long[] {");
                for (int i = 0; i < o.outcomeCount(); i++) {
                    sb.append(i == 0 ? "" : ", ").append("AtomicOperation.packOutcome(").append(o.outcomeSucceeded(i))
                            .append(", ").append(o.outcomeSlow(i)).append(", ").append(now(o.outcomeAt(i)))
                            .append(")");
                }
                return sb.append("}, ").append(o.outcomeCount()).append(", null)").toString();
            default:
                return "AtomicOperation.force(BreakerStatus." + o.target() + ")";
        }
    }

    /**
     * Runs the call on {@code store} under the store's name for the key: a {@link StateChange}, an
     * {@code Optional} (get, claimTrial) or {@code null} (put, delete, releaseTrial). Exceptions propagate.
     */
    Object invoke(Store store, String keyName) {
        if (op.atomic()) {
            return cap(store, AtomicUpdates.class).apply(keyName, operation(), policy, now);
        }
        switch (op) {
            case PUT:
                store.put(keyName, state, PUT_TTL);
                return null;
            case DELETE:
                store.delete(keyName);
                return null;
            case GET:
                return store.get(keyName);
            case CLAIM:
                return cap(store, TrialClaims.class).claimTrial(keyName, permits, ttl);
            case RELEASE:
                cap(store, TrialClaims.class).releaseTrial(keyName, token);
                return null;
            case CLAIM_TABLE:
                return ClaimTable.read(cap(store, TrialClaims.class), keyName, tokens);
            default:
                throw new AssertionError(op);
        }
    }

    /**
     * What {@link Transitions} says an atomic call does to {@code prev}. Dispatched here on purpose, not through
     * {@link dev.redeye.spi.AtomicOperation#apply}: the stores under test dispatch through that, and an oracle
     * sharing it would agree with a wrong mapping instead of catching it.
     */
    StateChange expected(BreakerState prev) {
        switch (op) {
            case RECORD_FAILURE:
                return Transitions.recordFailure(prev, policy, now);
            case RECORD_SUCCESS:
                return Transitions.recordSuccess(prev, policy, now);
            case RECORD_OUTCOME:
                return Transitions.recordOutcome(prev, success, policy, now);
            case TRIAL_SUCCEEDED:
                return Transitions.trialSucceeded(prev, trialVersion, policy, now);
            case TRIAL_FAILED:
                return Transitions.trialFailed(prev, trialVersion, policy, now);
            case FORCE:
                return Transitions.force(prev, status, policy, now);
            case SLOW_OUTCOME:
                return Transitions.recordOutcome(prev, success, true, policy, now);
            case SLOW_CALL:
                return Transitions.slowCall(prev, policy, now);
            case SLOW_CALL_FAILED:
                return Transitions.slowCallFailed(prev, slot, trialVersion, policy, now);
            case FORCE_MODE:
                return Transitions.forceMode(prev, mode, policy, now);
            case RECORD_BATCH:
                return oneByOne(prev);
            default:
                throw new IllegalStateException(op + " is not an atomic operation");
        }
    }

    /**
     * A batch's outcomes applied one by one: from the state before the first to the state after the last, with the
     * first transition (see {@link AtomicOperation#outcomes}).
     */
    private StateChange oneByOne(BreakerState prev) {
        BreakerState s = prev;
        BreakerState before = null;
        dev.redeye.api.TransitionKind first = null;
        for (long o : batch) {
            StateChange c = Transitions.recordOutcome(s, (o & 1L) == 0, (o & 2L) != 0, policy, o >> 2);
            before = before == null ? c.previous() : before;
            first = first == null ? c.transition() : first;
            s = c.state();
        }
        return new StateChange(before, s, first);
    }

    /**
     * The call as a Java statement a store author can paste into a test: {@code client} names the store
     * variable, {@code keyVar} and {@code policyVar} the key and policy variables, {@code tokens} names the
     * variable holding a token returned by an earlier claim (or returns {@code null} for a token never
     * issued, printed as a literal). The capability helpers {@code up} and {@code claims} stand for
     * {@code s.capability(X.class).orElseThrow()}.
     */
    String java(String client, String keyVar, String policyVar, Function<String, String> tokens) {
        if (op.atomic()) {
            return "up(" + client + ").apply(" + keyVar + ", " + java(operation()) + ", " + policyVar + ", "
                    + now(now) + ")";
        }
        switch (op) {
            case PUT:
                return client + ".put(" + keyVar + ", " + States.java(state) + ", Duration.ofHours(1))";
            case DELETE:
                return client + ".delete(" + keyVar + ")";
            case GET:
                return client + ".get(" + keyVar + ")";
            case CLAIM:
                return "claims(" + client + ").claimTrial(" + keyVar + ", " + permits + ", Duration.ofMillis("
                        + ttl.toMillis() + "))";
            case RELEASE:
                String var = tokens.apply(token);
                return "claims(" + client + ").releaseTrial(" + keyVar + ", "
                        + (var != null ? var : literal(token)) + ")";
            case CLAIM_TABLE:
                return "/* the live claims of " + keyVar + " on " + client + ": claims of 1, 2, ... permits count "
                        + "them, then each issued token is released and they are counted again */ claimTable(" + client
                        + ", " + keyVar + ")";
            default:
                throw new AssertionError(op);
        }
    }

    private static String now(long now) {
        long d = now - TckSupport.T0;
        return d >= 0 ? "T0 + " + d : "T0 - " + (-d);
    }

    /** A string as a Java literal. */
    static String literal(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                default:
                    if (c < 0x20 || c > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }

    private static <C> C cap(Store s, Class<C> type) {
        return s.capability(type).orElseThrow(() -> new IllegalStateException("the store does not declare "
                + type.getSimpleName() + ", but a model step called it"));
    }
}

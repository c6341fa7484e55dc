package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.spi.AtomicOperation;
import java.io.IOException;
import java.util.Map;

/**
 * Native mode's atomic state change: decodes the entry, applies one {@link AtomicOperation} (a
 * {@code Transitions} rule, through {@link Updates#change}) and writes the result, all on the member owning the
 * key, under Hazelcast's per-key lock. Returns the change encoded by {@link StateValues#result} (or an error for
 * malformed data, which is left untouched).
 *
 * <p>An absent, deleted or expired state starts a new life at {@code max(cluster clock in µs, last version + 1)},
 * so versions never go backwards. A changed state is written with {@link Policy#stateTtlMillis()} as its expiry
 * (refreshed on every write), a pinned one ({@code BreakerState.pinned()}: forced, or a stored mode) without; the key's claims stay, except for an operation that removes
 * them ({@code removesClaims}, as the client's {@link AtomicOperation#removesClaims()} says), which removes them
 * in the same write; a change that changes nothing writes nothing.
 *
 * <p>Under a quorum ({@link Policy#quorumOn()}) the policy's {@code quorum} and {@code quorumFraction} and the
 * operation's {@link AtomicOperation#instance() instance} travel with it, so the member counts the outcome for that
 * instance, as the client's rule would.
 *
 * <p>A batch of outcomes ({@link AtomicOperation.Kind#OUTCOMES}, {@link dev.redeye.spi.OutcomeBatches}) carries
 * its outcomes in order, each packed with its own instant ({@link AtomicOperation#packOutcome}), and its instance;
 * the member folds them in this one processor ({@link AtomicOperation#apply}), so the batch is one write under the
 * key's lock. Its fields are in wire version 5: a member of an earlier wire version refuses every processor of
 * this one ({@link MemberProcessor#WIRE}), so it never reads a batch with a layout it does not know.
 */
final class StateProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private AtomicOperation op;
    private boolean removesClaims;
    private long now;
    private Policy policy;

    /** For {@link RedeyeSerializableFactory}. */
    StateProcessor() {
    }

    StateProcessor(AtomicOperation op, Policy policy, long now) {
        this.op = op;
        this.removesClaims = op.removesClaims();
        this.policy = policy;
        this.now = now;
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        return update(entry,
                (current, clock) -> Updates.change(entry.getKey(), current, op, removesClaims, policy, now, clock),
                StateValues::result);
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.STATE;
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeInt(op.kind().code()); // AtomicOperation.Kind's stable codes
        out.writeLong(now);
        out.writeLong(op.trialVersion());
        out.writeLong(op.slot());
        out.writeString(op.instance()); // null: an outcome attributed to no instance, or another rule
        int count = op.outcomeCount(); // 0 for every rule but a batch
        out.writeInt(count);
        for (int i = 0; i < count; i++) {
            out.writeLong(AtomicOperation.packOutcome(op.outcomeSucceeded(i), op.outcomeSlow(i), op.outcomeAt(i)));
        }
        out.writeBoolean(removesClaims);
        writePolicy(out, policy);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        try {
            AtomicOperation.Kind kind = AtomicOperation.Kind.fromCode(in.readInt());
            now = in.readLong();
            long trialVersion = in.readLong();
            long slot = in.readLong();
            String instance = in.readString();
            int count = in.readInt();
            if (kind == AtomicOperation.Kind.OUTCOMES) {
                op = batch(in, count, instance);
            } else if (count != 0) {
                throw new IllegalArgumentException(kind.wireName() + " carries " + count + " outcomes");
            } else {
                op = instance == null ? AtomicOperation.of(kind, trialVersion, slot) : attributed(kind, instance);
            }
            removesClaims = in.readBoolean();
            policy = readPolicy(in);
        } catch (IllegalArgumentException e) {
            throw new IOException("redeye-store-hazelcast: malformed state processor: " + e.getMessage(), e);
        }
    }

    /**
     * The outcome of rule {@code kind} attributed to {@code instance} ({@link AtomicOperation#outcome(boolean,
     * boolean, String)}).
     *
     * @throws IllegalArgumentException if {@code kind} is not an outcome, or {@code instance} is not a valid id
     */
    private static AtomicOperation attributed(AtomicOperation.Kind kind, String instance) {
        switch (kind) {
            case SUCCESS:
                return AtomicOperation.outcome(true, false, instance);
            case FAILURE:
                return AtomicOperation.outcome(false, false, instance);
            case SLOW_SUCCESS:
                return AtomicOperation.outcome(true, true, instance);
            case SLOW_FAILURE:
                return AtomicOperation.outcome(false, true, instance);
            default:
                throw new IllegalArgumentException(kind.wireName() + " is attributed to no instance");
        }
    }

    /**
     * A batch of {@code count} packed outcomes read from {@code in}, attributed to {@code instance} (or none).
     *
     * @throws IllegalArgumentException if {@code count} is not 1 to {@link AtomicOperation#MAX_BATCH}, or
     *                                  {@code instance} is not a valid id
     */
    private static AtomicOperation batch(ObjectDataInput in, int count, String instance) throws IOException {
        if (count < 1 || count > AtomicOperation.MAX_BATCH) { // checked before allocating what the count says
            throw new IllegalArgumentException("a batch of " + count + " outcomes (1 to " + AtomicOperation.MAX_BATCH
                    + ")");
        }
        long[] packed = new long[count];
        for (int i = 0; i < count; i++) {
            packed[i] = in.readLong();
        }
        return AtomicOperation.outcomes(packed, count, instance);
    }

    /** Every field of a policy, by explicit code and in a fixed order. */
    static void writePolicy(ObjectDataOutput out, Policy p) throws IOException {
        out.writeInt(p.strategy().code());
        out.writeInt(p.failureThreshold());
        out.writeLong(p.maxGapBetweenFailuresMillis());
        out.writeDouble(p.errorRateThreshold());
        out.writeInt(p.minimumCalls());
        out.writeDouble(p.errorRateDecay());
        out.writeInt(p.successThreshold());
        out.writeLong(p.resetTimeoutMillis());
        out.writeDouble(p.backoffMultiplier());
        out.writeLong(p.maxResetTimeoutMillis());
        out.writeDouble(p.jitter());
        out.writeLong(p.stateTtlMillis());
        out.writeDouble(p.failureRateThreshold());
        out.writeInt(p.minimumNumberOfCalls());
        out.writeDouble(p.slowCallRateThreshold());
        out.writeInt(p.slidingWindowType().code());
        out.writeInt(p.slidingWindowSize());
        out.writeInt(p.mode().code());
        out.writeInt(p.quorum());
        out.writeDouble(p.quorumFraction());
    }

    /** Reads what {@link #writePolicy} wrote; the policy validates itself. */
    static Policy readPolicy(ObjectDataInput in) throws IOException {
        int strategy = in.readInt();
        Strategy s = null;
        for (Strategy candidate : Strategy.values()) {
            if (candidate.code() == strategy) {
                s = candidate;
            }
        }
        if (s == null) {
            throw new IllegalArgumentException("unknown strategy code " + strategy);
        }
        int failureThreshold = in.readInt();
        long maxGap = in.readLong();
        double errorRateThreshold = in.readDouble();
        int minimumCalls = in.readInt();
        double errorRateDecay = in.readDouble();
        int successThreshold = in.readInt();
        long resetTimeout = in.readLong();
        double backoffMultiplier = in.readDouble();
        long maxResetTimeout = in.readLong();
        double jitter = in.readDouble();
        long stateTtl = in.readLong();
        double failureRateThreshold = in.readDouble();
        int minimumNumberOfCalls = in.readInt();
        double slowCallRateThreshold = in.readDouble();
        SlidingWindowType windowType = SlidingWindowType.fromCode(in.readInt());
        int windowSize = in.readInt();
        BreakerMode mode = BreakerMode.fromCode(in.readInt());
        int quorum = in.readInt();
        double quorumFraction = in.readDouble();
        return new Policy(s, failureThreshold, maxGap, errorRateThreshold, minimumCalls, errorRateDecay,
                successThreshold, resetTimeout, backoffMultiplier, maxResetTimeout, jitter, stateTtl,
                failureRateThreshold, minimumNumberOfCalls, slowCallRateThreshold, windowType, windowSize, mode,
                quorum, quorumFraction);
    }

    /** The operation this processor applies (tests read it back after a serialization round trip). */
    AtomicOperation operation() {
        return op;
    }

    /** The policy this processor applies. */
    Policy policy() {
        return policy;
    }

    /** The caller's {@code now}. */
    long now() {
        return now;
    }
}

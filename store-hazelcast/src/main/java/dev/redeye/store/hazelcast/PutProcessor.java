package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Contribution;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Native mode's {@code put}: writes the given state (its window, mode and contributions included) with the given
 * ttl (none if pinned: forced, or a stored mode) and keeps the key's trial claims, which share its entry
 * ({@link Updates#put}). Malformed data under the key is overwritten (a put is last-writer-wins). Not a
 * transition: the value carries no {@code kind}, so the feed never sees it.
 */
final class PutProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private BreakerState state;
    private long ttlMillis;

    /** For {@link RedeyeSerializableFactory}. */
    PutProcessor() {
    }

    PutProcessor(BreakerState state, long ttlMillis) {
        this.state = state;
        this.ttlMillis = ttlMillis;
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        long clock = clusterMillis();
        write(entry, Updates.put(decodeOrNothing(entry), state, ttlMillis, clock), clock);
        return "1";
    }

    /** The entry's value, or nothing for malformed data, which the put overwrites. */
    private static StoredValue decodeOrNothing(Map.Entry<String, Object> entry) {
        try {
            return decode(entry);
        } catch (StoreException malformed) {
            return StoredValue.NOTHING;
        }
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.PUT;
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeInt(state.failures());
        out.writeLong(state.lastFailureAt());
        out.writeBoolean(state.open());
        out.writeLong(state.openedAt());
        out.writeInt(state.openCount());
        out.writeDouble(state.errorRate());
        out.writeLong(state.samples());
        out.writeInt(state.trialSuccesses());
        out.writeBoolean(state.forced());
        out.writeString(state.window() == null ? null : state.window().encode());
        out.writeInt(state.mode().code());
        out.writeString(state.contributors().isEmpty() ? null : Contribution.encodeAll(state.contributors()));
        out.writeLong(state.version());
        out.writeLong(ttlMillis);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        try {
            int failures = in.readInt();
            long lastFailureAt = in.readLong();
            boolean open = in.readBoolean();
            long openedAt = in.readLong();
            int openCount = in.readInt();
            double errorRate = in.readDouble();
            long samples = in.readLong();
            int trialSuccesses = in.readInt();
            boolean forced = in.readBoolean();
            String window = in.readString();
            BreakerMode mode = BreakerMode.fromCode(in.readInt());
            String contributors = in.readString();
            state = new BreakerState(failures, lastFailureAt, open, openedAt, openCount, errorRate, samples,
                    trialSuccesses, forced, window == null ? null : SlidingWindow.decode(window), mode,
                    contributors == null ? List.of() : Contribution.decodeAll(contributors), in.readLong());
        } catch (IllegalArgumentException e) {
            throw new IOException("redeye-store-hazelcast: malformed put processor: " + e.getMessage(), e);
        }
        ttlMillis = in.readLong();
    }

    /** The state this processor writes (tests read it back after a serialization round trip). */
    BreakerState state() {
        return state;
    }
}

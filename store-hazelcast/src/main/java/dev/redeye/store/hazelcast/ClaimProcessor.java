package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import java.io.IOException;
import java.util.Map;

/**
 * Native mode's trial claims, held in the operation's own entry next to its state, on the member owning it: a
 * claim adds its token when fewer than {@code permits} claims are live by the cluster clock; a release removes
 * exactly its own token (compare-and-delete). Both leave the state as it is ({@link Updates#claim},
 * {@link Updates#release}). Returns {@code "1"} when it claimed or released, {@code "0"} when not, or an error
 * for a malformed entry.
 */
final class ClaimProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private boolean claim;
    private String token;
    private int permits;
    private long ttlMillis;

    /** For {@link RedeyeSerializableFactory}. */
    ClaimProcessor() {
    }

    private ClaimProcessor(boolean claim, String token, int permits, long ttlMillis) {
        this.claim = claim;
        this.token = token;
        this.permits = permits;
        this.ttlMillis = ttlMillis;
    }

    static ClaimProcessor claim(String token, int permits, long ttlMillis) {
        return new ClaimProcessor(true, token, permits, ttlMillis);
    }

    static ClaimProcessor release(String token) {
        return new ClaimProcessor(false, token, 0, 0L);
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        return update(entry, (current, clock) -> claim ? Updates.claim(current, token, permits, ttlMillis, clock)
                : Updates.release(current, token, clock), done -> done ? "1" : "0");
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.CLAIM;
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeBoolean(claim);
        out.writeString(token);
        out.writeInt(permits);
        out.writeLong(ttlMillis);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        claim = in.readBoolean();
        token = in.readString();
        permits = in.readInt();
        ttlMillis = in.readLong();
    }
}

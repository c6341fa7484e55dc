package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.util.Map;

/**
 * Native mode's trial claims, on the member owning the operation's claims entry: a claim adds its token when
 * fewer than {@code permits} claims are live by the cluster clock; a release removes exactly its own token
 * (compare-and-delete). Returns {@code "1"} when it claimed or released, {@code "0"} when not, or an error for a
 * malformed entry.
 *
 * <p>A claim sets the entry's ttl to the latest expiry of its claims (garbage collection; liveness is judged
 * by each claim's own expiry). A release that leaves claims keeps the entry's expiry as it is
 * ({@link #KEEP_EXPIRY}): the remaining claims may outlive the released one.
 */
final class ClaimProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private boolean claim;
    private String token;
    private int permits;
    private long ttlMillis;

    /** For Hazelcast's deserialization on the member. */
    public ClaimProcessor() {
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
        Map<String, Long> claims;
        try {
            claims = ClaimValues.parse(entry.getValue(), StateValues.where(entry.getKey()));
        } catch (StoreException e) {
            return StateValues.error(e.getMessage());
        }
        long now = clusterMillis();
        if (claim) {
            if (!ClaimValues.tryAdd(claims, permits, token, now, ttlMillis)) {
                return "0";
            }
            write(entry, ClaimValues.encode(claims), ClaimValues.latestExpiry(claims) - now);
            return "1";
        }
        if (claims.remove(token) == null) {
            return "0";
        }
        ClaimValues.prune(claims, now);
        write(entry, ClaimValues.encode(claims), KEEP_EXPIRY);
        return "1";
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

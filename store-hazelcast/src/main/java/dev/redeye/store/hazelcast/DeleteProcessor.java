package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.util.Map;

/**
 * Native mode's delete: replaces the state by a tombstone holding its version (kept for the tombstone ttl), so
 * that the key's next life starts above it even if clocks disagree, and removes the key's trial claims in the
 * same write ({@link Updates#delete}); removes malformed data outright; leaves an absent key alone.
 */
final class DeleteProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private long tombstoneTtlMillis;

    /** For {@link RedeyeSerializableFactory}. */
    DeleteProcessor() {
    }

    DeleteProcessor(long tombstoneTtlMillis) {
        this.tombstoneTtlMillis = tombstoneTtlMillis;
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        StoredValue current;
        try {
            current = decode(entry);
        } catch (StoreException malformed) {
            write(entry, (String) null, NO_EXPIRY);
            return "1";
        }
        long clock = clusterMillis();
        Updates.Update<Void> u = Updates.delete(current, tombstoneTtlMillis, clock);
        write(entry, u, clock);
        return u.next == null ? "0" : "1";
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.DELETE;
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeLong(tombstoneTtlMillis);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        tombstoneTtlMillis = in.readLong();
    }
}

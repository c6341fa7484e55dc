package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.util.Map;

/**
 * Native mode's delete of a state: replaces a live state by a tombstone holding its version (with its own
 * ttl), so that the key's next life starts above it even if clocks disagree; removes malformed data outright;
 * leaves an absent key or an existing tombstone alone.
 */
final class DeleteProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    private long tombstoneTtlMillis;

    /** For Hazelcast's deserialization on the member. */
    public DeleteProcessor() {
    }

    DeleteProcessor(long tombstoneTtlMillis) {
        this.tombstoneTtlMillis = tombstoneTtlMillis;
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        String tombstone;
        try {
            tombstone = tombstoneFor(StateValues.decode(entry.getValue(), StateValues.where(entry.getKey())));
        } catch (StoreException malformed) {
            write(entry, null, NO_EXPIRY);
            return "1";
        }
        if (tombstone == null) {
            return "0";
        }
        write(entry, tombstone, tombstoneTtlMillis);
        return "1";
    }

    /** The tombstone that replaces a decoded value, or null when there is nothing to replace. */
    static String tombstoneFor(StateValues.Decoded d) {
        return d.isLive() ? StateValues.tombstone(Math.max(d.state.version(), 0L)) : null;
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

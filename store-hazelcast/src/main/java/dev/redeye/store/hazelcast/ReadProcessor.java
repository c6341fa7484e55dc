package dev.redeye.store.hazelcast;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import dev.redeye.api.StoreException;
import java.util.Map;

/**
 * Native mode's read: the entry's value if its state is live by the cluster clock, the clock every native write
 * judges and stores expiries by, so that a read and the next write agree on whether a state expired whatever
 * the client's own clock says; null for no state, an expired one or a tombstone. Writes nothing (so the backups
 * run nothing). Malformed data is reported as the other processors report it.
 */
final class ReadProcessor extends MemberProcessor {
    private static final long serialVersionUID = 1L;

    /** For {@link RedeyeSerializableFactory} and the store. */
    ReadProcessor() {
    }

    @Override
    String run(Map.Entry<String, Object> entry) {
        Object raw = entry.getValue();
        if (raw == null) {
            return null;
        }
        try {
            StoredValue v = StateValues.decode(raw, StateValues.where(entry.getKey()));
            return v.live(clusterMillis()) == null ? null : (String) raw;
        } catch (StoreException malformed) {
            return "E" + malformed.getMessage();
        }
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.READ;
    }

    @Override
    void writeFields(ObjectDataOutput out) {
    }

    @Override
    void readFields(ObjectDataInput in) {
    }
}

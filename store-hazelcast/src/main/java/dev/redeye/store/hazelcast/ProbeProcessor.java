package dev.redeye.store.hazelcast;

import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import java.io.IOException;
import java.util.Map;

/**
 * Asks one member which redeye processors it can run: read-only (no write, no backup, no lock held longer
 * than a read). A member without this module on its class path fails to deserialize it, which is how
 * {@link HazelcastStore} detects a bare member. Returns {@code "redeye-probe wire=<n> format=<n>"}.
 *
 * <p>It deliberately carries no wire version of its own (it has no fields), so that a member of any redeye
 * version can answer with the versions it speaks.
 */
final class ProbeProcessor implements EntryProcessor<String, Object, String>, ReadOnly, DataSerializable {
    private static final long serialVersionUID = 1L;

    /** What a member running this version of redeye answers. */
    static final String ANSWER = "redeye-probe wire=" + MemberProcessor.WIRE + " format=" + StateValues.FORMAT;

    /** For Hazelcast's deserialization on the member. */
    public ProbeProcessor() {
    }

    @Override
    public String process(Map.Entry<String, Object> entry) {
        return ANSWER;
    }

    @Override
    public EntryProcessor<String, Object, String> getBackupProcessor() {
        return null;
    }

    @Override
    public void writeData(ObjectDataOutput out) {
    }

    @Override
    public void readData(ObjectDataInput in) {
    }
}

package dev.redeye.store.hazelcast;

import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import dev.redeye.api.AtomicOperation;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
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

    /**
     * Runs what the real processors run (a rule of {@code Transitions}, the value and reply codecs) on a state
     * of its own, so that a member missing any class they need (redeye-api, say) fails here, at open, rather
     * than on the first call.
     */
    @Override
    public String process(Map.Entry<String, Object> entry) {
        StateChange c = AtomicOperation.failure().apply(BreakerState.INITIAL, Policy.defaults(), 1L);
        StateValues.decode(StateValues.written(c, c.toEvent("probe", Policy.defaults(), 1L)), "probe");
        ClaimValues.parse(ClaimValues.PREFIX, "probe");
        return StateValues.readResult(StateValues.result(c), "probe").isTransition() ? "?" : ANSWER;
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

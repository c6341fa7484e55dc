package dev.redeye.store.hazelcast;

import com.hazelcast.core.ReadOnly;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import java.util.Map;

/**
 * Asks one member which redeye processors it can run: read-only (no write, no backup, no lock held longer
 * than a read). A member without this module on its class path, or without {@link RedeyeSerializableFactory}
 * registered, fails to deserialize it, which is how {@link HazelcastStore} detects a member that cannot run
 * native mode. Returns {@code "redeye-probe wire=<n> format=<n>"}.
 *
 * <p>It deliberately carries no wire version of its own (it has no fields, and its class id never changes), so
 * that a member of any redeye version can answer with the versions it speaks.
 */
final class ProbeProcessor implements EntryProcessor<String, Object, String>, ReadOnly, IdentifiedDataSerializable {
    private static final long serialVersionUID = 1L;

    /** What a member running this version of redeye answers. */
    static final String ANSWER = "redeye-probe wire=" + MemberProcessor.WIRE + " format=" + StateValues.FORMAT;

    /** For {@link RedeyeSerializableFactory}. */
    ProbeProcessor() {
    }

    /**
     * Runs what the real processors run (a rule of {@code Transitions} folded over a batch of outcomes, the value
     * and reply codecs) on a state of its own, so that a member missing any class they need (redeye-api, say) fails
     * here, at open, rather than on the first call.
     */
    @Override
    public String process(Map.Entry<String, Object> entry) {
        long clock = 1_000L;
        Updates.Update<Boolean> claimed = Updates.claim(StoredValue.NOTHING, "probe", 1, 1_000L, clock);
        AtomicOperation batch = AtomicOperation.outcomes(new long[] {AtomicOperation.packOutcome(false, false, 1L),
            AtomicOperation.packOutcome(true, true, 2L)}, 2, null);
        Updates.Update<StateChange> u = Updates.change("probe", claimed.next, batch, batch.removesClaims(),
                Policy.defaults(), 2L, clock);
        StoredValue read = StateValues.decode(StateValues.encode(u.next), "probe");
        boolean sound = claimed.answer && read.claims.containsKey("probe")
                && !StateValues.readResult(StateValues.result(u.answer), "probe").isTransition();
        return sound ? ANSWER : "?";
    }

    @Override
    public int getFactoryId() {
        return RedeyeSerializableFactory.FACTORY_ID;
    }

    @Override
    public int getClassId() {
        return RedeyeSerializableFactory.PROBE;
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

package dev.redeye.store.hazelcast;

import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.partition.Partition;
import dev.redeye.api.OperationNames;
import dev.redeye.api.StoreException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Finds out whether the members can run redeye's entry processors: {@link #whyNotNative} at open, and
 * {@link #cannotRunProcessors} on a call that failed.
 */
final class MemberProbe {
    /** Partition-owner lookups the probe makes at most to find one key per member (271 partitions by default). */
    private static final int MAX_CANDIDATE_KEYS = 20_000;

    private MemberProbe() {
    }

    /**
     * Runs {@link ProbeProcessor} once on every data member (a key it owns).
     *
     * @return null if every member runs redeye's processors in this wire version, else why not
     * @throws StoreException if a member cannot be asked at all (the cluster is unreachable)
     */
    static String whyNotNative(HazelcastInstance hz, IMap<String, Object> states) {
        Map<Member, String> keys;
        try {
            keys = oneKeyPerMember(hz);
        } catch (RuntimeException e) {
            throw new StoreException("cannot read the member list of the Hazelcast cluster: " + e, e);
        }
        if (keys.isEmpty()) { // no partition table yet: ask whichever member owns one key
            return ask(states, "redeye-probe-0", "the member owning 'redeye-probe-0'");
        }
        for (Map.Entry<Member, String> k : keys.entrySet()) {
            String why = ask(states, k.getValue(), "member " + k.getKey().getAddress());
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    /** Probes the member owning {@code key}: null if it runs this version's processors, else why not. */
    private static String ask(IMap<String, Object> states, String key, String who) {
        String answer;
        try {
            answer = states.executeOnKey(key, new ProbeProcessor());
        } catch (RuntimeException e) {
            String cannot = cannotRunProcessors(e);
            if (cannot != null) {
                return who + " " + cannot;
            }
            throw new StoreException("cannot reach the Hazelcast cluster to probe map '" + states.getName() + "': "
                    + e, e);
        }
        if (!ProbeProcessor.ANSWER.equals(answer)) {
            return who + " runs another redeye-store-hazelcast version ('" + answer + "', this client speaks '"
                    + ProbeProcessor.ANSWER + "')";
        }
        return null;
    }

    /** One key owned by each data member; empty when the partition table is not known yet. */
    private static Map<Member, String> oneKeyPerMember(HazelcastInstance hz) {
        int members = 0;
        for (Member m : hz.getCluster().getMembers()) {
            if (!m.isLiteMember()) {
                members++;
            }
        }
        Map<Member, String> keys = new LinkedHashMap<>();
        for (int i = 0; i < MAX_CANDIDATE_KEYS && keys.size() < members; i++) {
            String key = "redeye-probe-" + i;
            Partition p = hz.getPartitionService().getPartition(key);
            Member owner = p == null ? null : p.getOwner();
            if (owner != null) {
                keys.putIfAbsent(owner, key);
            }
        }
        return keys;
    }

    /**
     * Why a failed call shows that a member cannot run redeye's processors (it cannot load their classes, has no
     * {@link RedeyeSerializableFactory}, or refuses their wire version), or null when the failure is something
     * else.
     */
    static String cannotRunProcessors(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ClassNotFoundException || t instanceof NoClassDefFoundError) {
                return "cannot load redeye's entry processors (" + t.getMessage() + ")";
            }
            String m = String.valueOf(t.getMessage());
            if (m.contains("ClassNotFoundException") || m.contains("NoClassDefFoundError")) {
                return "cannot load redeye's entry processors (" + OperationNames.abbreviate(m, 200) + ")";
            }
            if (m.contains("redeye-store-hazelcast: a client sent")) {
                return "runs another redeye-store-hazelcast wire version (" + OperationNames.abbreviate(m, 200) + ")";
            }
            if (m.contains("No DataSerializerFactory registered for namespace: " + RedeyeSerializableFactory.FACTORY_ID)) {
                return "has no " + RedeyeSerializableFactory.class.getName() + " registered under factory id "
                        + RedeyeSerializableFactory.FACTORY_ID + " in its serialization configuration (needed for"
                        + " native mode)";
            }
            if (m.contains("on factory ID: " + RedeyeSerializableFactory.FACTORY_ID)) {
                return "runs another redeye-store-hazelcast version, whose factory does not know a processor ("
                        + OperationNames.abbreviate(m, 200) + ")";
            }
        }
        return null;
    }
}

package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The base of redeye's entry processors (native mode): they run on the member that owns the key, one network
 * hop per operation, and need this module and {@code redeye-api} on the member's class path.
 *
 * <p><b>Wire format.</b> Each processor is a {@link DataSerializable} (no factory to register on members; the
 * class name travels with it) that writes {@link #WIRE} first and then its own fields explicitly; Java
 * serialization is never used. A member that reads another wire version refuses the processor with a message
 * that says so (the client turns it into a {@code StoreException}); {@link HazelcastStore} probes members for
 * their version at open and uses CAS mode when they differ.
 *
 * <p><b>Backups.</b> Hazelcast runs an entry processor's {@link #getBackupProcessor()} on every backup replica.
 * The default (the processor itself) would run the rule again on the backup, with the backup member's clock
 * for a new life's version base or a claim's expiry; instead the primary hands the backup the exact value and
 * expiry it wrote ({@link BackupWrite}), and nothing when it wrote nothing.
 *
 * <p><b>Expiry.</b> {@link #write} takes the ttl explicitly: {@code ttl > 0} sets it (a state's ttl is
 * refreshed on every atomic write, contract v2 R1.11), {@link #NO_EXPIRY} stores the value without expiry
 * (forced states, R1.9 / R5.7), {@link #KEEP_EXPIRY} keeps the entry's current expiry: plain
 * {@code entry.setValue(v)} would reset it to the map's default, which is "never" unless the map is configured
 * with a time-to-live.
 */
abstract class MemberProcessor implements EntryProcessor<String, Object, String>, DataSerializable,
        HazelcastInstanceAware {
    private static final long serialVersionUID = 1L;

    /** The wire version of every processor's fields. */
    static final int WIRE = 1;
    /** A ttl that stores the value without expiry. */
    static final long NO_EXPIRY = 0L;
    /** A ttl that keeps the entry's current expiry. */
    static final long KEEP_EXPIRY = -2L;
    /**
     * Hazelcast keeps an entry's expiry time in whole seconds, truncated: an entry written with a ttl of T ms
     * expires between T - 1 s and T after the write (and at once for T below a second). Every ttl the store
     * sets gets this margin, so that no entry expires before its ttl; it may outlive it by up to a second.
     */
    static final long EXPIRY_MARGIN_MILLIS = 1_000L;

    private transient HazelcastInstance member;
    private transient boolean processed;
    private transient boolean wrote;
    private transient String writtenValue;
    private transient long writtenTtl;
    private transient BackupWrite backup;

    @Override
    public final void setHazelcastInstance(HazelcastInstance hazelcastInstance) {
        this.member = hazelcastInstance;
    }

    @Override
    public final String process(Map.Entry<String, Object> entry) {
        processed = true;
        return run(entry);
    }

    /** The processor's work on the primary replica; write through {@link #write}. */
    abstract String run(Map.Entry<String, Object> entry);

    /**
     * The cluster's clock in epoch ms (the master's clock, so every member agrees): used for a new life's
     * version base and for claim expiry, never for a breaker rule ({@code now} comes from the caller).
     */
    final long clusterMillis() {
        return member != null ? member.getCluster().getClusterTime() : System.currentTimeMillis();
    }

    /**
     * Writes {@code value} (null removes the entry) with the given ttl in ms: {@code > 0},
     * {@link #NO_EXPIRY} or {@link #KEEP_EXPIRY}.
     */
    final void write(Map.Entry<String, Object> entry, String value, long ttlMillis) {
        apply(entry, value, ttlMillis);
        wrote = true;
        writtenValue = value;
        writtenTtl = ttlMillis;
    }

    static void apply(Map.Entry<String, Object> entry, String value, long ttlMillis) {
        if (value == null) {
            entry.setValue(null);
        } else if (ttlMillis == KEEP_EXPIRY) {
            ((ExtendedMapEntry<String, Object>) entry).setValueWithoutChangingExpiryTime(value);
        } else {
            ((ExtendedMapEntry<String, Object>) entry).setValue(value, entryTtl(ttlMillis), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The ttl to hand Hazelcast for a wanted ttl: {@link #NO_EXPIRY} as it is, a positive ttl plus
     * {@link #EXPIRY_MARGIN_MILLIS}.
     */
    static long entryTtl(long ttlMillis) {
        if (ttlMillis <= 0) {
            return ttlMillis;
        }
        return ttlMillis > Long.MAX_VALUE - EXPIRY_MARGIN_MILLIS ? Long.MAX_VALUE : ttlMillis + EXPIRY_MARGIN_MILLIS;
    }

    /**
     * What the backups apply: exactly what the primary wrote, or nothing. Before {@link #process} ran (no
     * Hazelcast path does this for a non-offloaded processor) the processor itself, Hazelcast's default.
     */
    @Override
    public final EntryProcessor<String, Object, String> getBackupProcessor() {
        if (!processed) {
            return this;
        }
        if (!wrote) {
            return null;
        }
        if (backup == null) {
            backup = new BackupWrite(writtenValue, writtenTtl);
        }
        return backup;
    }

    @Override
    public final void writeData(ObjectDataOutput out) throws IOException {
        out.writeInt(WIRE);
        writeFields(out);
    }

    @Override
    public final void readData(ObjectDataInput in) throws IOException {
        int wire = in.readInt();
        if (wire != WIRE) {
            throw new IOException("redeye-store-hazelcast: a client sent " + getClass().getSimpleName()
                    + " in wire version " + wire + ", this member runs wire version " + WIRE
                    + ": put the same redeye-store-hazelcast version on members and clients, or open the store in"
                    + " CAS mode");
        }
        readFields(in);
    }

    abstract void writeFields(ObjectDataOutput out) throws IOException;

    abstract void readFields(ObjectDataInput in) throws IOException;

    /** The processor the backup replicas run: stores what the primary stored. */
    static final class BackupWrite implements EntryProcessor<String, Object, String>, DataSerializable {
        private static final long serialVersionUID = 1L;
        private String value;
        private long ttlMillis;

        /** For Hazelcast's deserialization. */
        public BackupWrite() {
        }

        BackupWrite(String value, long ttlMillis) {
            this.value = value;
            this.ttlMillis = ttlMillis;
        }

        @Override
        public String process(Map.Entry<String, Object> entry) {
            apply(entry, value, ttlMillis);
            return null;
        }

        @Override
        public EntryProcessor<String, Object, String> getBackupProcessor() {
            return null;
        }

        @Override
        public void writeData(ObjectDataOutput out) throws IOException {
            out.writeInt(WIRE);
            out.writeString(value);
            out.writeLong(ttlMillis);
        }

        @Override
        public void readData(ObjectDataInput in) throws IOException {
            int wire = in.readInt();
            if (wire != WIRE) {
                throw new IOException("redeye-store-hazelcast: backup write in wire version " + wire
                        + ", this member runs wire version " + WIRE + ": run one version on every member");
            }
            value = in.readString();
            ttlMillis = in.readLong();
        }
    }
}

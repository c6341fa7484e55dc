package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;
import dev.redeye.api.StoreException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The base of redeye's entry processors (native mode): they run on the member that owns the key, one network
 * hop per operation, and need this module and {@code redeye-api} on the member's class path and
 * {@link RedeyeSerializableFactory} registered in its serialization config.
 *
 * <p><b>Wire format.</b> Each processor is an {@link IdentifiedDataSerializable} of
 * {@link RedeyeSerializableFactory}: the stream carries the factory id and a class id, never a class name, and the
 * member creates the object through the factory, without reflection. It writes {@link #WIRE} first and then its
 * own fields explicitly; Java serialization is never used. A member that reads another wire version refuses the
 * processor with a message that says so (the client turns it into a {@code StoreException}); a member without the
 * factory, or with one that does not know a class id, cannot read it at all: {@link HazelcastStore} probes
 * members at open and uses CAS mode in either case.
 *
 * <p><b>One step per call.</b> A processor decodes the entry ({@link StateValues}), computes the new value with
 * {@link Updates} (the code CAS mode runs on the client) and writes it with {@link #write}: the state, its
 * expiry and the key's trial claims change together, in one write under Hazelcast's per-key lock.
 *
 * <p><b>Backups.</b> Hazelcast runs an entry processor's {@link #getBackupProcessor()} on every backup replica.
 * The default (the processor itself) would run the rule again on the backup, with the backup member's clock
 * for a new life's version base or a claim's expiry; instead the primary hands the backup the exact value and
 * entry ttl it wrote ({@link BackupWrite}), and nothing when it wrote nothing.
 *
 * <p><b>Entry ttl.</b> What reads as expired is decided by the value ({@link StoredValue}); Hazelcast's entry ttl
 * only collects garbage, and is set in the same write as the value ({@code ExtendedMapEntry.setValue(value, ttl,
 * unit)}: plain {@code entry.setValue(v)} would reset it to the map's default).
 */
abstract class MemberProcessor implements EntryProcessor<String, Object, String>, IdentifiedDataSerializable,
        HazelcastInstanceAware {
    private static final long serialVersionUID = 1L;

    /**
     * The wire version of every processor's fields. Version 3 added a policy's sliding-window and mode fields, an
     * operation's slot and a put state's window and mode; version 4 a policy's {@code quorum} and
     * {@code quorumFraction}, an operation's instance and a put state's contributions; version 5 a state
     * processor's batch of outcomes (a count, 0 for every other rule, then each packed outcome). A member of any
     * other version refuses the processor ({@link #checkWire}), so no member runs a rule with fields it cannot read
     * left at defaults (a quorum read as none would open the fleet on one instance's failures) or reads a batch in
     * a layout it does not know.
     */
    static final int WIRE = 5;
    /** A Hazelcast ttl that stores the value without expiry. */
    static final long NO_EXPIRY = 0L;
    /**
     * Hazelcast keeps an entry's expiry time in whole seconds, truncated: an entry written with a ttl of T ms
     * expires between T - 1 s and T after the write (and at once for T below a second). Every ttl the store
     * sets gets this margin, so that no entry is collected before its value expired; it may outlive it by up to
     * a second.
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

    @Override
    public final int getFactoryId() {
        return RedeyeSerializableFactory.FACTORY_ID;
    }

    /**
     * The cluster's clock in epoch ms (the master's clock, so every member agrees): used for expiries and a new
     * life's version base, never for a breaker rule ({@code now} comes from the caller).
     */
    final long clusterMillis() {
        return member != null ? member.getCluster().getClusterTime() : System.currentTimeMillis();
    }

    /** The entry's value, decoded by {@link StateValues#decode}: a {@code StoreException} for malformed data. */
    static StoredValue decode(Map.Entry<String, Object> entry) {
        return StateValues.decode(entry.getValue(), StateValues.where(entry.getKey()));
    }

    /** What a processor computes from the entry's value at the cluster clock. */
    interface Change<T> {
        Updates.Update<T> apply(StoredValue current, long clockMillis);
    }

    /**
     * The work of a processor that leaves malformed data as it is and answers its error: decodes the entry,
     * applies {@code change} at the cluster clock, writes the result and answers what {@code answer} makes of
     * the update's answer.
     */
    final <T> String update(Map.Entry<String, Object> entry, Change<T> change, Function<T, String> answer) {
        StoredValue current;
        try {
            current = decode(entry);
        } catch (StoreException e) {
            return StateValues.error(e.getMessage());
        }
        long clock = clusterMillis();
        Updates.Update<T> u = change.apply(current, clock);
        write(entry, u, clock);
        return answer.apply(u.answer);
    }

    /** Writes what {@link Updates} computed, if anything; {@code clockMillis} is the clock it used. */
    final void write(Map.Entry<String, Object> entry, Updates.Update<?> update, long clockMillis) {
        if (update.next != null) {
            write(entry, StateValues.encode(update.next), entryTtl(update.next, clockMillis));
        }
    }

    /** Writes {@code value} (null removes the entry) with a Hazelcast ttl ({@link #NO_EXPIRY} for none). */
    final void write(Map.Entry<String, Object> entry, String value, long ttlMillis) {
        apply(entry, value, ttlMillis);
        wrote = true;
        writtenValue = value;
        writtenTtl = ttlMillis;
    }

    static void apply(Map.Entry<String, Object> entry, String value, long ttlMillis) {
        if (value == null) {
            entry.setValue(null);
        } else {
            ((ExtendedMapEntry<String, Object>) entry).setValue(value, ttlMillis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * The Hazelcast ttl for an entry holding {@code v}, written at {@code clockMillis}: {@link #NO_EXPIRY} while
     * anything in it must stay (a pinned state), else until {@link StoredValue#cleanUpAt()} plus
     * {@link #EXPIRY_MARGIN_MILLIS}.
     */
    static long entryTtl(StoredValue v, long clockMillis) {
        long at = v.cleanUpAt();
        if (at == StoredValue.NEVER) {
            return NO_EXPIRY;
        }
        long ttl = Math.max(1L, at - clockMillis);
        return ttl > Long.MAX_VALUE - EXPIRY_MARGIN_MILLIS ? NO_EXPIRY : ttl + EXPIRY_MARGIN_MILLIS;
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
        checkWire(in.readInt(), getClass().getSimpleName());
        readFields(in);
    }

    static void checkWire(int wire, String what) throws IOException {
        if (wire != WIRE) {
            throw new IOException("redeye-store-hazelcast: a client sent " + what + " in wire version " + wire
                    + ", this member runs wire version " + WIRE + ": put the same redeye-store-hazelcast version on"
                    + " members and clients, or open the store in CAS mode");
        }
    }

    abstract void writeFields(ObjectDataOutput out) throws IOException;

    abstract void readFields(ObjectDataInput in) throws IOException;

    /** The processor the backup replicas run: stores what the primary stored. */
    static final class BackupWrite implements EntryProcessor<String, Object, String>, IdentifiedDataSerializable {
        private static final long serialVersionUID = 1L;
        private String value;
        private long ttlMillis;

        /** For {@link RedeyeSerializableFactory}. */
        BackupWrite() {
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
        public int getFactoryId() {
            return RedeyeSerializableFactory.FACTORY_ID;
        }

        @Override
        public int getClassId() {
            return RedeyeSerializableFactory.BACKUP_WRITE;
        }

        @Override
        public void writeData(ObjectDataOutput out) throws IOException {
            out.writeInt(WIRE);
            out.writeString(value);
            out.writeLong(ttlMillis);
        }

        @Override
        public void readData(ObjectDataInput in) throws IOException {
            checkWire(in.readInt(), "a backup write");
            value = in.readString();
            ttlMillis = in.readLong();
        }
    }
}

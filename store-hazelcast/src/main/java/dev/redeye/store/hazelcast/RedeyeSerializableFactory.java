package dev.redeye.store.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.nio.serialization.DataSerializableFactory;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;
import java.util.Objects;

/**
 * Creates redeye's entry processors on a Hazelcast member, from the factory id and class id the stream carries
 * (they are {@link IdentifiedDataSerializable}: no class name travels and no reflection runs per object). Native
 * mode needs it registered on every member under {@link #FACTORY_ID}, with this module and {@code redeye-api} on
 * the member's class path; a member without it is detected when a store opens, which then runs in CAS mode.
 *
 * <p>In a member's XML configuration:
 *
 * <pre>{@code
 * <serialization>
 *   <data-serializable-factories>
 *     <data-serializable-factory factory-id="1919247481">dev.redeye.store.hazelcast.RedeyeSerializableFactory</data-serializable-factory>
 *   </data-serializable-factories>
 * </serialization>
 * }</pre>
 *
 * or, for a member started in code (an embedded member), {@link #register(Config)}. Clients need nothing: they
 * only send these objects.
 *
 * <p>The class ids below are part of the wire format: they never change meaning. Thread-safe and stateless.
 */
public final class RedeyeSerializableFactory implements DataSerializableFactory {
    /** The factory id of every redeye processor: {@code 0x72656479}, "redy" in ASCII. */
    public static final int FACTORY_ID = 0x72656479;

    static final int PROBE = 1;
    static final int STATE = 2;
    static final int CLAIM = 3;
    static final int DELETE = 4;
    static final int PUT = 5;
    static final int BACKUP_WRITE = 6;
    static final int READ = 7;

    /** Used by Hazelcast when the factory is named in a member's configuration. */
    public RedeyeSerializableFactory() {
    }

    /**
     * Registers this factory in a member's configuration, for native mode on that member.
     *
     * @return {@code config}
     * @throws NullPointerException     if {@code config} is null
     * @throws IllegalArgumentException if another factory is registered under {@link #FACTORY_ID}
     */
    public static Config register(Config config) {
        Objects.requireNonNull(config, "config");
        var serialization = config.getSerializationConfig();
        Object mine = serialization.getDataSerializableFactories().get(FACTORY_ID);
        String className = serialization.getDataSerializableFactoryClasses().get(FACTORY_ID);
        if ((mine != null && !(mine instanceof RedeyeSerializableFactory))
                || (className != null && !className.equals(RedeyeSerializableFactory.class.getName()))) {
            throw new IllegalArgumentException("the member configuration already has another data-serializable"
                    + " factory under id " + FACTORY_ID + " (" + (mine != null ? mine.getClass().getName() : className)
                    + "), the id redeye's entry processors use");
        }
        if (mine == null && className == null) {
            serialization.addDataSerializableFactory(FACTORY_ID, new RedeyeSerializableFactory());
        }
        return config;
    }

    /** A new, empty processor of that class id; null for an id this version does not know. */
    @Override
    public IdentifiedDataSerializable create(int classId) {
        switch (classId) {
            case PROBE:
                return new ProbeProcessor();
            case STATE:
                return new StateProcessor();
            case CLAIM:
                return new ClaimProcessor();
            case DELETE:
                return new DeleteProcessor();
            case PUT:
                return new PutProcessor();
            case BACKUP_WRITE:
                return new MemberProcessor.BackupWrite();
            case READ:
                return new ReadProcessor();
            default:
                return null;
        }
    }

    @Override
    public String toString() {
        return "RedeyeSerializableFactory[" + FACTORY_ID + "]";
    }
}

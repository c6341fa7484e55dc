package dev.redeye.store.hazelcast;

/**
 * The full redeye TCK in <b>CAS mode</b>, against a bare member: a separate JVM with only the Hazelcast jar on
 * its class path ({@link MemberJvm#bare()}), which cannot load any redeye class, so the store must detect that
 * at open and choose CAS mode.
 */
class HazelcastCasTckTest extends HazelcastTck {
    HazelcastCasTckTest() {
        super(SharedClusters::bare, HazelcastStore.Mode.CAS);
    }
}

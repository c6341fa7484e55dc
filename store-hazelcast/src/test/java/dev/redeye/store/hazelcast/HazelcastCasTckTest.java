package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;

/**
 * The full redeye TCK in <b>CAS mode</b>, against a bare member: a separate JVM with only the Hazelcast jar on
 * its class path ({@link MemberJvm#bare()}), which cannot load any redeye class, so the store must detect that
 * at open and choose CAS mode.
 */
class HazelcastCasTckTest extends HazelcastTck {

    @Override
    HazelcastInstance[] clients() {
        SharedClusters.Bare b = SharedClusters.bare();
        return new HazelcastInstance[] {b.clientA(), b.clientB()};
    }

    @Override
    HazelcastStore.Mode expectedMode() {
        return HazelcastStore.Mode.CAS;
    }
}

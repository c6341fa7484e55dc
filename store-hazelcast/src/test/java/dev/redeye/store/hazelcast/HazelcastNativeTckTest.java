package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;

/**
 * The full redeye TCK in <b>native mode</b>: two clients of a real 2-member Hazelcast cluster embedded in this
 * JVM, so the members carry redeye's entry processors.
 */
class HazelcastNativeTckTest extends HazelcastTck {

    @Override
    HazelcastInstance[] clients() {
        SharedClusters.Embedded e = SharedClusters.embedded();
        return new HazelcastInstance[] {e.clientA(), e.clientB()};
    }

    @Override
    HazelcastStore.Mode expectedMode() {
        return HazelcastStore.Mode.NATIVE;
    }
}

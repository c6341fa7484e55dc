package dev.redeye.store.hazelcast;

/**
 * The full redeye TCK in <b>native mode</b>: two clients of a real 2-member Hazelcast cluster embedded in this
 * JVM, so the members carry redeye's entry processors.
 */
class HazelcastNativeTckTest extends HazelcastTck {
    HazelcastNativeTckTest() {
        super(SharedClusters::embedded, HazelcastStore.Mode.NATIVE);
    }
}

package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import org.junit.jupiter.api.Test;

/** The Hazelcast fixture without a URL: a member in this JVM, clients sharing one map, clean-up. */
class HazelcastFixtureTest {

    @Test
    void clientsShareOneMapAndTheRoundTripWorks() {
        try (StoreFixture f = StoreFixture.hazelcast(null)) {
            Store a = f.open();
            Store b = f.open();
            a.capability(AtomicUpdates.class).orElseThrow().apply("op", AtomicOperation.failure(), Policy.defaults(), 1);
            assertEquals(1, b.get("op").orElseThrow().failures());
            try (StoreFixture.RoundTrip rt = f.roundTrip()) {
                rt.once();
                assertTrue(rt.describe().startsWith("IMap.get"));
            }
            try (StoreFixture.RoundTrip base = f.recordBaseline(a)) {
                base.once(); // the trivial processor ran on the member and answered
                assertTrue(base.describe().startsWith("executeOnKey"));
            }
            assertEquals(1, b.get("op").orElseThrow().failures(), "the baseline wrote nothing the store reads");
        }
    }
}

package dev.redeye.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;

/**
 * A batch of outcomes leaves the stored value byte for byte as its outcomes sent one at a time through the record
 * function leave it, and pinned exactly when they leave it pinned: a batch writes the layout of the releases before
 * batches (whose record and state functions are this release's, unchanged), so an instance of such a release,
 * which never sends a batch, reads and counts on a value a batch wrote as on its own. Random batches
 * ({@link ParityBatches}) under random policies of every strategy, the three modes and quorums (attributed to an
 * instance), a policy changing mid-sequence, operators' changes in between; each batch applied to one key, and
 * its outcomes one by one, each at its instant, to another key holding the same value.
 */
class RedisBatchLayoutTest extends WithRedisPrefix {
    private static final int SEQUENCES = 40;
    private static final int STEPS = 20;
    private static final long T0 = 1_764_800_000_000L;
    /** A state as the library writes it (the error rate in its '%.17g' form), stored under both keys first. */
    private static final String START = "0,0,0,0,0,0,0,0,0,1000";

    @ParameterizedTest
    @CsvSource({"AUTO, 21", "SCRIPTS, 22"})
    void aBatchWritesTheValueItsOutcomesOneByOneWrite(LuaRunner.Mode mode, long seed) {
        Random r = new Random(seed);
        try (RedisStore store = RedisStore.builder(RedisTestSupport.raw()).prefix(prefix).closeClient(true)
                .publishInScript(true).scripting(mode).build()) {
            for (int seq = 0; seq < SEQUENCES; seq++) {
                String batched = "batch-" + seq;
                String single = "single-" + seq;
                String a = store.stateKey(batched);
                String b = store.stateKey(single);
                raw.psetex(a, 600_000, START);
                raw.psetex(b, 600_000, START);
                boolean quorum = r.nextInt(3) == 0;
                Policy policy = policy(r, quorum);
                long now = T0;
                for (int step = 0; step < STEPS; step++) {
                    String at = "seed " + seed + ", sequence " + seq + ", step " + step;
                    now += r.nextInt(1_500);
                    if (r.nextInt(10) == 0) {
                        policy = policy(r, quorum);
                    }
                    if (r.nextInt(6) == 0) {
                        AtomicOperation forced = r.nextBoolean()
                                ? AtomicOperation.force(java.util.List.of(BreakerStatus.CLOSED, BreakerStatus.HALF_OPEN,
                                        BreakerStatus.FORCED_OPEN).get(r.nextInt(3)))
                                : AtomicOperation.forceMode(BreakerMode.values()[r.nextInt(4)]);
                        store.apply(batched, forced, policy, now);
                        store.apply(single, forced, policy, now);
                    } else {
                        AtomicOperation batch = ParityBatches.random(r, now, quorum ? "pod-" + r.nextInt(3) : null);
                        StateChange got = store.apply(batched, batch, policy, now);
                        for (int i = 0; i < batch.outcomeCount(); i++) {
                            boolean success = batch.outcomeSucceeded(i);
                            boolean slow = batch.outcomeSlow(i);
                            store.apply(single, batch.instance() == null ? AtomicOperation.outcome(success, slow)
                                    : AtomicOperation.outcome(success, slow, batch.instance()), policy,
                                    batch.outcomeAt(i));
                        }
                        at += ": " + batch + " under " + policy + ", " + got;
                    }
                    assertEquals(raw.get(b), raw.get(a), at + ": the value");
                    assertEquals(raw.pttl(b) == -1, raw.pttl(a) == -1, at + ": pinned alike");
                }
            }
        }
    }

    private static Policy policy(Random r, boolean quorum) {
        return quorum ? RedisQuorumParityTest.randomQuorumPolicy(r) : RedisWindowParityTest.randomPolicy(r);
    }
}

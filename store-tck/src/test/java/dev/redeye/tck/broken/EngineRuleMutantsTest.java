package dev.redeye.tck.broken;

import static dev.redeye.tck.Rule.R4_1;
import static dev.redeye.tck.Rule.R4_5;
import static dev.redeye.tck.Rule.R4_6;
import static dev.redeye.tck.Rule.R4_7;
import static dev.redeye.tck.Rule.R7_1;
import static dev.redeye.tck.Rule.R7_2;
import static dev.redeye.tck.Rule.R7_3;
import static dev.redeye.tck.Rule.R7_4;
import static dev.redeye.tck.Rule.R7_8;
import static dev.redeye.tck.Rule.R7_9;
import static dev.redeye.tck.Rule.R7_10;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The engine rules of contract v2 (R7.8 to R7.10) test themselves: for each, a store with one defect that the
 * rule exists to catch, over a correct in-memory backend, run through the TCK. The rule (and the store rule
 * naming the same defect, where there is one) must fail with its id and hint; the engine rules around it must
 * pass, so each failure is attributable to the one defect.
 */
class EngineRuleMutantsTest {

    private static TckReport run(Function<Store, Store> mutant, EnumSet<Rule> rules) {
        try (InMemoryStore backing = new InMemoryStore()) {
            return TckRunner.run(() -> mutant.apply(backing.newClient()), rules,
                    Map.of(TckRunner.PATIENCE_PARAMETER, "2000"));
        }
    }

    private static void check(Function<Store, Store> mutant, EnumSet<Rule> mustFail, EnumSet<Rule> mustPass) {
        EnumSet<Rule> rules = EnumSet.copyOf(mustFail);
        rules.addAll(mustPass);
        TckReport report = run(mutant, rules);
        for (Rule r : mustFail) {
            BrokenStoresTest.assertFails(report, r);
        }
        for (Rule r : mustPass) {
            BrokenStoresTest.assertPasses(report, r);
        }
        assertEquals(mustFail.size(), report.failed(), report.format());
    }

    /**
     * R7.8: a store that answers a refused claim by throwing ("no permit left" as an error). The engine takes
     * a throwing claim for a store error and falls back to a per-instance trial, so the loser runs a second
     * trial and writes its outcome instead of waiting at zero cost.
     */
    @Test
    void aRefusedClaimReportedAsAnErrorFailsR78() {
        check(inner -> new ForwardingStore(inner) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                Optional<String> token = super.claimTrial(key, permits, ttl);
                if (token.isEmpty()) {
                    throw new StoreException("no permit left for " + key);
                }
                return token;
            }
        }, EnumSet.of(R4_1, R7_2, R7_8), EnumSet.of(R7_1, R7_4, R7_9, R7_10));
    }

    /**
     * R7.9: a store whose trial outcomes ignore the version they were admitted under. With claims down each
     * breaker runs its own trial of the same open period; both fail, and the second failure reopens the breaker
     * again (openCount + 2).
     */
    @Test
    void unfencedTrialOutcomesFailR79() {
        Object lock = new Object(); // one read-then-write at a time across clients: the outcome always applies
        check(inner -> new ForwardingStore(inner) {
            private long current(String key) {
                return inner.get(key).map(BreakerState::version).orElse(0L);
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case TRIAL_FAILURE:
                    case TRIAL_SUCCESS:
                        synchronized (lock) {
                            return super.apply(key, AtomicOperation.of(operation.kind(), current(key)), policy, now);
                        }
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }

        }, EnumSet.of(R7_9), EnumSet.of(R7_1, R7_2, R7_3, R7_4, R7_8, R7_10));
    }

    /**
     * R7.10: a store that counts an abandoned claim (released without an outcome written for it) as a failed
     * trial. An interrupted trial must leave the state as it is; this store reopens the breaker instead.
     */
    @Test
    void anAbandonedClaimCountedAsAFailedTrialFailsR710() {
        check(inner -> new ForwardingStore(inner) {
            private final Map<String, String> awaitingOutcome = new ConcurrentHashMap<>();

            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                Optional<String> token = super.claimTrial(key, permits, ttl);
                token.ifPresent(t -> awaitingOutcome.put(key, t));
                return token;
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                AtomicOperation.Kind kind = operation.kind();
                if (kind == AtomicOperation.Kind.TRIAL_SUCCESS || kind == AtomicOperation.Kind.TRIAL_FAILURE) {
                    awaitingOutcome.remove(key);
                }
                return super.apply(key, operation, policy, now);
            }

            @Override
            public void releaseTrial(String key, String token) {
                if (awaitingOutcome.remove(key, token)) { // the defect: no outcome means it failed
                    long version = inner.get(key).map(BreakerState::version).orElse(0L);
                    super.apply(key, AtomicOperation.trialFailed(version), Policy.builder().build(), System.currentTimeMillis());
                }
                super.releaseTrial(key, token);
            }
        }, EnumSet.of(R7_10), EnumSet.of(R4_5, R4_6, R4_7, R7_1, R7_2, R7_3, R7_4, R7_8, R7_9));
    }
}

package dev.redeye.tck.broken;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.Policy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.Rule;
import dev.redeye.tck.StoreTck;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckReport.RuleResult;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.TckRunner;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The rules R1.12, R4.10, R4.11, R6.11, R6.12, R8.4 and R8.5 add power: each store here has one defect that
 * every rule before them misses (each runs the whole TCK but those seven and R5.11, whose broken store is in
 * BrokenStoresTest, and none of them may fail) and the new rule catches. Among them the wrong stores a review wrote: claims with a ttl above 1 s that never expire,
 * a feed without events for REOPENED, CLOSED by a trial and FORCED_OPEN, and a feed that keeps its
 * de-duplication memory across gaps.
 */
class ContractV3MutantsTest {
    /** The rules this class shows the power of; every other rule must pass (or skip) for each defect. */
    static final Set<Rule> NEW = EnumSet.of(Rule.R1_12, Rule.R4_10, Rule.R4_11, Rule.R5_11, Rule.R6_11, Rule.R6_12,
            Rule.R8_4, Rule.R8_5);
    private static final Duration TTL = Duration.ofHours(1);

    /**
     * One defect.
     *
     * @param name    what is wrong
     * @param run     runs the TCK with the given rules over the broken store, its hooks included
     * @param catches the rule that must catch it
     * @param mention a fragment its failure message must contain
     */
    record Mutant(String name, Function<Set<Rule>, TckReport> run, Rule catches, String mention) {
    }

    @TestFactory
    Stream<DynamicTest> eachDefectPassesEveryEarlierRuleAndFailsItsNewOne() {
        return mutants().stream().map(m -> DynamicTest.dynamicTest(m.catches().id() + ": " + m.name(), () -> check(m)));
    }

    private static void check(Mutant m) {
        EnumSet<Rule> rules = EnumSet.complementOf(EnumSet.copyOf(NEW));
        rules.add(m.catches());
        TckReport report = m.run().apply(rules);
        for (RuleResult r : report.results()) {
            if (r.rule() != m.catches()) {
                assertTrue(r.status() != Status.FAILED, () -> m.name() + ": the earlier rule " + r.id()
                        + " caught the defect, so it does not show what " + m.catches().id() + " adds\n"
                        + report.format());
            }
        }
        BrokenStoresTest.assertFails(report, m.catches(), m.mention());
        System.out.println(m.name() + ":\n" + report.result(m.catches()).orElseThrow().message() + "\n");
    }

    /** Runs the TCK over clients {@code wrap} makes of one fresh in-memory store. */
    private static Function<Set<Rule>, TckReport> over(Supplier<Function<Store, Store>> wrapper) {
        return rules -> {
            try (InMemoryStore backing = new InMemoryStore()) {
                Function<Store, Store> wrap = wrapper.get();
                return TckRunner.run(() -> wrap.apply(backing.newClient()), rules,
                        Map.of(TckRunner.PATIENCE_PARAMETER, "2000"));
            }
        };
    }

    private static List<Mutant> mutants() {
        return List.of(
                new Mutant("a new life after expiry starts at the expired version (max(clock, version) with the clock "
                        + "behind)", over(ContractV3MutantsTest::expiredVersionReused), Rule.R1_12,
                        "the very version"),
                new Mutant("claims with a ttl above 1 s never expire",
                        over(() -> new FlawedClaims(FlawedClaims.Defect.LONG_CLAIMS_NEVER_EXPIRE)::client), Rule.R4_10,
                        "must be free within 100 ms"),
                new Mutant("a claim prunes at most 16 expired claims, the same ones on every try",
                        over(() -> new FlawedClaims(FlawedClaims.Defect.PRUNES_AT_MOST_16)::client), Rule.R4_11,
                        "expired claims still count"),
                new Mutant("no event for REOPENED, CLOSED by a trial and FORCED_OPEN",
                        over(ContractV3MutantsTest::trialAndOperatorEventsDropped), Rule.R6_11, "REOPENED"),
                new Mutant("the feed keeps its de-duplication by version across gaps",
                        rules -> TckRunner.run(DedupAcrossGapsTck.class, rules,
                                Map.of(TckRunner.PATIENCE_PARAMETER, "2000")), Rule.R6_12, "as a duplicate"),
                new Mutant("a failed trial never moves openedAt backwards (a clock behind keeps the later opening)",
                        over(ContractV3MutantsTest::reopenKeepsTheLaterOpening), Rule.R8_4, "openedAt expected"),
                new Mutant("a release writes back the claims it read a moment before, losing a claim made meanwhile",
                        over(() -> new FlawedClaims(FlawedClaims.Defect.RELEASE_LOSES_A_RACING_CLAIM)::client),
                        // a lost claim, or one the write-back brings back after its removal, as the race falls
                        Rule.R8_5, "the claim table read back differs"));
    }

    /**
     * Expiry kept by the store itself, as a row with an expiry time is: an expired state stays stored and reads
     * as absent, and an atomic call on it starts a new life at {@code initial(its version)}, as a base of
     * {@code max(clock, version)} does when the clock is behind the version. Delete is right (the in-memory
     * store's floor), and nothing else differs.
     */
    private static Function<Store, Store> expiredVersionReused() {
        Map<String, Long> deadlines = new ConcurrentHashMap<>();
        return inner -> new ForwardingStore(inner) {
            private boolean expired(String key) {
                Long d = deadlines.get(key);
                return d != null && System.nanoTime() - d >= 0;
            }

            /** Runs an atomic call with the backing store's own expiry out of the way; this view expires states. */
            private StateChange atomic(String key, Policy p, Function<Policy, StateChange> call) {
                if (expired(key)) {
                    super.get(key).ifPresent(old -> inner.put(key, BreakerState.initial(old.version()), TTL));
                }
                StateChange c = call.apply(p.toBuilder().stateTtl(TTL).build());
                if (c.changed()) {
                    track(key, c.state(), p.stateTtl());
                }
                return c;
            }

            private void track(String key, BreakerState state, Duration ttl) {
                if (state.pinned() || ttl.compareTo(TTL) >= 0) { // an operator's state never expires (R1.9, R12.4)
                    deadlines.remove(key);
                } else {
                    deadlines.put(key, System.nanoTime() + ttl.toNanos());
                }
            }

            @Override
            public Optional<BreakerState> get(String key) {
                return expired(key) ? Optional.empty() : super.get(key);
            }

            /** The listing leaves out what this view expired, as get does. */
            @Override
            public Page page(String cursor, int limit) {
                Page p = super.page(cursor, limit);
                return new Page(p.entries().stream().filter(e -> !expired(e.operation())).toList(), p.next());
            }

            @Override
            public void put(String key, BreakerState state, Duration ttl) {
                super.put(key, state, TTL);
                track(key, state, ttl);
            }

            @Override
            public void delete(String key) {
                super.delete(key);
                deadlines.remove(key);
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                return atomic(key, policy, q -> super.apply(key, operation, q, now));
            }
        };
    }

    /** The feed drops the events of three kinds: a script that publishes only some of its transitions. */
    private static Function<Store, Store> trialAndOperatorEventsDropped() {
        Set<TransitionKind> silent = EnumSet.of(TransitionKind.REOPENED, TransitionKind.CLOSED,
                TransitionKind.FORCED_OPEN);
        return inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                return super.subscribe(e -> {
                    if (!silent.contains(e.kind())) {
                        listener.accept(e);
                    }
                }, onGap);
            }
        };
    }

    /**
     * A failed trial whose {@code now} is below the {@code openedAt} it replaces keeps the later one, as a port
     * of the rules guarding against clocks going backwards would: the same as the contract while clocks only
     * move forward. Within one open period (the only one a trial outcome applies to) every now of R8.3 is at
     * or after the opening, so only skewed clients reach it.
     */
    private static Function<Store, Store> reopenKeepsTheLaterOpening() {
        return inner -> new ForwardingStore(inner) {
            @Override
            StateChange written(String key, Policy policy, long now, StateChange c) {
                if (c.transition() != TransitionKind.REOPENED || now >= c.previous().openedAt()) {
                    return c;
                }
                BreakerState kept = c.state().toBuilder().openedAt(c.previous().openedAt()).build();
                inner.put(key, kept, policy.stateTtl());
                return new StateChange(c.previous(), kept, c.transition());
            }
        };
    }

    /**
     * In-memory clients whose feed drops every event not newer than the last one it delivered for the key,
     * and never forgets what it delivered, gaps included. The hooks cut the feed with
     * {@link InMemoryStore#simulateFeedGap()} and rewind with a put (the raw write of this store). Nested, so
     * surefire does not run it on its own; the launcher does.
     */
    static class DedupAcrossGapsTck extends StoreTck {
        static final InMemoryStore BACKING = new InMemoryStore();

        @Override
        protected Store newClient() {
            return new ForwardingStore(BACKING.newClient()) {
                @Override
                public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                    Map<String, Long> delivered = new HashMap<>();
                    return super.subscribe(e -> {
                        Long last;
                        synchronized (delivered) {
                            last = delivered.get(e.operation());
                            if (last == null || e.version() > last) {
                                delivered.put(e.operation(), e.version());
                            }
                        }
                        if (last == null || e.version() > last) {
                            listener.accept(e);
                        }
                    }, onGap);
                }
            };
        }

        @Override
        protected void interruptFeed(Store client) {
            BACKING.simulateFeedGap();
        }

        @Override
        protected void rewind(Store client, String key, BreakerState state) {
            client.put(key, state, TTL);
        }

        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
        }
    }
}

package dev.redeye.tck.broken;

import static dev.redeye.tck.Rule.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.Strategy;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Mutation testing of the TCK: one small defect per store, each over a correct in-memory backend, and the
 * rules that must catch it. Together with {@link BrokenStoresTest} and {@code HookedStoresTest} every rule is
 * shown to fail for some defect, so no rule is a test that cannot fail. Control rules
 * the mutant does satisfy must still pass, so each failure is attributable to the one defect.
 */
class MutantStoresTest {
    private static final Duration TTL = Duration.ofHours(1);
    private final List<Thread> leaked = new CopyOnWriteArrayList<>();
    private final List<ExecutorService> executors = new CopyOnWriteArrayList<>();

    /** One defect: a fresh wrapper factory per run (shared state lives in the factory), and the verdicts. */
    record Mutant(String name, Supplier<Function<Store, Store>> wrapper, EnumSet<Rule> mustFail,
            EnumSet<Rule> mustPass) {
    }

    @AfterEach
    void stopLeakedThreads() {
        leaked.forEach(Thread::interrupt);
        executors.forEach(ExecutorService::shutdownNow);
    }

    @TestFactory
    Stream<DynamicTest> everyMutantFailsTheRulesNamingItsDefect() {
        return mutants().stream().map(m -> DynamicTest.dynamicTest(m.name(), () -> check(m)));
    }

    private static void check(Mutant m) {
        try (InMemoryStore backing = new InMemoryStore()) {
            Function<Store, Store> wrap = m.wrapper().get();
            EnumSet<Rule> rules = EnumSet.copyOf(m.mustFail());
            rules.addAll(m.mustPass());
            // Defects that make a rule wait for something that never happens fail after 1 s, not 10 s.
            TckReport report = TckRunner.run(() -> wrap.apply(backing.newClient()), rules,
                    Map.of(TckRunner.PATIENCE_PARAMETER, "1000"));
            for (Rule r : m.mustFail()) {
                BrokenStoresTest.assertFails(report, r);
            }
            for (Rule r : m.mustPass()) {
                BrokenStoresTest.assertPasses(report, r);
            }
            assertEquals(m.mustFail().size(), report.failed(), report.format());
        }
    }

    private static EnumSet<Rule> of(Rule first, Rule... rest) {
        return EnumSet.of(first, rest);
    }

    /** A forwarding store whose atomic results go through {@code f}. */
    private static Function<Store, Store> altering(AlterFn f) {
        return inner -> new ForwardingStore(inner) {
            @Override
            StateChange written(String key, Policy policy, long now, StateChange change) {
                StateChange c = f.alter(this, key, policy, now, change);
                if (c != change && c.changed()) {
                    inner.put(key, c.state(), TTL);
                }
                return c;
            }
        };
    }

    /** A forwarding store whose atomic recordings apply {@code f} to the policy they are given. */
    private static Function<Store, Store> rewritingPolicy(java.util.function.UnaryOperator<Policy> f) {
        return inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case FAILURE:
                    case SUCCESS:
                        return super.apply(key, operation, f.apply(policy), now);
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }

        };
    }

    /** A forwarding store that applies trial outcomes of {@code kind} under the stored version, not their own. */
    private static Function<Store, Store> unfenced(AtomicOperation.Kind kind) {
        return inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                if (operation.kind() != kind) {
                    return super.apply(key, operation, policy, now);
                }
                long current = get(key).map(BreakerState::version).orElse(operation.trialVersion());
                return super.apply(key, AtomicOperation.of(kind, current), policy, now);
            }
        };
    }

    /** A view that reads a key as absent once its deadline (System.nanoTime) in {@code deadlines} passed. */
    private static class ExpiringView extends ForwardingStore {
        final Map<String, Long> deadlines;

        ExpiringView(Store inner, Map<String, Long> deadlines) {
            super(inner);
            this.deadlines = deadlines;
        }

        boolean expired(String key) {
            Long d = deadlines.get(key);
            return d != null && System.nanoTime() - d > 0;
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
    }

    @FunctionalInterface
    interface AlterFn {
        StateChange alter(Store s, String key, Policy policy, long now, StateChange change);
    }

    private List<Mutant> mutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("version bumped on every write", () -> altering((s, k, p, now, c) ->
                c.isTransition() || !c.changed() ? c
                        : new StateChange(c.previous(), c.state().withVersion(c.state().version() + 1), null)),
                of(R2_1, R2_2, R2_3, R2_9), of(R1_1, R4_1)));
        out.add(new Mutant("failure while open reopens", () -> altering((s, k, p, now, c) ->
                c.previous().open() && !c.isTransition() && c.state().failures() > c.previous().failures()
                        ? Transitions.trialFailed(c.previous(), c.previous().version(), p, now) : c),
                of(R2_4, R9_3), of(R2_1, R2_2, R5_3, R9_1)));
        out.add(new Mutant("a success with nothing to clear is reported as a transition", () -> inner ->
                new ForwardingStore(inner) {
                    @Override
                    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                        switch (operation.kind()) {
                            case SUCCESS:
                                StateChange c = super.apply(key, AtomicOperation.success(), policy, now);
                                if (c.isTransition() || c.state().open()) {
                                    return c;
                                }
                                BreakerState bumped = c.state().withVersion(c.state().version() + 1);
                                inner.put(key, bumped, TTL);
                                return new StateChange(c.previous(), bumped, TransitionKind.CLOSED);
                            default:
                                return super.apply(key, operation, policy, now);
                        }
                    }
                }, of(R2_6), of(R2_1, R2_3)));
        out.add(new Mutant("error-rate policy counted as consecutive", () -> rewritingPolicy(
                p -> p.toBuilder().strategy(Strategy.CONSECUTIVE).build()),
                of(R3_1, R3_2, R3_3, R3_4, R7_6), of(R2_1, R2_7)));
        out.add(new Mutant("first policy cached per store instance", () -> inner -> new ForwardingStore(inner) {
            private volatile Policy first;

            private Policy cached(Policy p) {
                if (first == null) {
                    first = p;
                }
                return first;
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case FAILURE:
                        return super.apply(key, AtomicOperation.failure(), cached(policy), now);
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }
        }, of(R1_6), of(R1_1, R2_1)));
        out.add(new Mutant("forced states expire after their ttl like any other", () -> {
            Map<String, Long> deadlines = new ConcurrentHashMap<>();
            return inner -> new ExpiringView(inner, deadlines) {
                @Override
                public void put(String key, BreakerState state, Duration ttl) {
                    super.put(key, state, ttl);
                    deadlines.put(key, System.nanoTime() + ttl.toNanos());
                }

                @Override
                public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                    switch (operation.kind()) {
                        case FORCE_OPEN:
                        case FORCE_HALF_OPEN:
                        case FORCE_CLOSED: {
                            StateChange c = super.apply(key, operation, policy, now);
                            deadlines.put(key, System.nanoTime() + policy.stateTtl().toNanos());
                            return c;
                        }
                        default:
                            return super.apply(key, operation, policy, now);
                    }
                }
            };
        }, of(R1_9, R5_7), of(R1_1, R1_3, R5_5)));
        out.add(new Mutant("errorRate stored as a float", () -> inner -> new ForwardingStore(inner) {
            @Override
            public void put(String key, BreakerState state, Duration ttl) {
                super.put(key, state.toBuilder().errorRate((float) state.errorRate()).build(), ttl);
            }
        }, of(R1_2, R1_3), of(R1_1, R1_4)));
        out.add(new Mutant("braces stripped from keys", () -> inner -> {
            Function<String, String> strip = k -> k.replace("{", "").replace("}", "");
            return new ForwardingStore(inner) {
                @Override
                public Optional<BreakerState> get(String key) {
                    return super.get(strip.apply(key));
                }

                @Override
                public void put(String key, BreakerState state, Duration ttl) {
                    super.put(strip.apply(key), state, ttl);
                }

                @Override
                public void delete(String key) {
                    super.delete(strip.apply(key));
                }

                @Override
                public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                    switch (operation.kind()) {
                        case FAILURE:
                        case FORCE_OPEN:
                        case FORCE_HALF_OPEN:
                        case FORCE_CLOSED:
                            return super.apply(strip.apply(key), operation, policy, now);
                        default:
                            return super.apply(key, operation, policy, now);
                    }
                }

                @Override
                public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                    return super.claimTrial(strip.apply(key), permits, ttl);
                }
            };
        }, of(R1_5, R6_5), of(R1_1, R1_2, R6_1)));
        out.add(new Mutant("get of an unknown key returns the initial state", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Optional<BreakerState> get(String key) {
                return super.get(key).or(() -> Optional.of(BreakerState.INITIAL));
            }
        }, of(R1_1), of(R1_3, R2_1)));
        out.add(new Mutant("close does nothing", () -> inner -> new ForwardingStore(inner) {
            @Override
            public void close() {
                // defect: the client keeps working after close
            }
        }, of(R1_8), of(R1_1)));
        out.add(new Mutant("stale reads cached per client for 1 s, feed silent", () -> inner -> new ForwardingStore(inner) {
            private final Map<String, Object[]> cache = new ConcurrentHashMap<>();

            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                get("x"); // fail fast after close
                return () -> { };
            }

            @Override
            public Optional<BreakerState> get(String key) {
                Object[] hit = cache.get(key);
                long now = System.nanoTime();
                if (hit != null && now - (Long) hit[0] < 1_000_000_000L) {
                    @SuppressWarnings("unchecked")
                    Optional<BreakerState> cached = (Optional<BreakerState>) hit[1];
                    return cached;
                }
                Optional<BreakerState> fresh = super.get(key);
                cache.put(key, new Object[] {now, fresh});
                return fresh;
            }
        }, of(R7_1, R7_5), of(R1_1, R2_1)));
        out.add(new Mutant("trial successes close at once (successThreshold ignored)", () -> altering(
                (s, k, p, now, c) -> c.previous().open() && !c.previous().forced() && c.transition() == null
                        && c.state().trialSuccesses() > c.previous().trialSuccesses()
                        ? Transitions.trialSucceeded(c.previous(), c.previous().version(),
                                p.toBuilder().successThreshold(1).build(), now)
                        : c),
                of(R5_2), of(R5_1, R5_3)));
        out.add(new Mutant("openCount kept when the breaker closes", () -> altering((s, k, p, now, c) ->
                c.transition() == TransitionKind.CLOSED ? new StateChange(c.previous(),
                        c.state().toBuilder().openCount(c.previous().openCount()).build(), c.transition()) : c),
                of(R5_1, R5_4), of(R5_2, R5_3)));
        out.add(new Mutant("failed trials do not grow openCount (no backoff)", () -> altering((s, k, p, now, c) ->
                c.transition() == TransitionKind.REOPENED ? new StateChange(c.previous(),
                        c.state().toBuilder().openCount(c.previous().openCount()).build(), c.transition()) : c),
                of(R5_3, R5_4, R7_3), of(R5_1, R7_1)));
        out.add(new Mutant("force OPEN not held (forced flag dropped)", () -> altering((s, k, p, now, c) ->
                c.transition() == TransitionKind.FORCED_OPEN ? new StateChange(c.previous(),
                        c.state().toBuilder().forced(false).build(), c.transition()) : c),
                of(R5_5, R7_7), of(R5_1, R7_1)));
        out.add(new Mutant("trial success not persisted", () -> inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                switch (operation.kind()) {
                    case TRIAL_SUCCESS: {
                        long trialVersion = operation.trialVersion();
                        return Transitions.trialSucceeded(get(key).orElse(null), trialVersion, policy, now);
                    }
                    default:
                        return super.apply(key, operation, policy, now);
                }
            }
        }, of(R5_1, R7_4), of(R5_3, R7_1)));
        out.add(new Mutant("claim tokens from a per-client counter",
                () -> new FlawedClaims(FlawedClaims.Defect.PER_CLIENT_COUNTER)::client, of(R4_2), of(R4_1)));
        out.add(new Mutant("one claim namespace for every key",
                () -> new FlawedClaims(FlawedClaims.Defect.GLOBAL_CLAIMS)::client, of(R1_5, R4_9), of(R1_1)));
        out.add(new Mutant("release of an unknown key throws",
                () -> new FlawedClaims(FlawedClaims.Defect.THROW_ON_UNKNOWN)::client, of(R4_7), of(R4_1, R4_6)));
        out.add(new Mutant("delete leaves the claims",
                () -> new FlawedClaims(FlawedClaims.Defect.DELETE_KEEPS_CLAIMS)::client, of(R1_4), of(R1_1, R4_1)));
        out.add(new Mutant("feed publishes sub-threshold increments", () -> {
            List<Consumer<TransitionEvent>> all = new CopyOnWriteArrayList<>();
            return inner -> new ForwardingStore(inner) {
                @Override
                public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                    Subscription s = super.subscribe(listener, onGap);
                    all.add(listener);
                    return () -> {
                        all.remove(listener);
                        s.close();
                    };
                }

                @Override
                StateChange written(String key, Policy policy, long now, StateChange c) {
                    if (!c.isTransition()) {
                        TransitionEvent noise = new TransitionEvent(key, TransitionKind.OPENED, BreakerStatus.CLOSED,
                                c.state());
                        all.forEach(l -> l.accept(noise));
                    }
                    return c;
                }
            };
        }, of(R6_2, R2_10), of(R6_1, R6_3)));
        out.add(new Mutant("feed delivers only this client's own transitions", () -> inner ->
                new ForwardingStore(inner) {
                    private final List<Consumer<TransitionEvent>> own = new CopyOnWriteArrayList<>();

                    @Override
                    public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                        get("x"); // fail fast after close
                        own.add(listener);
                        return () -> own.remove(listener);
                    }

                    @Override
                    StateChange written(String key, Policy policy, long now, StateChange c) {
                        TransitionEvent e = c.toEvent(key, policy, now);
                        if (e != null) {
                            own.forEach(l -> l.accept(e));
                        }
                        return c;
                    }
                }, of(R6_1, R6_3), of(R2_1)));
        out.add(new Mutant("unsubscribe does nothing", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                super.subscribe(listener, onGap);
                return () -> { };
            }
        }, of(R6_4), of(R6_1, R6_3)));
        out.add(new Mutant("events carry a stale state", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                return super.subscribe(e -> listener.accept(new TransitionEvent(e.operation(), e.kind(), e.from(),
                        e.state().toBuilder().failures(e.state().failures() + 1).build())), onGap);
            }
        }, of(R6_1, R6_6), of(R6_3, R6_4)));
        out.add(new Mutant("close leaves a feed thread running", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                Thread t = new Thread(() -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        LockSupport.parkNanos(50_000_000L);
                    }
                }, "mutant-feed-poller");
                t.setDaemon(true);
                leaked.add(t);
                t.start();
                return super.subscribe(listener, onGap);
            }
        }, of(R6_7), of(R6_1)));
        out.add(new Mutant("claims without a count check, through the engine",
                () -> new FlawedClaims(FlawedClaims.Defect.LAST_WRITER_WINS)::client, of(R7_2), of(R7_1, R7_4)));
        out.addAll(contractV2Mutants());
        out.addAll(leakyMutants());
        out.addAll(windowMutants());
        out.addAll(modeMutants());
        out.addAll(quorumMutants());
        out.addAll(listingMutants());
        return out;
    }

    /** A forwarding store whose listing is {@code f} applied to each page request and the inner listing. */
    private static Function<Store, Store> listing(ListFn f) {
        return inner -> new ForwardingStore(inner) {
            @Override
            public Page page(String cursor, int limit) {
                return f.page(inner.capability(OperationListing.class).orElseThrow(), cursor, limit);
            }
        };
    }

    @FunctionalInterface
    interface ListFn {
        OperationListing.Page page(OperationListing inner, String cursor, int limit);
    }

    /** Every entry of a whole listing of {@code l}, in its order. */
    private static List<OperationListing.Entry> everything(OperationListing l) {
        List<OperationListing.Entry> out = new ArrayList<>();
        String cursor = null;
        do {
            OperationListing.Page p = l.page(cursor, OperationListing.MAX_LIMIT);
            out.addAll(p.entries());
            cursor = p.next();
        } while (cursor != null);
        return out;
    }

    /** The defects the listing rules (R15) name. */
    private List<Mutant> listingMutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("the listing stops after its first page", () -> listing((l, cursor, limit) ->
                new OperationListing.Page(l.page(cursor, limit).entries(), null)),
                // not R15.3: with only its own few keys in the store, their first page is the whole listing
                of(R15_1, R15_2, R15_4), of(R1_1)));
        out.add(new Mutant("names listed in the backend's escaped form", () -> listing((l, cursor, limit) -> {
            OperationListing.Page p = l.page(cursor, limit);
            return new OperationListing.Page(p.entries().stream().map(e -> new OperationListing.Entry(
                    e.operation().replace("\n", "\\n").replace("'", "\\'"), e.state())).toList(), p.next());
        }), of(R15_1), of(R15_2, R15_3, R15_4)));
        out.add(new Mutant("a limit out of range taken as the nearest one", () -> listing((l, cursor, limit) ->
                l.page(cursor, Math.max(1, Math.min(limit, OperationListing.MAX_LIMIT)))),
                of(R15_2), of(R15_1, R15_3, R15_4)));
        out.add(new Mutant("a page of limit + 1 (the limit not passed down)", () -> listing((l, cursor, limit) ->
                l.page(cursor, Math.min(limit + 1, OperationListing.MAX_LIMIT))),
                // not R15.3: its pages overflow only when the store holds more keys than the other rules left
                of(R15_1, R15_2, R15_4), of(R1_1)));
        out.add(new Mutant("names remembered from writes, deleted and expired ones included", () -> {
            java.util.Set<String> seen = new java.util.concurrent.ConcurrentSkipListSet<>();
            return inner -> new ForwardingStore(inner) {
                @Override
                public void put(String key, BreakerState state, Duration ttl) {
                    seen.add(key);
                    super.put(key, state, ttl);
                }

                @Override
                public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                    seen.add(key);
                    return super.apply(key, operation, policy, now);
                }

                @Override
                public Page page(String cursor, int limit) {
                    OperationListing.checkLimit(limit);
                    List<String> after = (cursor == null ? seen : ((java.util.NavigableSet<String>) seen)
                            .tailSet(cursor, false)).stream().limit(limit + 1L).toList();
                    List<String> page = after.subList(0, Math.min(limit, after.size()));
                    return new Page(page.stream().map(OperationListing.Entry::nameOnly).toList(),
                            after.size() > limit ? page.get(page.size() - 1) : null);
                }
            };
        }, of(R15_3), of(R15_1, R15_2, R15_4)));
        out.add(new Mutant("an offset for a cursor (SQL OFFSET paging)", () -> listing((l, cursor, limit) -> {
            OperationListing.checkLimit(limit);
            List<OperationListing.Entry> all = everything(l);
            int from = cursor == null ? 0 : Integer.parseInt(cursor);
            int to = Math.min(all.size(), from + limit);
            return new OperationListing.Page(all.subList(Math.min(from, to), to),
                    to < all.size() ? Integer.toString(to) : null);
        }), of(R15_4), of(R15_1, R15_2, R15_3)));
        return out;
    }

    /** The defects contract v2's rules name: versions, ttls, quiet clears, fencing, feed order and silence. */
    private List<Mutant> contractV2Mutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("a new life of a key restarts at version 0", () -> inner -> new ForwardingStore(inner) {
            @Override
            void before(String key, Policy policy) {
                if (inner.get(key).isEmpty()) {
                    inner.put(key, BreakerState.INITIAL, policy.stateTtl()); // the defect: no version base
                }
            }
        }, of(R1_10), of(R1_9, R1_11, R2_1, R5_1)));
        out.add(new Mutant("atomic writes do not refresh the ttl (expiry counted from the key's first write)", () -> {
            Map<String, Long> deadlines = new ConcurrentHashMap<>();
            return inner -> new ExpiringView(inner, deadlines) {
                @Override
                public void delete(String key) {
                    super.delete(key);
                    deadlines.remove(key);
                }

                @Override
                void before(String key, Policy policy) {
                    if (expired(key)) {
                        inner.delete(key);
                        deadlines.remove(key);
                    }
                }

                @Override
                StateChange written(String key, Policy policy, long now, StateChange c) {
                    if (c.changed()) {
                        deadlines.putIfAbsent(key, System.nanoTime() + policy.stateTtl().toNanos());
                    }
                    return c;
                }
            };
        }, of(R1_11), of(R1_9, R1_10, R2_1)));
        out.add(new Mutant("atomic writes ignore stateTtl (states never expire)", () -> altering((s, k, p, now, c) -> {
            if (c.changed()) {
                s.put(k, c.state(), TTL);
            }
            return c;
        }), of(R1_10, R1_11), of(R1_9, R2_1, R5_7)));
        out.add(new Mutant("a clearing success is a transition (contract v1)", () -> altering((s, k, p, now, c) ->
                !c.isTransition() && !c.state().open() && c.previous().failures() > 0 && c.state().failures() == 0
                        ? new StateChange(c.previous(), c.state().withVersion(c.state().version() + 1),
                                TransitionKind.CLOSED)
                        : c),
                of(R2_10), of(R2_1, R2_2, R2_6)));
        out.add(new Mutant("trial successes are not fenced (a late success closes)",
                () -> unfenced(AtomicOperation.Kind.TRIAL_SUCCESS), of(R5_8), of(R5_1, R5_2, R5_9)));
        out.add(new Mutant("trial failures are not fenced (every failing trial reopens)",
                () -> unfenced(AtomicOperation.Kind.TRIAL_FAILURE), of(R5_8, R5_9), of(R5_1, R5_3, R5_4)));
        out.add(new Mutant("a forced half-open keeps the trial successes of the previous period", () -> altering(
                (s, k, p, now, c) -> c.transition() == TransitionKind.FORCED_HALF_OPEN
                        ? new StateChange(c.previous(), c.state().toBuilder()
                                .trialSuccesses(c.previous().trialSuccesses()).build(), c.transition())
                        : c),
                of(R5_10), of(R5_3, R5_5)));
        out.add(new Mutant("events of even versions delivered 30 ms late (out of order)", () -> {
            ScheduledExecutorService late = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "mutant-late-events");
                t.setDaemon(true);
                return t;
            });
            executors.add(late);
            return inner -> new ForwardingStore(inner) {
                @Override
                public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                    return super.subscribe(e -> {
                        if (e.version() % 2 == 0) {
                            late.schedule(() -> listener.accept(e), 30, TimeUnit.MILLISECONDS);
                        } else {
                            listener.accept(e);
                        }
                    }, onGap);
                }
            };
        }, of(R6_9), of(R6_1, R6_3)));
        out.add(new Mutant("feed subscription silently delivers nothing", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                get("x"); // fails fast after close, like the rest of the store
                return () -> { };
            }
        }, of(R6_10, R7_5), of(R1_1, R2_1, R7_1)));
        return out;
    }

    /** The defects the leaky strategy's rules (R9) name; R9.5 (atomicity) is BrokenStoresTest's non-atomic store. */
    private List<Mutant> leakyMutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("leaky counted as consecutive (a success clears every failure)", () -> rewritingPolicy(
                p -> p.strategy() == Strategy.LEAKY ? p.toBuilder().strategy(Strategy.CONSECUTIVE).build() : p),
                of(R9_1, R9_2, R9_3, R9_4, R9_6, R9_7), of(R2_1, R2_10, R2_5)));
        out.add(new Mutant("a leaky success that lowers the count is a transition", () -> altering(
                (s, k, p, now, c) -> p.strategy() == Strategy.LEAKY && !c.isTransition() && !c.state().open()
                        && c.state().failures() < c.previous().failures() && c.state().failures() > 0
                        ? new StateChange(c.previous(), c.state().withVersion(c.state().version() + 1),
                                TransitionKind.CLOSED)
                        : c),
                of(R9_2, R9_6), of(R9_1, R9_3, R9_4)));
        out.add(new Mutant("leaky ignores maxGapBetweenFailures", () -> rewritingPolicy(
                p -> p.strategy() == Strategy.LEAKY ? p.toBuilder().maxGapBetweenFailures(null).build() : p),
                of(R9_4, R9_6), of(R2_5, R9_1, R9_3)));
        return out;
    }

    /** A forwarding store whose every atomic operation runs under {@code f} applied to its policy. */
    private static Function<Store, Store> rewritingEveryPolicy(java.util.function.UnaryOperator<Policy> f) {
        return inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                return super.apply(key, operation, f.apply(policy), now);
            }
        };
    }

    /** A forwarding store that runs {@code f} on each atomic operation instead of the operation itself. */
    private static Function<Store, Store> replacing(ReplaceFn f) {
        return inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                AtomicOperation o = f.replace(inner, key, operation, policy, now);
                return super.apply(key, o, policy, now);
            }
        };
    }

    @FunctionalInterface
    interface ReplaceFn {
        /** The operation to run in place of {@code op}; may prepare the key's state in {@code s} first. */
        AtomicOperation replace(Store s, String key, AtomicOperation op, Policy policy, long now);
    }

    private static boolean isOutcome(AtomicOperation o) {
        switch (o.kind()) {
            case FAILURE:
            case SUCCESS:
            case SLOW_SUCCESS:
            case SLOW_FAILURE:
            case SLOW_CALL:
                return true;
            default:
                return false;
        }
    }

    /** The defects the sliding-window and slow-call rules (R10, R11, R7.11, R7.12, R7.14) name. */
    private List<Mutant> windowMutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("the window is dropped on every write", () -> altering((s, k, p, now, c) ->
                c.changed() && c.state().window() != null
                        ? new StateChange(c.previous(), c.state().toBuilder().window(null).build(), c.transition())
                        : c),
                of(R10_1, R10_2, R10_3, R10_4, R10_5, R11_1, R11_2, R11_3, R11_4, R12_3, R12_5, R7_11, R7_12, R7_14),
                of(R2_1, R9_1, R12_1, R12_6)));
        out.add(new Mutant("rates compared with > instead of >=", () -> rewritingEveryPolicy(p ->
                p.strategy() != Strategy.SLIDING_WINDOW ? p : p.toBuilder()
                        .failureRateThreshold(Math.min(100.0, Math.nextUp(p.failureRateThreshold())))
                        .slowCallRateThreshold(Math.min(100.0, Math.nextUp(p.slowCallRateThreshold()))).build()),
                of(R10_1, R10_2, R10_3, R11_2, R11_3, R11_4, R12_5, R7_11, R7_12), of(R10_4, R10_5, R11_1)));
        out.add(new Mutant("minimumNumberOfCalls not capped at a count window's size", () -> altering(
                (s, k, p, now, c) -> c.transition() == TransitionKind.OPENED && p.strategy() == Strategy.SLIDING_WINDOW
                        && c.state().window().calls() < p.minimumNumberOfCalls()
                        ? new StateChange(c.previous(), c.state().toBuilder().open(false)
                                .openedAt(c.previous().openedAt()).version(c.previous().version()).build(), null)
                        : c),
                of(R10_1), of(R10_2, R10_3, R10_4)));
        out.add(new Mutant("time buckets roll without being emptied (old outcomes keep counting)", () -> replacing(
                (s, k, o, p, now) -> {
                    SlidingWindow w = s.get(k).map(BreakerState::window).orElse(null);
                    if (isOutcome(o) && w != null && w.type() == SlidingWindowType.TIME_BASED
                            && w.hasShape(p.slidingWindowType(), p.slidingWindowSize())) {
                        long b = Math.floorDiv(now, w.bucketSeconds() * 1000L);
                        if (b > w.position()) {
                            String[] parts = w.encode().split("\\.", 3);
                            SlidingWindow moved = SlidingWindow.decode(parts[0] + "." + b + "." + parts[2]);
                            s.put(k, s.get(k).orElseThrow().toBuilder().window(moved).build(), p.stateTtl());
                        }
                    }
                    return o;
                }),
                of(R10_2, R10_3, R7_11), of(R10_1, R10_5, R11_1)));
        out.add(new Mutant("a caller whose clock is behind starts a new time window", () -> replacing(
                (s, k, o, p, now) -> {
                    BreakerState cur = s.get(k).orElse(null);
                    SlidingWindow w = cur == null ? null : cur.window();
                    if (isOutcome(o) && w != null && w.type() == SlidingWindowType.TIME_BASED
                            && Math.floorDiv(now, w.bucketSeconds() * 1000L) < w.position()) {
                        s.put(k, cur.toBuilder().window(null).build(), p.stateTtl());
                    }
                    return o;
                }),
                of(R10_3), of(R10_1, R10_2, R10_5)));
        out.add(new Mutant("the window is kept when the breaker closes", () -> altering((s, k, p, now, c) ->
                c.isTransition() && !c.state().open() && c.previous().window() != null && c.state().window() == null
                        && c.transition() != TransitionKind.WOULD_OPEN
                        ? new StateChange(c.previous(), c.state().toBuilder().window(c.previous().window()).build(),
                                c.transition())
                        : c),
                of(R10_4, R11_4), of(R10_1, R10_3, R11_3)));
        out.add(new Mutant("a window of another shape is counted on in its own shape",
                MutantStoresTest::rewritingEveryPolicyByState,
                of(R10_4), of(R10_1, R10_2, R10_3)));
        out.add(new Mutant("slow_call_failed counts a new slow failure (the slow call counted twice)", () -> replacing(
                (s, k, o, p, now) -> o.kind() == AtomicOperation.Kind.SLOW_CALL_FAILED
                        ? AtomicOperation.outcome(false, true) : o),
                of(R11_3, R11_4), of(R11_1, R11_2)));
        out.add(new Mutant("slow_call_failed is not fenced (applied under the stored version)", () -> replacing(
                (s, k, o, p, now) -> o.kind() == AtomicOperation.Kind.SLOW_CALL_FAILED
                        ? AtomicOperation.slowCallFailed(o.slot(), s.get(k).map(BreakerState::version)
                                .orElse(o.trialVersion()))
                        : o),
                of(R11_4), of(R11_1, R11_3)));
        out.add(new Mutant("slow outcomes recorded as plain ones", () -> replacing(
                (s, k, o, p, now) -> o.kind() == AtomicOperation.Kind.SLOW_SUCCESS ? AtomicOperation.success()
                        : o.kind() == AtomicOperation.Kind.SLOW_FAILURE ? AtomicOperation.failure() : o),
                of(R10_5, R11_1, R11_2), of(R10_1, R11_3, R11_4)));
        return out;
    }

    /** A store that records into a stored window of another shape as if the policy had that shape. */
    private static Function<Store, Store> rewritingEveryPolicyByState() {
        return inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                SlidingWindow w = inner.get(key).map(BreakerState::window).orElse(null);
                Policy p = w != null && policy.strategy() == Strategy.SLIDING_WINDOW
                        ? policy.toBuilder().slidingWindow(w.type(), w.size()).build() : policy;
                return super.apply(key, operation, p, now);
            }
        };
    }

    /** The defects the quorum rules (R13) name. */
    private List<Mutant> quorumMutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("the instance is dropped (outcomes applied unattributed)", () -> replacing(
                (s, k, o, p, now) -> o.instance() == null ? o : AtomicOperation.outcome(
                        o.kind() == AtomicOperation.Kind.SUCCESS || o.kind() == AtomicOperation.Kind.SLOW_SUCCESS,
                        o.kind() == AtomicOperation.Kind.SLOW_SUCCESS || o.kind() == AtomicOperation.Kind.SLOW_FAILURE)),
                of(R13_1, R13_2, R13_3, R13_4, R13_5, R13_6), of(R2_1, R12_1)));
        java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
        out.add(new Mutant("every write counted as another instance", () -> replacing(
                (s, k, o, p, now) -> o.instance() == null ? o : AtomicOperation.outcome(
                        o.kind() == AtomicOperation.Kind.SUCCESS, false, o.instance() + "-" + writes.incrementAndGet())),
                of(R13_1, R13_2), of(R2_1, R12_1)));
        out.add(new Mutant("past 16 instances the newest is dropped, not the least recent", () -> altering(
                (s, k, p, now, c) -> c.changed() && c.previous().contributors().size() == BreakerState.MAX_CONTRIBUTORS
                        && !c.previous().contributors().get(0).instance().equals(
                                c.state().contributors().get(0).instance())
                        && c.previous().contributors().stream().noneMatch(x -> x.instance().equals(
                                c.state().contributors().get(0).instance()))
                        ? new StateChange(c.previous(), c.state().toBuilder()
                                .contributors(c.previous().contributors()).build(), c.transition())
                        : c),
                of(R13_4), of(R13_1, R13_2, R13_3)));
        out.add(new Mutant("contributions lost by get and put (a layout without them)", () -> inner ->
                new ForwardingStore(inner) {
                    @Override
                    public Optional<BreakerState> get(String key) {
                        return super.get(key).map(x -> x.toBuilder().contributors(List.of()).build());
                    }

                    @Override
                    public void put(String key, BreakerState state, Duration ttl) {
                        super.put(key, state.toBuilder().contributors(List.of()).build(), ttl);
                    }
                },
                of(R13_1, R13_2, R13_4, R13_5), of(R13_3, R13_6)));
        return out;
    }

    /** The defects the mode rules (R12) name. */
    private List<Mutant> modeMutants() {
        List<Mutant> out = new ArrayList<>();
        out.add(new Mutant("force_mode is not a transition (no version bump)", () -> altering((s, k, p, now, c) ->
                c.transition() == TransitionKind.MODE_CHANGED
                        ? new StateChange(c.previous(), c.state().withVersion(Math.max(0, c.previous().version())),
                                null)
                        : c),
                of(R12_1, R12_2, R12_3, R12_5, R12_6, R12_7), of(R12_4, R2_1)));
        out.add(new Mutant("MODE_CHANGED is not published", () -> inner -> new ForwardingStore(inner) {
            @Override
            public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                return super.subscribe(e -> {
                    if (e.kind() != TransitionKind.MODE_CHANGED) {
                        listener.accept(e);
                    }
                }, onGap);
            }
        }, of(R12_3), of(R12_1, R6_1)));
        out.add(new Mutant("force_mode keeps the trial claims",
                () -> new FlawedClaims(FlawedClaims.Defect.FORCE_MODE_KEEPS_CLAIMS)::client, of(R12_2),
                of(R12_1, R5_11)));
        out.add(new Mutant("a stored mode expires after its ttl like any other state", () -> {
            Map<String, Long> deadlines = new ConcurrentHashMap<>();
            return inner -> new ExpiringView(inner, deadlines) {
                @Override
                public void put(String key, BreakerState state, Duration ttl) {
                    super.put(key, state, ttl);
                    if (!state.forced()) {
                        deadlines.put(key, System.nanoTime() + ttl.toNanos());
                    }
                }

                @Override
                StateChange written(String key, Policy policy, long now, StateChange c) {
                    if (c.changed() && !c.state().forced()) {
                        deadlines.put(key, System.nanoTime() + policy.stateTtl().toNanos());
                    }
                    return c;
                }
            };
        }, of(R12_4), of(R1_9, R5_7, R12_1)));
        out.add(new Mutant("METRICS_ONLY opens the breaker", () -> inner -> new ForwardingStore(inner) {
            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                StateChange c = super.apply(key, operation, policy, now);
                if (c.transition() != TransitionKind.WOULD_OPEN) {
                    return c;
                }
                BreakerState prev = c.previous();
                StateChange opened = operation.apply(prev.toBuilder().mode(BreakerMode.NORMAL).build(),
                        policy.toBuilder().mode(BreakerMode.NORMAL).build(), now);
                BreakerState s = opened.state().toBuilder().mode(prev.mode()).build();
                inner.put(key, s, TTL);
                return new StateChange(prev, s, opened.transition());
            }
        }, of(R12_3, R12_5), of(R12_1, R12_6)));
        out.add(new Mutant("the policy's mode is ignored", () -> rewritingEveryPolicy(
                p -> p.toBuilder().mode(BreakerMode.NORMAL).build()),
                of(R12_5, R12_6, R12_7, R7_13), of(R12_1, R12_4, R7_12)));
        out.add(new Mutant("forcing a status keeps the stored mode", () -> altering((s, k, p, now, c) ->
                c.transition() != null && c.transition().isForced() && c.transition() != TransitionKind.MODE_CHANGED
                        ? new StateChange(c.previous(), c.state().toBuilder().mode(c.previous().mode()).build(),
                                c.transition())
                        : c),
                of(R12_7), of(R12_1, R12_5, R5_5)));
        out.add(new Mutant("a batch's outcomes applied at the call's now, not at their own instants", () -> replacing(
                (s, k, o, p, now) -> {
                    if (o.kind() != AtomicOperation.Kind.OUTCOMES) {
                        return o;
                    }
                    long[] packed = new long[o.outcomeCount()];
                    for (int i = 0; i < packed.length; i++) {
                        packed[i] = AtomicOperation.packOutcome(o.outcomeSucceeded(i), o.outcomeSlow(i), now);
                    }
                    return AtomicOperation.outcomes(packed, packed.length, o.instance());
                }),
                of(R14_1), of(R14_2, R2_1, R10_1)));
        out.add(new Mutant("a batch applied with get-then-put (not one atomic step)", () -> inner ->
                new ForwardingStore(inner) {
                    @Override
                    public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                        BreakerState prev = inner.get(key).orElse(null);
                        if (operation.kind() != AtomicOperation.Kind.OUTCOMES || prev == null) {
                            return super.apply(key, operation, policy, now); // a new life's version base stays right
                        }
                        StateChange c = operation.apply(prev, policy, now);
                        LockSupport.parkNanos(50_000); // the round trip between the read and the write
                        if (c.changed()) {
                            inner.put(key, c.state(), TTL);
                        }
                        return c;
                    }
                },
                of(R14_2), of(R14_1, R2_7)));
        return out;
    }

    @Test
    void everyRuleIsCaughtBySomeDefect() {
        EnumSet<Rule> caught = EnumSet.noneOf(Rule.class);
        mutants().forEach(m -> caught.addAll(m.mustFail()));
        // BrokenStoresTest and HookedStoresTest (hooks and expectations) cover these:
        caught.addAll(EnumSet.of(R2_7, R2_8, R3_3, R5_6, R9_5, R10_5, // the non-atomic store
                R4_1, R4_3, R4_4, R4_5, R4_6, R4_8, R2_1, R2_2, R2_5, R5_3,
                R0_1, R1_7, R6_8, R5_11));
        caught.addAll(EnumSet.of(Rule.R7_8, Rule.R7_9, Rule.R7_10)); // EngineRuleMutantsTest covers these
        caught.addAll(EnumSet.of(Rule.R8_1, Rule.R8_2, Rule.R8_3)); // ModelRuleMutantsTest covers these
        caught.addAll(ContractV3MutantsTest.NEW); // and ContractV3MutantsTest these
        assertEquals(EnumSet.noneOf(Rule.class), EnumSet.complementOf(caught), "rules no defect demonstrates failing");
    }
}

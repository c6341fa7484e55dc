package dev.redeye.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redeye.InMemoryStore;
import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.tck.TckReport.Status;
import dev.redeye.tck.broken.BrokenStoresTest;
import dev.redeye.tck.broken.ForwardingStore;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The rules that need the implementer's side of the TCK (hooks and expectations): R0.1, R1.7 and R6.8, each
 * shown to pass for a correct store and to fail for a broken one. The TCK subclasses here are nested, so
 * surefire does not run them on their own; the launcher runs them.
 */
class HookedStoresTest {

    /** A plain store keeping each state as its {@link StateCodec} fields: a raw layout the hook can corrupt. */
    static class FieldMapStore implements Store {
        private final Map<String, Map<String, String>> data;
        private final boolean lenient;
        private volatile boolean closed;

        FieldMapStore(Map<String, Map<String, String>> data, boolean lenient) {
            this.data = data;
            this.lenient = lenient;
        }

        private void ensureOpen() {
            if (closed) {
                throw new StoreException("closed");
            }
        }

        @Override
        public Optional<BreakerState> get(String key) {
            ensureOpen();
            Map<String, String> f = data.get(key);
            if (f == null) {
                return Optional.empty();
            }
            try {
                return Optional.of(StateCodec.fromFields(f, "test key"));
            } catch (StoreException e) {
                if (lenient) {
                    return Optional.empty(); // the defect: malformed data reads as "never written"
                }
                throw e;
            }
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
            ensureOpen();
            data.put(key, StateCodec.toFields(state));
        }

        @Override
        public void delete(String key) {
            ensureOpen();
            data.remove(key);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    static class StrictFieldMapTck extends StoreTck {
        static final Map<String, Map<String, String>> DATA = new ConcurrentHashMap<>();

        @Override
        protected Store newClient() {
            return new FieldMapStore(DATA, false);
        }

        @Override
        protected void corrupt(Store client, String key) {
            DATA.put(key, Map.of(StateCodec.FAILURES, "many", StateCodec.OPEN, "maybe"));
        }

        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(); // a plain store, said so
        }
    }

    static class LenientFieldMapTck extends StrictFieldMapTck {
        @Override
        protected Store newClient() {
            return new FieldMapStore(DATA, true);
        }
    }

    static class OverclaimingTck extends StrictFieldMapTck {
        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(TrialClaims.class);
        }
    }

    /** In-memory clients; the hook cuts the feed with {@link InMemoryStore#simulateFeedGap()}. */
    static class GapTck extends StoreTck {
        static final InMemoryStore BACKING = new InMemoryStore();

        @Override
        protected Store newClient() {
            return BACKING.newClient();
        }

        @Override
        protected void interruptFeed(Store client) {
            BACKING.simulateFeedGap();
        }

        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
        }
    }

    /** The defect: the store swallows feed drops and never tells its subscribers (onGap never runs). */
    static class GapSwallowingTck extends GapTck {
        @Override
        protected Store newClient() {
            return new ForwardingStore(BACKING.newClient()) {
                @Override
                public Subscription subscribe(Consumer<TransitionEvent> listener, Runnable onGap) {
                    return super.subscribe(listener, () -> { });
                }
            };
        }
    }

    private static TckReport launch(Class<? extends StoreTck> tck, Rule... rules) {
        return TckRunner.launch(tck, Map.of(TckRunner.PATIENCE_PARAMETER, "1000"), EnumSet.of(rules[0], rules),
                tck.getSimpleName());
    }

    /**
     * Runs {@code rule} on {@code keeps}, which must pass it, then {@code rule} and {@code other} on
     * {@code breaks}, which must fail {@code rule} with {@code message}; returns the report of {@code breaks}.
     */
    private static TckReport keptThenBroken(Class<? extends StoreTck> keeps, Class<? extends StoreTck> breaks,
            Rule rule, String message, Rule other) {
        TckReport kept = launch(keeps, rule);
        assertEquals(Status.PASSED, kept.result(rule.id()).status(), kept.format());
        TckReport broken = launch(breaks, rule, other);
        BrokenStoresTest.assertFails(broken, rule, message);
        return broken;
    }

    @Test
    void malformedDataMustBeAStoreExceptionNotASilentReset() {
        TckReport strict = launch(StrictFieldMapTck.class, Rule.R1_7, Rule.R1_1, Rule.R1_2, Rule.R1_8);
        assertEquals(0, strict.failed(), strict.format());
        assertEquals(Status.PASSED, strict.result("R1.7").status(), strict.format());
        TckReport lenient = launch(LenientFieldMapTck.class, Rule.R1_7, Rule.R1_1);
        BrokenStoresTest.assertFails(lenient, Rule.R1_7, "get of malformed data must throw StoreException");
        BrokenStoresTest.assertPasses(lenient, Rule.R1_1);
    }

    @Test
    void aMissingExpectedCapabilityFailsR0_1() {
        TckReport over = keptThenBroken(StrictFieldMapTck.class, OverclaimingTck.class, Rule.R0_1,
                "does not declare TrialClaims", Rule.R4_1);
        assertEquals(Status.SKIPPED, over.result("R4.1").status(), over.format());
    }

    @Test
    void aFeedDropMustReachOnGap() {
        TckReport swallowed = keptThenBroken(GapTck.class, GapSwallowingTck.class, Rule.R6_8,
                "onGap was not called", Rule.R6_1);
        BrokenStoresTest.assertPasses(swallowed, Rule.R6_1);
    }
}

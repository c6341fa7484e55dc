package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.CAPABILITIES;
import static dev.redeye.tck.TckSupport.FORCED_WAIT_MILLIS;
import static dev.redeye.tck.TckSupport.RICH;
import static dev.redeye.tck.TckSupport.RICH_FORCED;
import static dev.redeye.tck.TckSupport.SHORT_STATE_TTL;
import static dev.redeye.tck.TckSupport.STATE_TTL;
import static dev.redeye.tck.TckSupport.T0;
import static dev.redeye.tck.TckSupport.assertSameState;
import static dev.redeye.tck.TckSupport.atomicTransition;
import static dev.redeye.tck.TckSupport.consecutive;
import static dev.redeye.tck.TckSupport.describe;
import static dev.redeye.tck.TckSupport.hostileNames;
import static dev.redeye.tck.TckSupport.needAtomic;
import static dev.redeye.tck.TckSupport.sleep;
import static dev.redeye.tck.TckSupport.updates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Rules R0 (the TCK's own) and R1 (plain store, required of every store). Run by {@link StoreTck}. */
interface PlainStoreRules extends TckContext {
    /**
     * R0.1 The store declares every capability the implementer expects. If this fails, check
     * {@code capability(Class)}: a store that returns empty for a capability it implements silently skips a
     * whole group of rules.
     */
    @Test
    @DisplayName("R0.1 declared capabilities include expectedCapabilities()")
    default void r0_1_declaredCapabilitiesMatchExpectations() {
        Store s = client();
        Set<String> declared = new TreeSet<>();
        for (Class<?> c : CAPABILITIES) {
            if (s.capability(c).isPresent()) {
                declared.add(c.getSimpleName());
            }
        }
        Set<Class<?>> expected = hooks().expectedCapabilities();
        assertNotNull(expected, hooks().expectationSource() + " returned null; return Set.of() for a plain store");
        for (Class<?> e : expected) {
            Optional<?> found = s.capability(e);
            assertTrue(found.isPresent(), "store does not declare " + e.getSimpleName()
                    + " although " + hooks().expectationSource() + " lists it; it declares " + declared);
            assertTrue(e.isInstance(found.get()), "capability(" + e.getSimpleName()
                    + ") returned an object of the wrong type: " + found.get().getClass().getName());
        }
        assertFalse(s.capability(String.class).isPresent(), "capability(String.class) must be empty");
        if (declared.isEmpty() && expected.isEmpty() && !hooks().expectationsStated()) {
            fail("the store declares no optional capability (AtomicUpdates, TrialClaims, "
                    + "TransitionFeed) and no expectation was stated, so every rule group but R1 would be "
                    + "skipped and the run would look green; if the store is meant to be plain, say so with "
                    + TckRunner.EXPECT_PARAMETER + "=none (redeye tck --expect none), else check capability(Class)");
        }
    }

    /**
     * R1.1 {@code get} of a key never written returns empty. If this fails, check that {@code get} returns
     * {@code Optional.empty()}, never null and never a synthesized initial state.
     */
    @Test
    @DisplayName("R1.1 get of a key never written returns empty")
    default void r1_1_getOfUnknownKeyIsEmpty() {
        Store a = client();
        Optional<BreakerState> got = a.get(key("never-written"));
        assertNotNull(got, "get returned null instead of Optional.empty()");
        assertEquals(Optional.empty(), got, "get of a key never written");
    }

    /**
     * R1.2 {@code put} then {@code get} from the other client returns every field exactly. If this fails,
     * check the stored layout: every field written, doubles written so that they round-trip, longs kept as
     * 64-bit values.
     */
    @Test
    @DisplayName("R1.2 put then get from the other client returns every field exactly")
    default void r1_2_putThenGetRoundTripsEveryField() {
        Store a = client();
        Store b = client();
        for (BreakerState s : List.of(RICH, RICH_FORCED, BreakerState.INITIAL,
                RICH.toBuilder().errorRate(1.0).version(BreakerState.UNKNOWN_VERSION).build())) {
            String k = key("rich-" + s.hashCode());
            a.put(k, s, STATE_TTL);
            BreakerState got = b.get(k).orElseThrow(() -> new AssertionError("get after put is empty"));
            assertSameState(s, got, "state written by one client, read by the other");
        }
    }

    /** R1.3 {@code put} overwrites; the last put wins. If this fails, check that put replaces the whole state. */
    @Test
    @DisplayName("R1.3 put overwrites; the last put wins")
    default void r1_3_lastPutWins() {
        Store a = client();
        Store b = client();
        String k = key("overwrite");
        a.put(k, RICH, STATE_TTL);
        b.put(k, RICH_FORCED, STATE_TTL);
        assertSameState(RICH_FORCED, a.get(k).orElseThrow(), "after a second put from the other client");
        a.put(k, BreakerState.INITIAL, STATE_TTL);
        assertSameState(BreakerState.INITIAL, b.get(k).orElseThrow(), "after a third put");
    }

    /**
     * R1.4 {@code delete} removes the state and every trial claim of the key; deleting an unknown key is a
     * no-op. If this fails, check that delete also removes the claims of the key.
     */
    @Test
    @DisplayName("R1.4 delete removes the state and the claims of the key; unknown key is a no-op")
    default void r1_4_deleteRemovesStateAndClaims() {
        Store a = client();
        Store b = client();
        String k = key("deleted");
        a.put(k, RICH, STATE_TTL);
        Optional<TrialClaims> claims = a.capability(TrialClaims.class);
        if (claims.isPresent()) {
            assertTrue(claims.get().claimTrial(k, 1, Duration.ofMinutes(5)).isPresent(), "first claim");
        }
        b.delete(k);
        assertEquals(Optional.empty(), a.get(k), "get after delete from the other client");
        if (claims.isPresent()) {
            assertTrue(claims.get().claimTrial(k, 1, Duration.ofMinutes(5)).isPresent(),
                    "a claim after delete must succeed: delete must remove the key's trial claims");
        }
        b.delete(key("never-written"));
        b.delete(k);
        assertEquals(Optional.empty(), b.get(key("never-written")));
    }

    /**
     * R1.5 Hostile keys round-trip and stay distinct. If this fails, check that keys are bound as parameters
     * (never concatenated into a script or SQL), that long keys are supported, and that the claim namespace
     * cannot collide with a state key.
     */
    @Test
    @DisplayName("R1.5 hostile keys round-trip and stay distinct")
    default void r1_5_hostileKeysRoundTripAndStayDistinct() {
        Store a = client();
        Store b = client();
        List<String> names = hostileNames();
        for (int i = 0; i < names.size(); i++) {
            a.put(key(names.get(i)), BreakerState.INITIAL.toBuilder().failures(i + 1).version(i).build(), STATE_TTL);
        }
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            Optional<BreakerState> got = b.get(key(name));
            assertTrue(got.isPresent(), "key " + describe(name) + " was written but reads as empty");
            assertEquals(i + 1, got.get().failures(), "key " + describe(name)
                    + " reads the state of another key (failures identify the key)");
        }
        assertEquals(Optional.empty(), b.get(key("a:trial:x")), "a key never written");
        Optional<TrialClaims> claims = a.capability(TrialClaims.class);
        if (claims.isPresent()) {
            for (String name : names) {
                assertTrue(claims.get().claimTrial(key(name), 1, Duration.ofMinutes(5)).isPresent(),
                        "claim of key " + describe(name) + " must not collide with the claim of another key");
            }
            for (int i = 0; i < names.size(); i++) {
                assertEquals(i + 1, b.get(key(names.get(i))).orElseThrow().failures(),
                        "claims must not overwrite the state of key " + describe(names.get(i)));
            }
        }
        a.delete(key("a"));
        assertEquals(Optional.empty(), b.get(key("a")), "deleted key");
        assertTrue(b.get(key("a:trial")).isPresent(), "deleting 'a' must not delete 'a:trial'");
        assertTrue(b.get(key("{a")).isPresent(), "deleting 'a' must not delete '{a'");
    }

    /**
     * R1.6 One store instance serves many keys with different policies at once. If this fails, check that the
     * store uses the policy passed with each call and caches nothing per instance.
     */
    @Test
    @DisplayName("R1.6 one store instance serves many keys with different policies at once")
    default void r1_6_manyKeysWithDifferentPolicies() {
        Store a = client();
        Store b = client();
        Optional<AtomicUpdates> rec = a.capability(AtomicUpdates.class);
        int keys = 6;
        if (rec.isEmpty()) {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < keys; i++) {
                    a.put(key("k" + i), BreakerState.INITIAL.toBuilder().failures(round * 10 + i).build(), STATE_TTL);
                }
            }
            for (int i = 0; i < keys; i++) {
                assertEquals(20 + i, b.get(key("k" + i)).orElseThrow().failures(), "key k" + i);
            }
            return;
        }
        long now = T0;
        // key i opens after i + 1 failures; failures are interleaved across keys.
        for (int round = 1; round <= keys; round++) {
            for (int i = 0; i < keys; i++) {
                Policy p = consecutive(i + 1);
                StateChange c = rec.get().apply(key("k" + i), AtomicOperation.failure(), p, now++);
                boolean shouldOpen = round == i + 1;
                assertEquals(shouldOpen, c.isTransition(), "failure " + round + " of key k" + i
                        + " with failureThreshold " + (i + 1) + ": transition reported");
            }
        }
        for (int i = 0; i < keys; i++) {
            BreakerState s = b.get(key("k" + i)).orElseThrow();
            assertTrue(s.open(), "key k" + i + " must be open");
            assertEquals(i + 1, openedRound(s, keys), "key k" + i + " opened at the wrong failure");
            assertEquals(keys, s.failures(), "key k" + i + " failures");
        }
    }

    /** Which round a key of R1.6 opened in, from its openedAt (rounds advance now by {@code keys}). */
    private static long openedRound(BreakerState s, int keys) {
        return (s.openedAt() - T0) / keys + 1;
    }

    /**
     * R1.7 Malformed data under a key makes {@code get} throw {@link StoreException}. If this fails, check
     * that decoding errors are caught and wrapped, never leaked as the backend's type and never turned into an
     * empty or reset state. Skipped when the {@code corrupt} hook is not provided.
     */
    @Test
    @DisplayName("R1.7 malformed data under a key makes get throw StoreException")
    default void r1_7_malformedDataIsAStoreException() throws Exception {
        Store a = client();
        Store b = client();
        String k = key("corrupt");
        a.put(k, RICH, STATE_TTL);
        try {
            hooks().corrupt(a, k);
        } catch (UnsupportedOperationException e) {
            Assumptions.abort("the corrupt(Store, String) hook is not provided");
        }
        assertThrowsStoreException(() -> b.get(k), "get of malformed data");
        Optional<AtomicUpdates> rec = b.capability(AtomicUpdates.class);
        if (rec.isPresent()) {
            assertThrowsStoreException(() -> rec.get().apply(k, AtomicOperation.failure(), consecutive(5), T0),
                    "recordFailure over malformed data (a silent reset is not allowed)");
            assertThrowsStoreException(() -> b.get(k), "get of malformed data after recordFailure");
        }
    }

    /**
     * R1.8 After {@code close()}, every method fails fast with {@link StoreException}; closing twice is
     * harmless. If this fails, check for a closed flag tested at the start of every method.
     */
    @Test
    @DisplayName("R1.8 after close every method fails fast; close twice is harmless")
    default void r1_8_closedStoreFailsFast() {
        Store s = client();
        String k = key("closed");
        Policy p = consecutive(5);
        Optional<AtomicUpdates> updates = s.capability(AtomicUpdates.class);
        Optional<TrialClaims> claims = s.capability(TrialClaims.class);
        Optional<TransitionFeed> feed = s.capability(TransitionFeed.class);
        s.put(k, RICH, STATE_TTL);
        s.close();
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            s.close();
            assertThrowsStoreException(() -> s.get(k), "get after close");
            assertThrowsStoreException(() -> s.put(k, RICH, STATE_TTL), "put after close");
            assertThrowsStoreException(() -> s.delete(k), "delete after close");
            if (updates.isPresent()) {
                AtomicUpdates u = updates.get();
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.failure(), p, T0), "recordFailure after close");
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.success(), p, T0), "recordSuccess after close");
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.outcome(false), p, T0),
                        "recordOutcome after close");
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.trialSucceeded(0), p, T0),
                        "trialSucceeded after close");
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.trialFailed(0), p, T0), "trialFailed after close");
                assertThrowsStoreException(() -> u.apply(k, AtomicOperation.force(BreakerStatus.CLOSED), p, T0),
                        "force after close");
            }
            if (claims.isPresent()) {
                assertThrowsStoreException(() -> claims.get().claimTrial(k, 1, Duration.ofSeconds(5)),
                        "claimTrial after close");
                assertThrowsStoreException(() -> claims.get().releaseTrial(k, "token"), "releaseTrial after close");
            }
            if (feed.isPresent()) {
                assertThrowsStoreException(() -> feed.get().subscribe(e -> { }, () -> { }), "subscribe after close");
            }
            s.close();
        }, "a method of a closed store hangs instead of failing fast");
    }

    /**
     * R1.9 (real time) A forced state is never expired: put of a forced state with a short ttl is still
     * readable, forced, after the ttl. If this fails, check that put stores a forced state without expiry,
     * whatever ttl it is given (an expired key silently closes a breaker an operator holds open).
     */
    @Test
    @DisplayName("R1.9 (real time) a forced state put with a short ttl does not expire")
    default void r1_9_forcedStateIsNeverExpired() throws InterruptedException {
        Store a = client();
        Store b = client();
        String k = key("forced-ttl");
        BreakerState held = BreakerState.builder().open(true).forced(true).openedAt(T0).version(4).build();
        a.put(k, held, SHORT_STATE_TTL);
        Thread.sleep(FORCED_WAIT_MILLIS);
        Optional<BreakerState> read = b.get(k);
        assertTrue(read.isPresent(), "a forced state put with a ttl of " + SHORT_STATE_TTL.toMillis()
                + " ms was gone " + FORCED_WAIT_MILLIS + " ms later: the breaker an operator held open closed");
        assertTrue(read.get().forced(), "the state read back is no longer forced: " + read.get());
    }

    /**
     * A policy whose state expires after {@code stateTtl} (reset windows of 10 ms keep it valid) and whose
     * first failure opens.
     */
    static Policy shortLived(Duration stateTtl, int failureThreshold) {
        return Policy.builder().failureThreshold(failureThreshold).resetTimeout(Duration.ofMillis(10))
                .maxResetTimeout(Duration.ofMillis(10)).stateTtl(stateTtl).jitter(0).build();
    }

    /**
     * R1.10 (real time) Versions of a key never go backwards, across delete and backend expiry. If this fails,
     * check the version an atomic operation starts from when the key is absent.
     */
    @Test
    @DisplayName("R1.10 (real time) versions of a key never go backwards across delete and expiry")
    default void r1_10_versionsNeverGoBackwards() {
        Store a = client();
        Store b = client();
        needAtomic(a);
        Policy p = shortLived(SHORT_STATE_TTL, 1);
        String k = key("lives");
        long now = T0;
        long highest = Long.MIN_VALUE;
        for (int i = 0; i < 3; i++) {
            highest = Math.max(highest, atomicTransition(i % 2 == 0 ? a : b, k, p, now += 1_000).state().version());
        }
        b.delete(k);
        assertEquals(Optional.empty(), a.get(k), "get after delete");
        StateChange reborn = atomicTransition(a, k, p, now += 1_000);
        assertTrue(reborn.state().version() > highest, "after delete, the first transition of the key's new life "
                + "has version " + reborn.state().version() + ", not above " + highest
                + ", the highest version of its previous life (it started from " + reborn.previous() + ")");
        highest = reborn.state().version();
        highest = Math.max(highest, atomicTransition(b, k, p, now += 1_000).state().version());
        if (!eventually(() -> a.get(k).isEmpty())) {
            fail("a state written with stateTtl " + SHORT_STATE_TTL.toMillis() + " ms did not expire within "
                    + patience().toMillis() + " ms");
        }
        StateChange afterExpiry = atomicTransition(b, k, p, now + 1_000);
        assertTrue(afterExpiry.state().version() > highest, "after the state expired, the first transition of the "
                + "key's new life has version " + afterExpiry.state().version() + ", not above " + highest
                + ", the highest version of its previous life (it started from " + afterExpiry.previous() + ")");
        assertEquals(afterExpiry.state().version(), a.get(k).orElseThrow().version(), "stored version");
    }

    /**
     * R1.11 (real time) An atomic write refreshes the state's ttl; a state not written again expires after
     * stateTtl. If this fails, check that every atomic write that writes sets the policy's stateTtl.
     */
    @Test
    @DisplayName("R1.11 (real time) an atomic write refreshes the ttl; a state not written again expires")
    default void r1_11_atomicWritesRefreshTheTtl() {
        Store a = client();
        Store b = client();
        needAtomic(a);
        long ttl = 500;
        Policy p = shortLived(Duration.ofMillis(ttl), 1_000_000);
        String k = key("refreshed");
        long start = System.nanoTime();
        long lastWrite = write(a, k, p, 1);
        int judged = 0;
        for (int i = 2; System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(3 * ttl); i++) {
            sleep(ttl / 5);
            boolean present = b.get(k).isPresent();
            // An upper bound on the state's age when it was read: the read happened before this reading, and
            // the last write started its ttl after the reading write() returned.
            long sinceLast = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastWrite);
            if (sinceLast < ttl * 3 / 4) { // a stalled machine cannot judge this round
                judged++;
                assertTrue(present, "the state was gone at most " + sinceLast + " ms after it was last written and "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms after it was first "
                        + "written (stateTtl " + ttl + " ms): an atomic write must refresh the ttl");
            }
            lastWrite = write(i % 2 == 0 ? b : a, k, p, i);
        }
        assertTrue(judged > 0, "the machine was too slow to judge a single round");
        if (!eventually(() -> b.get(k).isEmpty())) {
            fail("a state written with stateTtl " + ttl + " ms was still there " + patience().toMillis()
                    + " ms after its last write: atomic writes must store the state with the policy's stateTtl");
        }
    }

    /**
     * R1.12 (real time) A new life of a key, after its state expired and after delete, starts above every
     * version the key had. If this fails, check the version base of an absent key: the last version + 1.
     */
    @Test
    @DisplayName("R1.12 (real time) a new life after expiry or delete starts above the version it replaced")
    default void r1_12_aNewLifeStartsAboveTheVersionItReplaced() {
        Store a = client();
        Store b = client();
        needAtomic(a);
        Policy opens = shortLived(SHORT_STATE_TTL, 1);
        Policy counts = shortLived(SHORT_STATE_TTL, 1_000_000); // a failure is a write, not a transition
        String k = key("above");
        long now = T0;
        long last = 0;
        for (int i = 0; i < 3; i++) {
            last = atomicTransition(i % 2 == 0 ? a : b, k, opens, now += 1_000).state().version();
        }
        b.delete(k);
        assertNewLifeAbove(a, b, k, counts, now += 1_000, last, "after delete");
        last = atomicTransition(b, k, opens, now += 1_000).state().version();
        last = Math.max(last, atomicTransition(a, k, opens, now += 1_000).state().version());
        if (!eventually(() -> b.get(k).isEmpty())) {
            fail("a state written with stateTtl " + SHORT_STATE_TTL.toMillis() + " ms did not expire within "
                    + patience().toMillis() + " ms");
        }
        assertNewLifeAbove(b, a, k, counts, now + 1_000, last, "after the backend expired the state");
    }

    /**
     * The first write of a new life of {@code k} through {@code writer} (a sub-threshold failure under
     * {@code counts}) must start from {@code initial(v)} with {@code v > last}, and the stored state carries that
     * base.
     */
    private static void assertNewLifeAbove(Store writer, Store reader, String k, Policy counts, long now, long last,
            String when) {
        StateChange c = updates(writer).apply(k, AtomicOperation.failure(), counts, now);
        BreakerState p = c.previous();
        assertTrue(p.version() >= 0 && p.equals(BreakerState.initial(p.version())), when + ", the key is absent, "
                + "so the first write of its new life must start from BreakerState.initial(v), but it reported the "
                + "previous state " + p);
        assertTrue(p.version() > last, when + ", the first write of the key's new life started from version "
                + p.version() + ", " + (p.version() == last ? "the very version" : "not above the version")
                + " the key's previous life ended at (" + last + "): a new life must start above it, else a write "
                + "of the new life that is not a transition carries the old version and looks like the old state to "
                + "every cache holding it");
        assertEquals(c.state().version(), reader.get(k).orElseThrow().version(), when + ": the stored version");
    }

    /**
     * One atomic write of {@code k} that is not forced (a sub-threshold failure), and the {@link System#nanoTime()}
     * read before the call: the store starts the ttl within the call, so time measured from this reading is at
     * least the state's age. A reading after the call would make an answer that arrives late (a stalled network,
     * a loaded machine) shorten the measured age, and a state expired on time would look expired early.
     */
    private static long write(Store s, String k, Policy p, int i) {
        long before = System.nanoTime();
        updates(s).apply(k, AtomicOperation.failure(), p, T0 + i);
        return before;
    }

    static void assertThrowsStoreException(Executable call, String what) {
        Throwable t = assertThrows(Throwable.class, call, what + " must throw StoreException, but returned");
        if (!(t instanceof StoreException)) {
            fail(what + " must throw StoreException, but threw " + t, t);
        }
    }

}

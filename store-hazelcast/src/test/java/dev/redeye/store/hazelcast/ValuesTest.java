package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.nio.serialization.HazelcastSerializationException;
import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Contribution;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.api.SlidingWindowType;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Transitions;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The stored values, the member replies and the detection of members that cannot run the processors. */
class ValuesTest {
    private static final BreakerState RICH = new BreakerState(7, 1_700_000_123_456L, true, 1_700_000_100_000L, 3,
            0.1 + 0.2, 12_345_678_901L, 2, false, 42L);

    private static final Policy POLICY = Policy.builder().failureThreshold(3).jitter(0)
            .stateTtl(Duration.ofMinutes(20)).build();

    @Test
    void statesRoundTripBitExactWithTheirTransitionExpiryAndClaims() {
        StoredValue plain = StoredValue.of(RICH, null, 1_000L, 500L, Map.of());
        assertEquals(plain, StateValues.decode(StateValues.encode(plain), "x"));
        assertEquals(1_500L, plain.expiresAt);
        assertEquals(Double.doubleToRawLongBits(0.1 + 0.2),
                Double.doubleToRawLongBits(StateValues.decode(StateValues.encode(plain), "x").state.errorRate()));
        StateChange c = Transitions.force(RICH, BreakerStatus.FORCED_OPEN, Policy.defaults(), 5);
        StoredValue forced = StoredValue.of(c.state(), c.toEvent("op", Policy.defaults(), 5), 1_000L, 500L,
                Map.of("t1", 2_000L, "t2", 3_000L));
        String v = StateValues.encode(forced);
        assertTrue(v.startsWith(StateValues.BASE_TRANSITION_PREFIX), v);
        assertTrue(!v.contains(StateValues.EXPIRES_AT), "a forced state has no expiry: " + v);
        StoredValue back = StateValues.decode(v, "x");
        assertEquals(forced, back);
        assertEquals(Map.of("t1", 2_000L, "t2", 3_000L), back.claims);
        TransitionEvent e = back.event("op");
        assertEquals(TransitionKind.FORCED_OPEN, e.kind());
        assertEquals(c.state(), e.state());
        assertNull(plain.event("op"), "a plain write is no event");
        assertNull(back.withClaims(Map.of()).event("op"), "a claim's write is no transition");
        assertEquals(c, StateValues.readResult(StateValues.result(c), "x"));
    }

    private static final SlidingWindow COUNT_WINDOW = SlidingWindow.decode("c5.7.20011");
    private static final SlidingWindow TIME_WINDOW = SlidingWindow.decode("t3.588235294..4-1.2-0-2");

    /** The value a state without a window or a stored mode is written as, exactly as the previous release wrote it. */
    private static final String FORMAT_2 = "redeye-state/2 failures=7&lastFailureAt=1700000123456&open=1"
            + "&openedAt=1700000100000&openCount=3&errorRate=0.30000000000000004&samples=12345678901&trialSuccesses=2"
            + "&forced=0&version=42&expiresAt=1500&claim.t1=2000";

    /**
     * A state with a window or a stored mode is written in format 3, with every field: the window in its canonical
     * text, the mode as its code; it reads back equal, as a plain write, a transition's write and a member's reply.
     */
    @Test
    void windowsAndModesRoundTripInFormat3() {
        BreakerState[] states = {RICH.toBuilder().window(COUNT_WINDOW).build(),
            RICH.toBuilder().open(false).window(TIME_WINDOW).mode(BreakerMode.DISABLED).build(),
            RICH.toBuilder().mode(BreakerMode.METRICS_ONLY).build(),
            RICH.toBuilder().forced(true).mode(BreakerMode.NORMAL).window(SlidingWindow.empty(
                    SlidingWindowType.TIME_BASED, 86_400)).build()};
        for (BreakerState st : states) {
            StoredValue plain = StoredValue.of(st, null, 1_000L, 500L, Map.of("t1", 2_000L));
            String v = StateValues.encode(plain);
            assertTrue(v.startsWith("redeye-state/3 "), v);
            if (st.window() != null) {
                assertTrue(v.contains("&window=" + st.window().encode() + "&"), v);
            }
            if (st.mode() != BreakerMode.DEFAULT) {
                assertTrue(v.contains("&mode=" + st.mode().code() + "&"), v);
            }
            assertEquals(plain, StateValues.decode(v, "x"));
            StateChange c = new StateChange(st.withVersion(st.version() - 1), st, TransitionKind.MODE_CHANGED);
            StoredValue transition = StoredValue.of(st, c.toEvent("op", POLICY, 5), 1_000L, 500L, Map.of());
            String tv = StateValues.encode(transition);
            assertTrue(tv.startsWith(StateValues.TRANSITION_PREFIX) && tv.startsWith("redeye-state/3 kind="), tv);
            assertEquals(transition, StateValues.decode(tv, "x"));
            assertEquals(c.toEvent("op", POLICY, 5), StateValues.decode(tv, "x").event("op"));
            assertEquals(c, StateValues.readResult(StateValues.result(c), "x"));
        }
    }

    /**
     * A state without a window or a stored mode is still written in format 2, byte for byte as before, so that a
     * reader of format 2 alone reads it in full; and a format-2 value of the previous release reads as it did.
     */
    @Test
    void statesWithoutWindowOrModeKeepFormat2AndThePreviousValuesStillRead() {
        StoredValue v = StateValues.decode(FORMAT_2, "x");
        assertEquals(RICH, v.state);
        assertEquals(1_500L, v.expiresAt);
        assertEquals(Map.of("t1", 2_000L), v.claims);
        assertEquals(FORMAT_2, StateValues.encode(v), "written again exactly as the previous release wrote it");
        StoredValue t = StateValues.decode("redeye-tombstone/2 version=17&expiresAt=9000", "x");
        assertEquals("redeye-tombstone/2 version=17&expiresAt=9000", StateValues.encode(t));
        StateChange c = Transitions.force(RICH, BreakerStatus.FORCED_OPEN, Policy.defaults(), 5);
        assertTrue(StateValues.encode(StoredValue.of(c.state(), c.toEvent("op", Policy.defaults(), 5), 0L, 1L,
                Map.of())).startsWith(StateValues.BASE_TRANSITION_PREFIX), "a forced state without a mode: format 2");
    }

    /**
     * The previous release reads a value only if it starts with {@code redeye-state/2 } or
     * {@code redeye-tombstone/2 }, and refuses any other {@code redeye-state/<n>} naming its format (the family
     * check this class still runs, shown here on a format this version does not read either). A value carrying a
     * window or a mode never starts with those prefixes, so the previous release refuses it rather than drop the
     * fields; and a format-2 value that holds either field is malformed here, since that format has none.
     */
    @Test
    void format3IsRefusedByAFormat2ReaderAndFormat2CarriesNoWindowOrMode() {
        for (BreakerState st : new BreakerState[] {RICH.toBuilder().window(COUNT_WINDOW).build(),
            RICH.toBuilder().mode(BreakerMode.METRICS_ONLY).build()}) {
            String v = StateValues.encode(StoredValue.of(st, null, 1_000L, 500L, Map.of()));
            assertFalse(v.startsWith("redeye-state/2 ") || v.startsWith("redeye-tombstone/2 "), v);
            assertTrue(v.startsWith("redeye-state/3 "), v);
        }
        StoreException e = assertThrows(StoreException.class,
                () -> StateValues.decode("redeye-state/5 failures=0&window=c5.0.", "x"));
        assertTrue(e.getMessage().contains("is in redeye-state/5 format, written by another redeye version")
                && e.getMessage().contains("reads redeye-state/2, redeye-state/3 and redeye-state/4 only"),
                e.getMessage());
        String withWindow = FORMAT_2.replace("&version=42", "&window=c5.7.20011&version=42");
        e = assertThrows(StoreException.class, () -> StateValues.decode(withWindow, "x"));
        assertTrue(e.getMessage().contains("a redeye-state/2 value has no 'window' or 'mode' field"), e.getMessage());
        String withMode = FORMAT_2.replace("&version=42", "&mode=2&version=42");
        assertThrows(StoreException.class, () -> StateValues.decode(withMode, "x"));
        assertEquals(RICH.toBuilder().mode(BreakerMode.METRICS_ONLY).build(),
                StateValues.decode(withMode.replace("redeye-state/2 ", "redeye-state/3 "), "x").state);
        assertThrows(StoreException.class, () -> StateValues.decode(withWindow.replace("redeye-state/2 ",
                "redeye-state/3 ").replace("c5.7.20011", "c5.7.2001"), "x"), "a malformed window");
    }

    private static final List<Contribution> CONTRIBUTIONS = List.of(new Contribution("pod-b", 1, 1, 1_700_000_123_456L),
            new Contribution("pod-a@host:8080/x#1_2.3", 6, 9, 1_700_000_100_000L));

    /** A state with a window and a mode, exactly as the previous release (formats 2 and 3) wrote it. */
    private static final String FORMAT_3 = "redeye-state/3 failures=7&lastFailureAt=1700000123456&open=1"
            + "&openedAt=1700000100000&openCount=3&errorRate=0.30000000000000004&samples=12345678901&trialSuccesses=2"
            + "&forced=0&window=c5.7.20011&mode=2&version=42&claim.t1=2000"; // a stored mode: pinned, no expiresAt

    /**
     * A state with contributions is written in format 4, whatever its window and mode, with every contribution
     * in {@code Contribution.encodeAll}'s text; it reads back equal, as a plain write, a transition's write (which
     * the feed's filter matches) and a member's reply.
     */
    @Test
    void contributionsRoundTripInFormat4() {
        BreakerState[] states = {RICH.toBuilder().contributors(CONTRIBUTIONS).build(),
            RICH.toBuilder().contributors(CONTRIBUTIONS.subList(0, 1)).window(TIME_WINDOW).build(),
            RICH.toBuilder().open(false).contributors(CONTRIBUTIONS).window(COUNT_WINDOW).mode(BreakerMode.NORMAL)
                    .build()};
        for (BreakerState st : states) {
            StoredValue plain = StoredValue.of(st, null, 1_000L, 500L, Map.of("t1", 2_000L));
            String v = StateValues.encode(plain);
            assertTrue(v.startsWith("redeye-state/4 "), v);
            assertTrue(v.contains("&contributors=" + Contribution.encodeAll(st.contributors()) + "&"), v);
            assertEquals(plain, StateValues.decode(v, "x"));
            assertEquals(st.contributors(), StateValues.decode(v, "x").state.contributors());
            StateChange c = new StateChange(st.withVersion(st.version() - 1), st, TransitionKind.OPENED);
            StoredValue transition = StoredValue.of(st, c.toEvent("op", POLICY, 5), 1_000L, 500L, Map.of());
            String tv = StateValues.encode(transition);
            assertTrue(tv.startsWith(StateValues.QUORUM_TRANSITION_PREFIX) && tv.startsWith("redeye-state/4 kind="),
                    tv);
            assertEquals(transition, StateValues.decode(tv, "x"));
            assertEquals(c.toEvent("op", POLICY, 5), StateValues.decode(tv, "x").event("op"));
            assertEquals(c, StateValues.readResult(StateValues.result(c), "x"));
        }
        StoredValue sixteen = StoredValue.of(RICH.toBuilder().contributors(java.util.stream.IntStream
                .range(0, BreakerState.MAX_CONTRIBUTORS).mapToObj(i -> new Contribution("i" + i, i, i + 1, i))
                .toList()).build(), null, 0L, 0L, Map.of());
        assertEquals(sixteen, StateValues.decode(StateValues.encode(sixteen), "x"), "the most a state holds");
    }

    /**
     * The values of the previous release still read, and a state without contributions is written exactly as it
     * wrote it (formats 2 and 3), so that instances of both share such keys during a rolling upgrade; a state that
     * loses its contributions (the breaker closed, its scope ended) goes back to format 2 or 3.
     */
    @Test
    void statesWithoutContributionsKeepTheirFormatAndThePreviousValuesStillRead() {
        StoredValue v = StateValues.decode(FORMAT_3, "x");
        assertEquals(RICH.toBuilder().window(COUNT_WINDOW).mode(BreakerMode.METRICS_ONLY).build(), v.state);
        assertEquals(FORMAT_3, StateValues.encode(v), "written again exactly as the previous release wrote it");
        assertEquals(FORMAT_2, StateValues.encode(StateValues.decode(FORMAT_2, "x")));
        BreakerState with = RICH.toBuilder().contributors(CONTRIBUTIONS).build();
        assertTrue(StateValues.encode(StoredValue.of(with.toBuilder().contributors(List.of()).build(), null, 0L, 1L,
                Map.of())).startsWith("redeye-state/2 "));
        assertTrue(StateValues.encode(StoredValue.of(with.toBuilder().contributors(List.of()).window(COUNT_WINDOW)
                .build(), null, 0L, 1L, Map.of())).startsWith("redeye-state/3 "));
    }

    /**
     * The previous release reads a state only if it starts with {@code redeye-state/2 } or {@code redeye-state/3 }
     * and refuses any other {@code redeye-state/<n>} naming its format (the family check this class still runs,
     * shown above on format 5). A value with contributions never starts with those prefixes, whatever its window
     * and mode, so the previous release refuses it rather than read it without its contributions and write it
     * back without them.
     */
    @Test
    void format4IsRefusedByAFormat3Reader() {
        for (BreakerState st : new BreakerState[] {RICH.toBuilder().contributors(CONTRIBUTIONS).build(),
            RICH.toBuilder().contributors(CONTRIBUTIONS).window(COUNT_WINDOW).mode(BreakerMode.DISABLED).build()}) {
            for (TransitionKind kind : new TransitionKind[] {null, TransitionKind.OPENED}) {
                String v = StateValues.encode(StoredValue.of(st, kind == null ? null
                        : new StateChange(st, st.withVersion(st.version() + 1), kind).toEvent("op", POLICY, 5),
                        1_000L, 500L, Map.of()));
                assertFalse(v.startsWith("redeye-state/2 ") || v.startsWith("redeye-state/3 ")
                        || v.startsWith("redeye-tombstone/2 "), v);
                assertTrue(v.startsWith("redeye-state/4 "), v);
            }
        }
    }

    /**
     * Contributions only in format 4, and well-formed: a {@code contributors} field in a format-2 or format-3
     * value, a format-4 value without one or with none in it, and a field {@code Contribution.decodeAll} refuses
     * (a broken contribution, an invalid instance id, more failures than calls, an instance twice, more than 16)
     * are each a {@code StoreException}, never read as a state without contributions; a member's reply too.
     */
    @Test
    void malformedContributionsAreRefused() {
        String four = StateValues.encode(StoredValue.of(RICH.toBuilder().contributors(CONTRIBUTIONS).build(), null,
                1_000L, 500L, Map.of()));
        String field = "&contributors=" + Contribution.encodeAll(CONTRIBUTIONS);
        assertTrue(four.contains(field), four);
        String withoutField = four.replace(field, "");
        StoreException e = assertThrows(StoreException.class, () -> StateValues.decode(withoutField, "x"));
        assertTrue(e.getMessage().contains("a redeye-state/4 value needs a 'contributors' field"), e.getMessage());
        e = assertThrows(StoreException.class, () -> StateValues.decode(four.replace(field, "&contributors="), "x"));
        assertTrue(e.getMessage().contains("holds at least one contribution"), e.getMessage());
        for (String base : new String[] {FORMAT_2, FORMAT_3}) {
            String extra = base.replace("&version=42", field + "&version=42");
            e = assertThrows(StoreException.class, () -> StateValues.decode(extra, "x"));
            assertTrue(e.getMessage().contains("value has no 'contributors' field (that is redeye-state/4's)"),
                    e.getMessage());
        }
        String seventeen = java.util.stream.IntStream.rangeClosed(0, BreakerState.MAX_CONTRIBUTORS)
                .mapToObj(i -> "i" + i + ",1,1,5").collect(java.util.stream.Collectors.joining(";"));
        for (String bad : new String[] {"pod-a,1,1", "pod a,1,1,5", "pod-a,2,1,5", "pod-a,-1,1,5", "pod-a,x,1,5",
            "pod-a,1,1,5;pod-a,1,1,6", "pod-a,1,1,5;", seventeen}) {
            String v = four.replace(field, "&contributors=" + bad);
            assertThrows(StoreException.class, () -> StateValues.decode(v, "x"), bad);
            String reply = StateValues.result(new StateChange(RICH, RICH.toBuilder().contributors(CONTRIBUTIONS)
                    .build(), null)).replace(Contribution.encodeAll(CONTRIBUTIONS), bad);
            assertThrows(StoreException.class, () -> StateValues.readResult(reply, "x"), "reply with " + bad);
        }
    }

    /** A pinned state (forced, or a stored mode) has no expiry in its value nor on its entry; others have both. */
    @Test
    void pinnedStatesNeverExpire() {
        for (BreakerMode m : BreakerMode.values()) {
            BreakerState st = RICH.toBuilder().open(false).mode(m).window(COUNT_WINDOW).build();
            StoredValue v = StoredValue.of(st, null, 1_000L, 500L, Map.of("a", 5_000L));
            boolean pinned = m != BreakerMode.DEFAULT;
            assertEquals(pinned, st.pinned());
            assertEquals(pinned ? StoredValue.NEVER : 1_500L, v.expiresAt, m.toString());
            assertEquals(pinned ? MemberProcessor.NO_EXPIRY : 4_000 + MemberProcessor.EXPIRY_MARGIN_MILLIS,
                    MemberProcessor.entryTtl(v, 1_000L), m.toString());
            assertEquals(pinned, !StateValues.encode(v).contains(StateValues.EXPIRES_AT + "=1500"), m.toString());
            assertEquals(v, StateValues.decode(StateValues.encode(v), "x"));
            assertEquals(pinned ? st : null, v.live(Long.MAX_VALUE - 1), m.toString());
        }
        Policy metrics = POLICY.toBuilder().mode(BreakerMode.METRICS_ONLY).build();
        StoredValue moded = Updates.change("op", StoredValue.NOTHING, AtomicOperation.forceMode(BreakerMode.DISABLED),
                true, POLICY, 1, 1_000).next;
        assertEquals(StoredValue.NEVER, moded.expiresAt, "a stored mode");
        StoredValue opened = Updates.change("op", StoredValue.NOTHING,
                AtomicOperation.force(BreakerStatus.FORCED_OPEN), false, metrics, 1, 1_000).next;
        assertEquals(BreakerMode.NORMAL, opened.state.mode(), "forced open under a metrics-only policy");
        assertEquals(StoredValue.NEVER, opened.expiresAt);
        StoredValue back = Updates.change("op", moded, AtomicOperation.forceMode(BreakerMode.DEFAULT), true, POLICY,
                2, 2_000).next;
        assertEquals(2_000 + POLICY.stateTtlMillis(), back.expiresAt, "the policy's mode again: the ttl applies");
    }

    @Test
    void anExpiredStateReadsAsAbsentAndItsNextLifeStartsAboveIt() {
        StoredValue v = StoredValue.of(RICH, null, 1_000L, 500L, Map.of());
        assertEquals(RICH, v.live(1_499L));
        assertNull(v.live(1_500L), "expired at expiresAt");
        assertEquals(43, v.newLifeBase(0L), "the next life starts above version 42");
        assertEquals(BreakerState.initial(2_000_000), v.current(2_000L), "or at the clock in µs, once expired");
        StoredValue forced = StoredValue.of(RICH.toBuilder().forced(true).open(true).build(), null, 1_000L, 500L,
                Map.of());
        assertEquals(StoredValue.NEVER, forced.expiresAt);
        assertTrue(forced.live(Long.MAX_VALUE - 1) != null, "a forced state never expires");
        assertEquals(StoredValue.NEVER, forced.cleanUpAt());
    }

    @Test
    void tombstonesAreAbsentButRememberTheirVersion() {
        StoredValue t = StateValues.decode("redeye-tombstone/2 version=17&expiresAt=9000", "x");
        assertNull(t.state);
        assertEquals(18, t.newLifeBase(0));
        assertEquals(1_000_000, t.newLifeBase(1_000));
        assertEquals(BreakerState.initial(18), t.current(0));
        assertEquals(7_000, StoredValue.NOTHING.newLifeBase(7));
        assertEquals("redeye-tombstone/2 version=17&expiresAt=9000", StateValues.encode(t));
        assertNull(StateValues.encode(StoredValue.NOTHING), "nothing is stored for nothing");
    }

    @Test
    void valuesOfAnotherFormatOrTypeAreRefusedSayingWhy() {
        StoreException e = assertThrows(StoreException.class, () -> StateValues.decode("redeye-tombstone/9 version=1", "x"));
        assertTrue(e.getMessage().contains("redeye-tombstone/9 format, written by another redeye version"),
                e.getMessage());
        e = assertThrows(StoreException.class, () -> StateValues.decode("redeye-state/1 failures=0", "x"));
        assertTrue(e.getMessage().contains("redeye-state/1 format"), e.getMessage());
        e = assertThrows(StoreException.class, () -> StateValues.decode(3L, "x"));
        assertTrue(e.getMessage().contains("java.lang.Long"), e.getMessage());
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-state/2 failures", "x"));
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-state/2 kind=nope&from=0", "x"));
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-tombstone/2 claim.a=soon", "x"));
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-tombstone/2 version=1&what=2", "x"));
        e = assertThrows(StoreException.class, () -> StateValues.readResult("Emalformed at op", "x"));
        assertEquals("malformed at op", e.getMessage());
    }

    /** The steps both modes run: the state, its expiry and the claims change together. */
    @Test
    void everyCallIsOneChangeOfTheWholeEntry() {
        Updates.Update<Boolean> claimed = Updates.claim(StoredValue.NOTHING, "a", 2, 500, 1_000);
        assertTrue(claimed.answer);
        assertEquals(Map.of("a", 1_500L), claimed.next.claims);
        assertNull(claimed.next.state, "a claim on a key without a state stores only the claim");
        Updates.Update<StateChange> failed = Updates.change("op", claimed.next, dev.redeye.spi.AtomicOperation.failure(),
                false, POLICY, 7, 1_100);
        assertEquals(1, failed.next.state.failures());
        assertEquals(1_100 + POLICY.stateTtlMillis(), failed.next.expiresAt, "the state's expiry is in the value");
        assertEquals(Map.of("a", 1_500L), failed.next.claims, "a state change keeps the live claims");
        Updates.Update<StateChange> closed = Updates.change("op", failed.next,
                dev.redeye.spi.AtomicOperation.force(BreakerStatus.CLOSED), true, POLICY, 8, 1_200);
        assertEquals(Map.of(), closed.next.claims, "an operation that removes claims removes them in the same write");
        assertNull(Updates.change("op", closed.next, dev.redeye.spi.AtomicOperation.success(), true, POLICY, 9, 1_300)
                .next, "nothing changes, no claim to remove: nothing is written");
        Updates.Update<StateChange> clears = Updates.change("op", closed.next.withClaims(Map.of("x", 9_999L)),
                dev.redeye.spi.AtomicOperation.success(), true, POLICY, 9, 1_300);
        assertEquals(closed.next.state, clears.next.state, "the rule changed nothing...");
        assertEquals(Map.of(), clears.next.claims, "...but the claims are removed all the same");
        Updates.Update<Boolean> second = Updates.claim(failed.next, "b", 2, 100, 1_200);
        assertEquals(false, Updates.claim(second.next, "c", 2, 100, 1_250).answer, "two live claims");
        assertTrue(Updates.claim(second.next, "c", 2, 100, 1_300).answer, "b expired at 1300");
        Updates.Update<Boolean> released = Updates.release(second.next, "a", 1_250);
        assertEquals(Map.of("b", 1_300L), released.next.claims);
        assertEquals(false, Updates.release(second.next, "zzz", 1_250).answer, "another token frees nothing");
        Updates.Update<Void> deleted = Updates.delete(second.next, 60_000, 2_000);
        assertEquals(Map.of(), deleted.next.claims);
        assertEquals(failed.next.state.version(), deleted.next.tombstone);
        assertEquals(62_000, deleted.next.expiresAt);
        assertNull(Updates.delete(deleted.next, 60_000, 3_000).next, "deleting a tombstone writes nothing");
        assertTrue(Updates.release(claimed.next, "a", 1_100).next.isEmpty(), "the last claim of a key without state");
        Updates.Update<Void> put = Updates.put(second.next, RICH, 1_000, 1_250);
        assertEquals(RICH, put.next.state);
        assertEquals(2_250, put.next.expiresAt);
        assertEquals(Map.of("a", 1_500L, "b", 1_300L), put.next.claims, "a put keeps the claims");
    }

    @Test
    void entryTtlsCoverTheValueAndGetTheExpiryMargin() {
        StoredValue v = StoredValue.of(RICH, null, 1_000L, 300L, Map.of("a", 5_000L));
        assertEquals(4_000 + MemberProcessor.EXPIRY_MARGIN_MILLIS, MemberProcessor.entryTtl(v, 1_000L),
                "the latest of the state's expiry and the claims'");
        assertEquals(300 + MemberProcessor.EXPIRY_MARGIN_MILLIS,
                MemberProcessor.entryTtl(v.withClaims(Map.of()), 1_000L));
        StoredValue forced = StoredValue.of(RICH.toBuilder().forced(true).open(true).build(), null, 1_000L, 300L,
                Map.of("a", 5_000L));
        assertEquals(MemberProcessor.NO_EXPIRY, MemberProcessor.entryTtl(forced, 1_000L));
    }

    @Test
    void membersThatCannotRunTheProcessorsAreRecognised() {
        assertTrue(MemberProbe.cannotRunProcessors(new HazelcastSerializationException(
                "java.lang.ClassNotFoundException: dev.redeye.store.hazelcast.StateProcessor")).contains("cannot load"));
        assertTrue(MemberProbe.cannotRunProcessors(new RuntimeException("wrapped",
                new ClassNotFoundException("dev.redeye.api.Policy"))).contains("cannot load"));
        assertTrue(MemberProbe.cannotRunProcessors(new HazelcastSerializationException("x", new IOException(
                "redeye-store-hazelcast: a client sent StateProcessor in wire version 2, this member runs 1")))
                .contains("another redeye-store-hazelcast wire version"));
        assertTrue(MemberProbe.cannotRunProcessors(new HazelcastSerializationException(
                "No DataSerializerFactory registered for namespace: " + RedeyeSerializableFactory.FACTORY_ID))
                .contains("has no dev.redeye.store.hazelcast.RedeyeSerializableFactory registered"));
        assertNull(MemberProbe.cannotRunProcessors(new HazelcastSerializationException(
                "No DataSerializerFactory registered for namespace: 7")), "another library's factory");
        assertNull(MemberProbe.cannotRunProcessors(new IllegalStateException("timeout")));
    }

}

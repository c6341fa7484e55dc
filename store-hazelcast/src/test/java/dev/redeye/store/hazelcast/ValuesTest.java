package dev.redeye.store.hazelcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.nio.serialization.HazelcastSerializationException;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.StoreException;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.api.Transitions;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The stored values, the member replies and the detection of members that cannot run the processors. */
class ValuesTest {
    private static final BreakerState RICH = new BreakerState(7, 1_700_000_123_456L, true, 1_700_000_100_000L, 3,
            0.1 + 0.2, 12_345_678_901L, 2, false, 42L);

    @Test
    void statesRoundTripBitExactWithTheirTransition() {
        assertEquals(RICH, StateValues.decode(StateValues.state(RICH), "x").state);
        assertEquals(Double.doubleToRawLongBits(0.1 + 0.2),
                Double.doubleToRawLongBits(StateValues.decode(StateValues.state(RICH), "x").state.errorRate()));
        StateChange c = Transitions.force(RICH, BreakerStatus.FORCED_OPEN, Policy.defaults(), 5);
        String v = StateValues.written(c, c.toEvent("op", Policy.defaults(), 5));
        assertTrue(v.startsWith(StateValues.TRANSITION_PREFIX), v);
        TransitionEvent e = StateValues.decode(v, "x").event("op");
        assertEquals(TransitionKind.FORCED_OPEN, e.kind());
        assertEquals(c.state(), e.state());
        assertNull(StateValues.decode(StateValues.state(RICH), "x").event("op"), "a plain write is no event");
        StateChange back = StateValues.readResult(StateValues.result(c), "x");
        assertEquals(c, back);
    }

    @Test
    void tombstonesAreAbsentButRememberTheirVersion() {
        StateValues.Decoded t = StateValues.decode(StateValues.tombstone(17), "x");
        assertNull(t.state);
        assertEquals(18, t.newLifeBase(5));
        assertEquals(1_000, t.newLifeBase(1_000));
        assertEquals(BreakerState.initial(18), t.current(5));
        assertEquals(7, StateValues.Decoded.ABSENT.newLifeBase(7));
    }

    @Test
    void valuesOfAnotherFormatOrTypeAreRefusedSayingWhy() {
        StoreException e = assertThrows(StoreException.class, () -> StateValues.decode("redeye-tombstone/9 version=1", "x"));
        assertTrue(e.getMessage().contains("redeye-tombstone/9 format, written by another redeye version"),
                e.getMessage());
        e = assertThrows(StoreException.class, () -> StateValues.decode(3L, "x"));
        assertTrue(e.getMessage().contains("java.lang.Long"), e.getMessage());
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-state/1 failures", "x"));
        assertThrows(StoreException.class, () -> StateValues.decode("redeye-state/1 kind=nope&from=0", "x"));
        e = assertThrows(StoreException.class, () -> StateValues.readResult("Emalformed at op", "x"));
        assertEquals("malformed at op", e.getMessage());
        e = assertThrows(StoreException.class, () -> ClaimValues.parse("redeye-claims/2 a=1", "x"));
        assertTrue(e.getMessage().contains("another redeye version"), e.getMessage());
    }

    @Test
    void claimsKeepTheirOwnExpiry() {
        Map<String, Long> m = ClaimValues.parse(null, "x");
        assertTrue(ClaimValues.tryAdd(m, 2, "a", 1_000, 500));
        assertTrue(ClaimValues.tryAdd(m, 2, "b", 1_100, 100));
        assertEquals(false, ClaimValues.tryAdd(m, 2, "c", 1_150, 100));
        assertTrue(ClaimValues.tryAdd(m, 2, "c", 1_200, 100), "b expired at 1200");
        assertEquals(Map.of("a", 1_500L, "c", 1_300L), ClaimValues.parse(ClaimValues.encode(m), "x"));
        assertEquals(1_500, ClaimValues.latestExpiry(m));
        m.clear();
        assertNull(ClaimValues.encode(m));
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
        assertNull(MemberProbe.cannotRunProcessors(new IllegalStateException("timeout")));
    }

    @Test
    void ttlsGetTheExpiryMargin() {
        assertEquals(0, MemberProcessor.entryTtl(MemberProcessor.NO_EXPIRY));
        assertEquals(MemberProcessor.KEEP_EXPIRY, MemberProcessor.entryTtl(MemberProcessor.KEEP_EXPIRY));
        assertEquals(1_300, MemberProcessor.entryTtl(300));
        assertEquals(Long.MAX_VALUE, MemberProcessor.entryTtl(Long.MAX_VALUE - 10));
    }
}

package dev.redeye.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.spi.Transitions;
import dev.redeye.spi.support.StateCodec;
import dev.redeye.spi.support.StoreUris;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PolicyAndCodecTest {

    @Test
    void defaultsMatchTheDesign() {
        Policy p = Policy.defaults();
        assertEquals(Strategy.CONSECUTIVE, p.strategy());
        assertEquals(5, p.failureThreshold());
        assertEquals(60_000, p.resetTimeoutMillis());
        assertEquals(480_000, p.maxResetTimeoutMillis());
        assertEquals(0.1, p.jitter());
        assertEquals(0.5, p.errorRateThreshold());
        assertEquals(10, p.minimumCalls());
        assertEquals(0.9, p.errorRateDecay());
        assertTrue(p.stateTtlMillis() > 2 * p.maxResetTimeoutMillis());
    }

    @Test
    void invalidValuesNameTheOption() {
        assertMessage("failureThreshold", () -> Policy.builder().failureThreshold(0).build());
        assertMessage("errorRateThreshold", () -> Policy.builder().errorRateThreshold(1.5).build());
        assertMessage("errorRateDecay", () -> Policy.builder().errorRateDecay(1.0).build());
        assertMessage("jitter", () -> Policy.builder().jitter(1.0).build());
        assertMessage("resetTimeout", () -> Policy.builder().resetTimeout(Duration.ofMillis(-1)).build());
        assertMessage("maxResetTimeout", () -> Policy.builder().resetTimeout(Duration.ofSeconds(10))
                .maxResetTimeout(Duration.ofSeconds(5)).build());
        assertMessage("successThreshold", () -> Policy.builder().successThreshold(0).build());
    }

    /**
     * A maxResetTimeout above Long.MAX_VALUE / 2 ms made {@code 2 * maxResetTimeout} overflow: the state TTL
     * check passed for any TTL and a forced half-open state got an {@code openedAt} in the far future, so it
     * was never eligible for a trial. Such a policy is refused, naming the option and the bound, whether built
     * with the builder or the canonical constructor; the largest accepted one forces half-open correctly.
     */
    @Test
    void hugeMaxResetTimeoutIsRefusedRatherThanOverflowing() {
        long huge = Long.MAX_VALUE / 2 + 1;
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> Policy.builder()
                .maxResetTimeout(Duration.ofMillis(huge)).stateTtl(Duration.ofMillis(Long.MAX_VALUE)).build());
        assertTrue(ex.getMessage().contains("maxResetTimeout") && ex.getMessage().contains("at most"),
                ex.getMessage());
        Policy d = Policy.defaults();
        IllegalArgumentException direct = assertThrows(IllegalArgumentException.class, () -> new Policy(
                d.strategy(), d.failureThreshold(), 0, d.errorRateThreshold(), d.minimumCalls(), d.errorRateDecay(),
                d.successThreshold(), d.resetTimeoutMillis(), d.backoffMultiplier(), huge, d.jitter(), 1_000,
                d.failureRateThreshold(), d.minimumNumberOfCalls(), d.slowCallRateThreshold(), d.slidingWindowType(),
                d.slidingWindowSize(), d.mode(), d.quorum(), d.quorumFraction()));
        assertTrue(direct.getMessage().contains("maxResetTimeout"), direct.getMessage());

        Policy largest = Policy.builder().maxResetTimeout(Duration.ofMillis(Policy.MAX_DURATION_MILLIS)).build();
        long now = 1_700_000_000_000L;
        BreakerState forced = Transitions.force(null, BreakerStatus.HALF_OPEN, largest, now).state();
        assertEquals(BreakerStatus.HALF_OPEN, Transitions.status(forced, largest, now, 1.0 + largest.jitter()));
        assertTrue(largest.stateTtlMillis() > 2 * largest.maxResetTimeoutMillis());
    }

    private static void assertMessage(String option, org.junit.jupiter.api.function.Executable e) {
        InvalidOptionException ex = assertThrows(InvalidOptionException.class, e);
        assertEquals(option, ex.option(), ex.getMessage());
        assertTrue(ex.getMessage().startsWith(option + " "), ex.getMessage());
    }

    /** Each setter checks its value where it is set, with the option declared on Policy. */
    @Test
    void settersRefuseBadValuesNamingTheOption() {
        assertMessage("strategy", () -> Policy.builder().strategy(null));
        assertMessage("failureThreshold", () -> Policy.builder().failureThreshold(0));
        assertMessage("errorRateThreshold", () -> Policy.builder().errorRateThreshold(0));
        assertMessage("minimumCalls", () -> Policy.builder().minimumCalls(0));
        assertMessage("errorRateDecay", () -> Policy.builder().errorRateDecay(0));
        assertMessage("successThreshold", () -> Policy.builder().successThreshold(0));
        assertMessage("resetTimeout", () -> Policy.builder().resetTimeout(Duration.ZERO));
        assertMessage("backoffMultiplier", () -> Policy.builder().backoffMultiplier(0.9));
        assertMessage("maxResetTimeout", () -> Policy.builder().maxResetTimeout(null));
        assertMessage("jitter", () -> Policy.builder().jitter(-0.1));
        assertMessage("maxGapBetweenFailures", () -> Policy.builder().maxGapBetweenFailures(Duration.ofMillis(-1)));
        assertMessage("stateTtl", () -> Policy.builder().stateTtl(Duration.ZERO));
        assertMessage("stateTtl", () -> Policy.builder().stateTtl(Duration.ofMinutes(1)).build());
        Policy d = Policy.defaults();
        assertEquals(Policy.FAILURE_THRESHOLD.defaultValue(), d.failureThreshold());
        assertEquals(Policy.RESET_TIMEOUT.defaultValue(), d.resetTimeout());
        assertEquals(Policy.STRATEGY.defaultValue(), d.strategy());
        assertEquals(d, d.toBuilder().build());
    }

    @Test
    void stateFieldsRoundTripBitExact() {
        BreakerState s = new BreakerState(3, 123456789012L, true, 98765L, 2, 0.1 + 0.2, 77, 1, true, 9);
        assertEquals(s, StateCodec.fromFields(StateCodec.toFields(s), "k"));
        Map<String, String> lua = new HashMap<>(StateCodec.toFields(s));
        lua.put(StateCodec.ERROR_RATE, String.format("%.17g", 0.1 + 0.2));
        assertEquals(s, StateCodec.fromFields(lua, "k"));
    }

    @Test
    void missingVersionReadsAsUnknownAndGarbageIsAStoreException() {
        Map<String, String> f = new HashMap<>(StateCodec.toFields(BreakerState.INITIAL));
        f.remove(StateCodec.VERSION);
        BreakerState s = StateCodec.fromFields(f, "k");
        assertEquals(BreakerState.UNKNOWN_VERSION, s.version());
        assertFalse(s.hasKnownVersion());
        f.put(StateCodec.FAILURES, "lots");
        assertThrows(StoreException.class, () -> StateCodec.fromFields(f, "k"));
        f.put(StateCodec.FAILURES, "-4");
        assertThrows(StoreException.class, () -> StateCodec.fromFields(f, "k"));
        assertThrows(StoreException.class, () -> StateCodec.fromFields(Map.of("x", "y"), "k"));
    }

    @Test
    void eventLineRoundTripsHostileNames() {
        String name = "a&b=c%d\n{x}; DROP TABLE t; -- \uD83D\uDE00";
        TransitionEvent e = new TransitionEvent(name, TransitionKind.FORCED_OPEN, BreakerStatus.HALF_OPEN,
                BreakerState.builder().open(true).forced(true).version(3).build());
        assertEquals(e, StateCodec.eventFromLine(StateCodec.eventToLine(e), "test"));
        assertThrows(StoreException.class, () -> StateCodec.eventFromLine("nonsense", "test"));
    }

    @Test
    void urisAreRedactedAndParsed() {
        assertEquals("redis://user:***@host:6379/0?prefix=a",
                StoreUris.redact("redis://user:s3cret@host:6379/0?prefix=a"));
        assertEquals("redis://***@host", StoreUris.redact("redis://s3cret@host"));
        assertEquals("postgresql:u:***@h/db", StoreUris.redact("postgresql:u:s3cret@h/db"));
        assertEquals("jdbc:postgresql://u:***@h/db", StoreUris.redact("jdbc:postgresql://u:s3cret@h/db"));
        assertEquals("memory://name", StoreUris.redact("memory://name"));
        assertEquals("redis://u:***@host:6379", StoreUris.redact("redis://u:pa#ss@host:6379"));
        assertEquals("redis://:***@host", StoreUris.redact("redis://:my/pass@host"));
        assertEquals("redis://:***@host", StoreUris.redact("redis://:p@ss@host"));
        assertEquals("redis://host/0?prefix=a@b", StoreUris.redact("redis://host/0?prefix=a@b"));
        assertEquals(java.util.List.of("p@ss", "t0k"), StoreUris.secrets("redis://:p@ss@host?token=t0k"));
        assertEquals(java.util.List.of("pa#ss"), StoreUris.secrets("redis://u:pa#ss@host:6379"));
        assertTrue(StoreUris.secrets("redis://host:6379").isEmpty());
        assertEquals("jdbc:postgresql://h/db?user=u&password=***",
                StoreUris.redact("jdbc:postgresql://h/db?user=u&password=s3cret"));
        assertEquals("jdbc:postgresql", StoreUris.scheme("jdbc:postgresql://h/db"));
        assertEquals("memory", StoreUris.scheme("memory:"));
        assertEquals("my app:", StoreUris.query("redis://h?prefix=my%20app%3A&x").get("prefix"));
        assertEquals("", StoreUris.query("redis://h?prefix=my%20app%3A&x").get("x"));
        assertThrows(IllegalArgumentException.class, () -> StoreUris.scheme("no-scheme"));
    }
}

package dev.redeye.tck;

import static dev.redeye.tck.TckSupport.EARLY_MILLIS;
import static dev.redeye.tck.TckSupport.LATE_MILLIS;
import static dev.redeye.tck.TckSupport.LONG_CLAIMS;
import static dev.redeye.tck.TckSupport.LONG_TTL;
import static dev.redeye.tck.TckSupport.SHORT_TTL;
import static dev.redeye.tck.TckSupport.claims;
import static dev.redeye.tck.TckSupport.race;
import static dev.redeye.tck.TckSupport.sleep;
import static dev.redeye.tck.TckSupport.token;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Rules R4 (TrialClaims). Run by {@link StoreTck}. */
interface ClaimRules extends TckContext {
    /**
     * R4.1 With permits = 1, the first claim returns a token and a second claim returns empty. If this fails,
     * check that claimTrial counts live claims against permits.
     */
    @Test
    @DisplayName("R4.1 with permits 1 the first claim wins and a second returns empty")
    default void r4_1_singlePermit() {
        Store a = client();
        Store b = client();
        String k = key("one");
        token(claims(a).claimTrial(k, 1, LONG_TTL), "first claim");
        assertEquals(Optional.empty(), claims(b).claimTrial(k, 1, LONG_TTL), "second claim from the other client");
        assertEquals(Optional.empty(), claims(a).claimTrial(k, 1, LONG_TTL), "third claim from the first client");
    }

    /**
     * R4.2 Tokens are unique across calls and clients. If this fails, check the token generation (a random
     * UUID per call).
     */
    @Test
    @DisplayName("R4.2 tokens are unique across calls and clients")
    default void r4_2_tokensAreUnique() {
        Store[] clients = {client(), client()};
        Set<String> tokens = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            String t = token(claims(clients[i % 2]).claimTrial(key("k" + (i % 3)), 100, LONG_TTL), "claim " + i);
            assertTrue(tokens.add(t), "token '" + t + "' was returned twice");
        }
    }

    /** R4.3 With permits = 3, exactly three claims succeed. If this fails, check the permit count. */
    @Test
    @DisplayName("R4.3 with permits 3 exactly three claims succeed")
    default void r4_3_threePermits() {
        Store[] clients = {client(), client()};
        String k = key("three");
        for (int i = 1; i <= 3; i++) {
            token(claims(clients[i % 2]).claimTrial(k, 3, LONG_TTL), "claim " + i + " of 3 permits");
        }
        assertEquals(Optional.empty(), claims(clients[0]).claimTrial(k, 3, LONG_TTL), "claim 4 of 3 permits");
        assertEquals(Optional.empty(), claims(clients[1]).claimTrial(k, 3, LONG_TTL), "claim 5 of 3 permits");
    }

    /**
     * R4.4 32 callers over 2 clients race to claim: exactly {@code permits} winners, for permits 1 and 3. If
     * this fails, the count check and the insert are not one atomic step.
     */
    @Test
    @DisplayName("R4.4 32 racing callers over 2 clients: exactly permits winners (1 and 3)")
    default void r4_4_claimRaceHasExactlyPermitsWinners() throws Exception {
        Store[] clients = {client(), client()};
        claims(clients[0]);
        for (int permits : new int[] {1, 3}) {
            for (int round = 0; round < 3; round++) {
                String k = key("race-" + permits + "-" + round);
                ConcurrentLinkedQueue<String> winners = new ConcurrentLinkedQueue<>();
                race(32, clients, (t, c) -> claims(c).claimTrial(k, permits, LONG_TTL).ifPresent(winners::add));
                assertEquals(permits, winners.size(), "winners of a 32-caller race for " + permits
                        + " permit(s), round " + round);
                assertEquals(permits, new HashSet<>(winners).size(), "winning tokens must be distinct");
            }
        }
    }

    /** R4.5 Releasing with the winning token frees that permit. If this fails, check releaseTrial's delete. */
    @Test
    @DisplayName("R4.5 releasing with the winning token frees the permit")
    default void r4_5_releaseFreesThePermit() {
        Store a = client();
        Store b = client();
        String k = key("release");
        String t = token(claims(a).claimTrial(k, 1, LONG_TTL), "first claim");
        assertEquals(Optional.empty(), claims(b).claimTrial(k, 1, LONG_TTL), "claim while held");
        claims(b).releaseTrial(k, t);
        String t2 = token(claims(b).claimTrial(k, 1, LONG_TTL), "claim after the holder released");
        claims(a).releaseTrial(k, t2);
        String k3 = key("release-3");
        String x = token(claims(a).claimTrial(k3, 3, LONG_TTL), "claim 1 of 3");
        token(claims(b).claimTrial(k3, 3, LONG_TTL), "claim 2 of 3");
        token(claims(a).claimTrial(k3, 3, LONG_TTL), "claim 3 of 3");
        claims(b).releaseTrial(k3, x);
        token(claims(b).claimTrial(k3, 3, LONG_TTL), "claim after one of 3 holders released");
        assertEquals(Optional.empty(), claims(a).claimTrial(k3, 3, LONG_TTL),
                "releasing one token must free exactly one permit");
    }

    /**
     * R4.6 Releasing with a wrong or stale token is a no-op and never frees another caller's claim. If this
     * fails, releaseTrial is not compare-and-delete by token.
     */
    @Test
    @DisplayName("R4.6 a wrong or stale token never frees another caller's claim")
    default void r4_6_wrongOrStaleTokenDoesNotRelease() {
        Store a = client();
        Store b = client();
        String k = key("stale");
        String first = token(claims(a).claimTrial(k, 1, LONG_TTL), "first claim");
        claims(b).releaseTrial(k, "not-a-token");
        claims(b).releaseTrial(k, UUID.randomUUID().toString());
        claims(b).releaseTrial(k, "");
        assertEquals(Optional.empty(), claims(b).claimTrial(k, 1, LONG_TTL),
                "a release with a wrong token freed the holder's claim");
        claims(a).releaseTrial(k, first);
        String second = token(claims(b).claimTrial(k, 1, LONG_TTL), "claim after release");
        claims(a).releaseTrial(k, first); // stale: the first holder releases again, late
        assertEquals(Optional.empty(), claims(a).claimTrial(k, 1, LONG_TTL),
                "a stale token's second release freed the new holder's claim");
        claims(b).releaseTrial(k, second);
        token(claims(a).claimTrial(k, 1, LONG_TTL), "claim after the new holder released");
    }

    /**
     * R4.7 Releasing an unknown key or an expired token is a no-op and throws nothing. If this fails, check
     * that releaseTrial returns quietly when nothing matches.
     */
    @Test
    @DisplayName("R4.7 releasing an unknown key or an expired token throws nothing")
    default void r4_7_releaseOfUnknownIsANoOp() {
        Store a = client();
        Store b = client();
        TrialClaims ca = claims(a);
        TrialClaims cb = claims(b);
        assertDoesNotThrow(() -> ca.releaseTrial(key("never-claimed"), UUID.randomUUID().toString()),
                "release on a key never claimed");
        String k = key("expired");
        String t = token(claims(a).claimTrial(k, 1, SHORT_TTL), "short claim");
        if (!eventually(() -> {
            Optional<String> again = claims(b).claimTrial(k, 1, LONG_TTL);
            again.ifPresent(x -> claims(b).releaseTrial(k, x));
            return again.isPresent();
        })) {
            fail("a claim with ttl " + SHORT_TTL.toMillis() + " ms did not expire within " + patience().toMillis() + " ms");
        }
        assertDoesNotThrow(() -> ca.releaseTrial(k, t), "release of an expired token");
        assertDoesNotThrow(() -> cb.releaseTrial(k, t), "second release of an expired token");
        token(claims(a).claimTrial(k, 1, LONG_TTL), "claim after the expired token's release");
    }

    /**
     * R4.8 (real time) A claim expires after its ttl and the key can be claimed again; the expired holder's late
     * release does not delete the new claim. If this fails, check the claim ttl and compare-and-delete.
     */
    @Test
    @DisplayName("R4.8 a claim expires after its ttl; the expired holder's late release keeps the new claim")
    default void r4_8_claimExpiresAndLateReleaseIsHarmless() {
        Store a = client();
        Store b = client();
        // The short claim's ttl starts within its call, after 'start': while less than the ttl has passed since
        // 'start' when the second claim returns, the first was live when the store judged the second. A round
        // whose calls took longer (a stalled machine) cannot judge that, and is played again on a new key.
        String judged = null;
        String held = null;
        long start = 0;
        long slowest = 0;
        for (int round = 0; judged == null && round < 5; round++) {
            String key = key("expiry" + round);
            start = System.nanoTime();
            String token = token(claims(a).claimTrial(key, 1, SHORT_TTL), "short claim");
            Optional<String> second = claims(b).claimTrial(key, 1, LONG_TTL);
            long took = (System.nanoTime() - start) / 1_000_000;
            if (took < SHORT_TTL.toMillis()) {
                assertEquals(Optional.empty(), second, "claim " + took + " ms after a claim with ttl "
                        + SHORT_TTL.toMillis() + " ms, still live");
                judged = key;
                held = token;
            }
            slowest = Math.max(slowest, took);
        }
        if (judged == null) {
            fail("no round could judge a live claim: a claim and a second claim of the key took " + slowest
                    + " ms or more each time, longer than the claim's ttl of " + SHORT_TTL.toMillis() + " ms");
        }
        String k = judged;
        String old = held;
        String[] fresh = new String[1];
        if (!eventually(() -> {
            Optional<String> t = claims(b).claimTrial(k, 1, LONG_TTL);
            t.ifPresent(x -> fresh[0] = x);
            return t.isPresent();
        })) {
            fail("a claim with ttl " + SHORT_TTL.toMillis() + " ms did not expire within " + patience().toMillis() + " ms");
        }
        long waited = (System.nanoTime() - start) / 1_000_000;
        assertTrue(waited >= SHORT_TTL.toMillis() / 2, "the claim expired after " + waited
                + " ms, long before its ttl of " + SHORT_TTL.toMillis() + " ms");
        claims(a).releaseTrial(k, old);
        assertEquals(Optional.empty(), claims(a).claimTrial(k, 1, LONG_TTL),
                "the expired holder's late release deleted the new holder's claim");
        claims(b).releaseTrial(k, fresh[0]);
        token(claims(a).claimTrial(k, 1, LONG_TTL), "claim after the new holder released");
    }

    /**
     * R4.9 Claims of different keys are independent. If this fails, check the per-key claim namespace and that
     * a token only releases a claim of its own key.
     */
    @Test
    @DisplayName("R4.9 claims of different keys are independent")
    default void r4_9_claimsOfDifferentKeysAreIndependent() {
        Store a = client();
        Store b = client();
        String k1 = key("k1");
        String k2 = key("k2");
        String t1 = token(claims(a).claimTrial(k1, 1, LONG_TTL), "claim of k1");
        String t2 = token(claims(b).claimTrial(k2, 1, LONG_TTL), "claim of k2 while k1 is held");
        claims(a).releaseTrial(k2, t1);
        assertEquals(Optional.empty(), claims(a).claimTrial(k2, 1, LONG_TTL),
                "releasing k1's token on k2 freed k2's claim");
        claims(b).releaseTrial(k1, t2);
        assertEquals(Optional.empty(), claims(b).claimTrial(k1, 1, LONG_TTL),
                "releasing k2's token on k1 freed k1's claim");
        claims(a).releaseTrial(k1, t1);
        assertEquals(Optional.empty(), claims(a).claimTrial(k2, 1, LONG_TTL), "releasing k1 freed k2");
        token(claims(b).claimTrial(k1, 1, LONG_TTL), "claim of k1 after its release");
    }

    /**
     * R4.10 (real time) Claims of 1.5 s and 10 s keep their permits until their ttl and free them within 100 ms
     * after it. Both run at once, so the rule takes about 10 s. If this fails, check the ttl claimTrial sets for
     * long claims.
     */
    @Test
    @DisplayName("R4.10 (real time) claims of 1.5 s and 10 s hold until their ttl and are free within 100 ms after")
    default void r4_10_longClaimsExpireOnTime() {
        Store a = client();
        Store b = client();
        int n = LONG_CLAIMS.length;
        String[] keys = new String[n];
        long[] from = new long[n];
        long[] to = new long[n];
        long[] ttl = new long[n];
        int[] permits = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = key("long-" + LONG_CLAIMS[i][0]);
            ttl[i] = LONG_CLAIMS[i][0];
            permits[i] = (int) LONG_CLAIMS[i][1];
            from[i] = System.nanoTime();
            for (int p = 1; p <= permits[i]; p++) {
                token(claims(p % 2 == 0 ? b : a).claimTrial(keys[i], permits[i], Duration.ofMillis(ttl[i])),
                        "claim " + p + " of " + permits[i] + " with ttl " + ttl[i] + " ms");
            }
            to[i] = System.nanoTime();
        }
        boolean[] freed = new boolean[n];
        long[] nextProbe = from.clone();
        for (int left = n; left > 0;) {
            long wake = Long.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                if (freed[i]) {
                    continue;
                }
                if (System.nanoTime() - nextProbe[i] >= 0) {
                    freed[i] = probe(b, keys[i], permits[i], ttl[i], from[i], to[i]);
                    left -= freed[i] ? 1 : 0;
                    long due = from[i] + TimeUnit.MILLISECONDS.toNanos(ttl[i] - 150);
                    long now = System.nanoTime();
                    // A few probes while the claim is young, then every 10 ms around its ttl.
                    nextProbe[i] = now - due < 0 ? Math.min(due, now + TimeUnit.MILLISECONDS.toNanos(ttl[i] / 4))
                            : now + TimeUnit.MILLISECONDS.toNanos(10);
                }
                if (!freed[i]) {
                    wake = Math.min(wake, nextProbe[i]);
                }
            }
            long sleep = wake == Long.MAX_VALUE ? 0 : TimeUnit.NANOSECONDS.toMillis(wake - System.nanoTime());
            if (sleep > 0) {
                sleep(sleep);
            }
        }
    }

    /**
     * One claim of {@code k} under {@code permits} while the claims made in {@code [from, to]} with {@code ttl}
     * ms hold every permit: whether it won, failing if it won too early or lost too late.
     */
    private static boolean probe(Store s, String k, int permits, long ttl, long from, long to) {
        long start = System.nanoTime();
        Optional<String> t = claims(s).claimTrial(k, permits, LONG_TTL);
        long end = System.nanoTime();
        long sinceFirst = TimeUnit.NANOSECONDS.toMillis(end - from);
        if (t.isPresent()) {
            claims(s).releaseTrial(k, t.get());
            if (end - (from + TimeUnit.MILLISECONDS.toNanos(ttl - EARLY_MILLIS)) < 0) {
                fail("a claim of " + permits + " permit(s) succeeded at most " + sinceFirst + " ms after " + permits
                        + " claim(s) with ttl " + ttl + " ms took every permit: they were freed before their ttl");
            }
            return true;
        }
        long late = TimeUnit.NANOSECONDS.toMillis(start - to) - ttl;
        if (late > LATE_MILLIS) {
            fail("claims with ttl " + ttl + " ms still held every one of " + permits + " permit(s) at least " + late
                    + " ms after their ttl (a claim began " + TimeUnit.NANOSECONDS.toMillis(start - to) + " ms after "
                    + "they were made and was refused): they must be free within " + LATE_MILLIS + " ms after it");
        }
        return false;
    }

    /**
     * R4.11 (real time) After 20 claims under permits = 20 expired, the first claim with permits = 1 succeeds.
     * If this fails, check that claimTrial ignores or prunes every expired claim, however many there are.
     */
    @Test
    @DisplayName("R4.11 (real time) after 20 expired claims under 20 permits, a claim with 1 permit succeeds")
    default void r4_11_manyExpiredClaimsNeverBlock() {
        Store a = client();
        Store b = client();
        String k = key("many-expired");
        Duration ttl = Duration.ofMillis(800);
        long first = System.nanoTime();
        for (int i = 1; i <= 20; i++) {
            token(claims(i % 2 == 0 ? b : a).claimTrial(k, 20, ttl), "claim " + i + " of 20 permits");
        }
        long last = System.nanoTime();
        Optional<String> extra = claims(a).claimTrial(k, 20, ttl);
        if (System.nanoTime() - (first + ttl.toNanos() - TimeUnit.MILLISECONDS.toNanos(EARLY_MILLIS)) < 0) {
            assertEquals(Optional.empty(), extra, "claim 21 of 20 permits while the 20 claims are live");
        }
        long surelyExpired = last + ttl.toNanos() + TimeUnit.MILLISECONDS.toNanos(LATE_MILLIS);
        while (System.nanoTime() - surelyExpired < 0) {
            sleep(Math.max(1, TimeUnit.NANOSECONDS.toMillis(surelyExpired - System.nanoTime())));
        }
        Optional<String> one = claims(b).claimTrial(k, 1, LONG_TTL);
        assertTrue(one.isPresent(), "after 20 claims with ttl " + ttl.toMillis() + " ms under 20 permits expired ("
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - last) + " ms after the last), a claim with 1 "
                + "permit returned empty: expired claims still count against the permits");
        assertEquals(Optional.empty(), claims(a).claimTrial(k, 1, LONG_TTL),
                "a second claim with 1 permit while the first holds it");
        token(claims(a).claimTrial(k, 2, LONG_TTL), "a claim with 2 permits while one live claim holds one");
    }
}

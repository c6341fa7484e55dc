package dev.redeye.tck;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.spi.StateChange;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The sequential reference model of the model-based rules (R8): what every key of a scenario must hold after
 * each call, as {@link dev.redeye.spi.Transitions} says, plus a reference claim table. Immutable and a value
 * (equal models are interchangeable), so the linearizability search can branch and remember models it saw.
 *
 * <p>Where the contract lets the store choose, the model accepts the store's choice and checks only what is
 * promised:
 * <ul>
 * <li>An atomic call on an absent key starts from {@code BreakerState.initial(v)}; the store chooses
 * {@code v} (0, a tombstone + 1, its clock in microseconds). When the call creates the key, {@code v} must be
 * above the highest version the key had in the scenario since its last {@code put} (which stores the version
 * it is given, a lower one included): monotonicity, not equality. A call that writes nothing (a success with
 * nothing to clear, a fenced trial outcome) may report any {@code initial(v)}, since no version is stored.</li>
 * <li>Claim tokens are the store's; each must be non-empty (uniqueness is checked by the runners).</li>
 * <li>Claims expire by the backend's clock. A claim is judged live only while every point of the judged call
 * lies before its ttl could have elapsed, and expired only when the call began after its ttl surely elapsed;
 * in between it is <em>uncertain</em>, and a result is accepted when some resolution of the uncertain claims
 * explains it ({@link Verdict#uncertain()} lists them so the runner can wait until they surely expired).</li>
 * </ul>
 *
 * @param keys the model of each key of the scenario, by index
 */
record ReferenceModel(List<KeyModel> keys) {

    /**
     * How early a backend may count a claim as expired: its clock's granularity (PX in whole ms). Early is the
     * unsafe side (two trials at once), so this is small.
     */
    static final long CLOCK_SLACK_NANOS = 5_000_000L;
    /**
     * How late a backend may still count a claim after its ttl: granularity and lazy clean-up. Late is safe (a
     * hung trial's permit comes back a little later), so a store gets more room here.
     */
    static final long LATE_EXPIRY_NANOS = 50_000_000L;

    ReferenceModel {
        keys = List.copyOf(keys);
    }

    /** A model of {@code n} keys never written. */
    static ReferenceModel empty(int n) {
        List<KeyModel> ks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ks.add(new KeyModel(null, BreakerState.UNKNOWN_VERSION - 1, List.of()));
        }
        return new ReferenceModel(ks);
    }

    /**
     * One key.
     *
     * @param state   the stored state, or {@code null} when the key is absent
     * @param highest the highest version the key had since its last put (below -1 when it never had one)
     * @param claims  the claims the key may hold, oldest first
     */
    record KeyModel(BreakerState state, long highest, List<Claim> claims) {
        KeyModel {
            claims = List.copyOf(claims);
        }

        KeyModel with(BreakerState s) {
            return new KeyModel(s, Math.max(highest, s.version()), claims);
        }

        KeyModel withClaims(List<Claim> c) {
            return new KeyModel(state, highest, c);
        }

        /** The lowest version a state written for this key may carry: its highest (0 if it never had one). */
        long base() {
            return Math.max(0, highest);
        }

        /** The lowest version a new life of this key may start at: above every version it had (R1.12). */
        long newLifeBase() {
            return Math.max(0, highest + 1);
        }

        /** The tokens of the claims, oldest first. */
        List<String> tokens() {
            return claims.stream().map(Claim::token).collect(Collectors.toList());
        }
    }

    /**
     * One claim the store granted.
     *
     * @param token      its token
     * @param fromNanos  when the claiming call started (the earliest the backend can have set its expiry from)
     * @param toNanos    when the claiming call returned (the latest)
     * @param ttlNanos   its ttl
     */
    record Claim(String token, long fromNanos, long toNanos, long ttlNanos) {

        /** Whether the backend may already count this claim as expired at local time {@code nanos}. */
        boolean mayBeExpiredBy(long nanos) {
            return nanos - (fromNanos + ttlNanos - CLOCK_SLACK_NANOS) >= 0;
        }

        /** Whether the backend surely counts this claim as expired at local time {@code nanos}. */
        boolean surelyExpiredBy(long nanos) {
            return nanos - (toNanos + ttlNanos + LATE_EXPIRY_NANOS) > 0;
        }

        /** When this claim has surely expired (local nanoTime). */
        long surelyExpiredAt() {
            return toNanos + ttlNanos + LATE_EXPIRY_NANOS + 1;
        }
    }

    /**
     * The judgement of one observed call.
     *
     * @param next      the model after the call, or {@code null} when nothing explains the observation
     * @param mismatch  why the observation cannot be explained, or {@code null}
     * @param expected  what the model expected, for the report ({@code null} when not applicable)
     * @param uncertain claims whose expiry the call's timing left uncertain (the runner waits them out)
     */
    record Verdict(ReferenceModel next, String mismatch, Object expected, List<Claim> uncertain) {
        boolean ok() {
            return next != null;
        }

        static Verdict ok(ReferenceModel next) {
            return new Verdict(next, null, null, List.of());
        }

        static Verdict mismatch(String why, Object expected) {
            return new Verdict(null, why, expected, List.of());
        }
    }

    KeyModel key(int i) {
        return keys.get(i);
    }

    private ReferenceModel with(int i, KeyModel k) {
        List<KeyModel> ks = new ArrayList<>(keys);
        ks.set(i, k);
        return new ReferenceModel(ks);
    }

    /**
     * Judges one observed call: the model after it if the model explains what the store returned (or threw),
     * else why not.
     */
    Verdict apply(Call call, Observed seen) {
        KeyModel k = key(call.key());
        if (seen.error() != null) {
            return Verdict.mismatch(call.op().method + " threw " + seen.error()
                    + " (no call the model rules make may throw: every argument is valid)", null);
        }
        switch (call.op()) {
            case PUT:
                // put stores the version it is given, lower ones included: the floor starts again from it
                return Verdict.ok(with(call.key(), new KeyModel(call.state(), call.state().version(), k.claims())));
            case DELETE:
                return Verdict.ok(with(call.key(), new KeyModel(null, k.highest(), List.of())));
            case GET:
                return get(call, seen, k);
            case CLAIM:
                return claim(call, seen, k);
            case RELEASE:
                return release(call, seen, k);
            case CLAIM_TABLE:
                return claimTable(call, seen, k);
            default:
                return atomic(call, seen, k);
        }
    }

    /** The model without any claim of key {@code i}. */
    ReferenceModel clearClaims(int i) {
        KeyModel k = key(i);
        return k.claims().isEmpty() ? this : with(i, k.withClaims(List.of()));
    }

    private Verdict atomic(Call call, Observed seen, KeyModel k) {
        if (!(seen.value() instanceof StateChange)) {
            return Verdict.mismatch(call.op().method + " returned " + seen.value() + " instead of a StateChange",
                    null);
        }
        StateChange actual = (StateChange) seen.value();
        BreakerState prev = k.state();
        if (prev == null) {
            // A new life: the store picks its starting version. A call that creates the key must start above
            // every version the key had; a call that writes nothing may report any initial(v).
            BreakerState p = actual.previous();
            boolean initial = p.version() >= 0 && p.equals(BreakerState.initial(p.version()));
            if (!initial || (call.expected(p).changed() && p.version() < k.newLifeBase())) {
                StateChange expected = call.expected(BreakerState.initial(k.newLifeBase()));
                return Verdict.mismatch("the key is absent, so " + call.op().method + " must start its new life from "
                        + "BreakerState.initial(v) with v >= " + k.newLifeBase() + (k.highest() >= 0 ? " (above "
                                + k.highest() + ", the highest version the key had since it was last put; versions "
                                + "never go backwards, and a new life never reuses the version it replaces)" : "")
                        + ", but it reported the previous state " + p, expected);
            }
            prev = p;
        }
        StateChange expected = call.expected(prev);
        String diff = States.diff(expected, actual);
        if (diff != null) {
            return Verdict.mismatch(call.op().method + " returned " + diff, expected);
        }
        KeyModel next = expected.changed() ? k.with(expected.state()) : k;
        if (removesClaims(call)) {
            next = next.withClaims(List.of()); // forcing CLOSED, HALF_OPEN or a mode removes every claim of the key
        }
        return Verdict.ok(with(call.key(), next));
    }

    private Verdict get(Call call, Observed seen, KeyModel k) {
        if (!(seen.value() instanceof Optional)) {
            return Verdict.mismatch("get returned " + seen.value() + " instead of an Optional", null);
        }
        Optional<?> actual = (Optional<?>) seen.value();
        Optional<BreakerState> expected = Optional.ofNullable(k.state());
        if (expected.isEmpty() && actual.isPresent()) {
            return Verdict.mismatch("get returned " + actual.get() + " but the key holds nothing", expected);
        }
        if (expected.isPresent() && actual.isEmpty()) {
            return Verdict.mismatch("get returned empty but the key holds " + expected.get(), expected);
        }
        if (expected.isPresent()) {
            String diff = States.diff(expected.get(), (BreakerState) actual.get());
            if (diff != null) {
                return Verdict.mismatch("get returned a state that differs: " + diff, expected);
            }
        }
        return Verdict.ok(this);
    }

    private Verdict claim(Call call, Observed seen, KeyModel k) {
        if (!(seen.value() instanceof Optional)) {
            return Verdict.mismatch("claimTrial returned " + seen.value() + " instead of an Optional", null);
        }
        Optional<?> token = (Optional<?>) seen.value();
        List<Claim> live = new ArrayList<>();
        List<Claim> uncertain = new ArrayList<>();
        for (Claim c : k.claims()) {
            if (c.surelyExpiredBy(seen.startNanos())) {
                continue; // gone in every explanation
            }
            (c.mayBeExpiredBy(seen.endNanos()) ? uncertain : live).add(c);
        }
        List<Claim> kept = new ArrayList<>(live);
        kept.addAll(uncertain);
        if (token.isPresent()) {
            if (live.size() >= call.permits()) {
                return Verdict.mismatch("claimTrial with " + call.permits() + " permit(s) returned a token although "
                        + live.size() + " live claim(s) hold the key (tokens " + tokensOf(live) + ")",
                        Optional.empty());
            }
            Object t = token.get();
            if (!(t instanceof String) || ((String) t).isEmpty()) {
                return Verdict.mismatch("claimTrial returned the token " + t + ", not a non-empty string", null);
            }
            kept.add(new Claim((String) t, seen.startNanos(), seen.endNanos(), call.ttl().toNanos()));
        } else if (live.size() + uncertain.size() < call.permits()) {
            return Verdict.mismatch("claimTrial with " + call.permits() + " permit(s) returned empty although only "
                    + live.size() + " claim(s) hold the key" + (live.isEmpty() ? "" : " (tokens " + tokensOf(live) + ")")
                    + (k.claims().size() > kept.size() ? "; " + (k.claims().size() - kept.size())
                            + " earlier claim(s) have surely expired by now" : "")
                    + (uncertain.isEmpty() ? "" : ", " + uncertain.size() + " more perhaps"), "a token");
        }
        return new Verdict(with(call.key(), k.withClaims(kept)), null, null, List.copyOf(uncertain));
    }

    private Verdict release(Call call, Observed seen, KeyModel k) {
        List<Claim> kept = new ArrayList<>();
        for (Claim c : k.claims()) {
            if (!c.token().equals(call.token()) && !c.surelyExpiredBy(seen.startNanos())) {
                kept.add(c);
            }
        }
        return Verdict.ok(with(call.key(), k.withClaims(kept)));
    }

    /**
     * The claim table read back (R8.5) against the key's claims: every claim surely live must be read as live,
     * nothing else may be (a claim whose expiry is uncertain may be either), and no claim may remain that no
     * issued token releases. The read-back releases every claim.
     */
    private Verdict claimTable(Call call, Observed seen, KeyModel k) {
        if (!(seen.value() instanceof ClaimTable)) {
            return Verdict.mismatch("the claim table read-back returned " + seen.value(), null);
        }
        ClaimTable t = (ClaimTable) seen.value();
        List<String> sure = new ArrayList<>();
        List<String> possible = new ArrayList<>();
        for (Claim c : k.claims()) {
            if (c.surelyExpiredBy(seen.startNanos())) {
                continue;
            }
            possible.add(c.token());
            if (!c.mayBeExpiredBy(seen.endNanos())) {
                sure.add(c.token());
            }
        }
        List<String> missing = new ArrayList<>(sure);
        missing.removeAll(t.live());
        List<String> extra = new ArrayList<>(t.live());
        extra.removeAll(possible);
        if (!missing.isEmpty() || !extra.isEmpty() || t.unaccounted() != 0 || t.anomaly() != null) {
            return Verdict.mismatch("the claim table read back differs: "
                    + (missing.isEmpty() ? "" : "claims " + missing + " should be live but are not; ")
                    + (extra.isEmpty() ? "" : "claims " + extra + " are live but should be gone (released, or removed "
                            + "by force CLOSED or delete); ")
                    + (t.unaccounted() == 0 ? "" : t.unaccounted()
                            + (t.unaccounted() >= ClaimTable.MOST ? " or more" : "")
                            + " claim(s) hold the key that no issued token releases; ")
                    + (t.anomaly() == null ? "" : t.anomaly() + "; ")
                    + "read back: " + t, "live claims " + sure);
        }
        return Verdict.ok(clearClaims(call.key()));
    }

    /** The model without the claims that surely expired by local time {@code nanos}. */
    ReferenceModel expire(long nanos) {
        ReferenceModel m = this;
        for (int i = 0; i < keys.size(); i++) {
            KeyModel k = keys.get(i);
            List<Claim> kept = k.claims().stream().filter(c -> !c.surelyExpiredBy(nanos)).collect(Collectors.toList());
            if (kept.size() != k.claims().size()) {
                m = m.with(i, k.withClaims(kept));
            }
        }
        return m;
    }

    /**
     * Whether the call removes every claim of its key: delete, force CLOSED, force HALF_OPEN (a new period) and
     * force_mode (the breaker closes).
     * Stated here on its own, not read from {@code AtomicOperation.removesClaims()}: the oracle must not share
     * the mapping it checks.
     */
    static boolean removesClaims(Call call) {
        return call.op() == Call.Op.DELETE || call.op() == Call.Op.FORCE_MODE || (call.op() == Call.Op.FORCE
                && (call.status() == BreakerStatus.CLOSED || call.status() == BreakerStatus.HALF_OPEN));
    }

    private static String tokensOf(List<Claim> cs) {
        return cs.stream().map(Claim::token).collect(Collectors.toList()).toString();
    }
}

package dev.redeye.tck;

import dev.redeye.api.BreakerMode;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.spi.Transitions;
import dev.redeye.tck.ReferenceModel.KeyModel;
import dev.redeye.tck.Scenario.KeySpec;
import dev.redeye.tck.Scenario.Step;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * Turns abstract steps into concrete calls against the model: the version a trial carries, the token a
 * release carries, the state a put writes. Remembers the versions each key had and the tokens issued.
 */
final class StepResolver {
    private final Scenario scenario;
    private final List<List<Long>> versions = new ArrayList<>();
    private final List<List<String>> issued = new ArrayList<>();
    private final Set<String> allTokens = new HashSet<>();

    StepResolver(Scenario scenario) {
        this.scenario = scenario;
        for (int i = 0; i < scenario.keys().size(); i++) {
            versions.add(new ArrayList<>());
            issued.add(new ArrayList<>());
        }
    }

    void seen(int key, KeyModel k) {
        List<Long> vs = versions.get(key);
        if (k.state() != null && (vs.isEmpty() || vs.get(vs.size() - 1) != k.state().version())) {
            vs.add(k.state().version());
        }
    }

    /**
     * Records the token a claim at {@code step} returned; the reason it cannot be accepted (a token issued
     * before) or {@code null}.
     */
    String issued(int step, int key, Observed seen) {
        Optional<?> t = (Optional<?>) seen.value();
        if (t.isEmpty()) {
            return null;
        }
        String token = (String) t.get();
        if (!allTokens.add(token)) {
            return "claimTrial returned the token '" + token + "' a second time (tokens must be unique per call, "
                    + "across clients)";
        }
        issued.get(key).add(token);
        return null;
    }

    /** The tokens claims of key {@code key} returned so far, in the order they were issued. */
    List<String> issuedTokens(int key) {
        return List.copyOf(issued.get(key));
    }

    /** The concrete call of step {@code index} against the model {@code m}. */
    Call resolve(int index, Step s, ReferenceModel m) {
        KeySpec spec = scenario.keys().get(s.key());
        Policy p = spec.policy();
        long now = TckSupport.T0 + s.at() + scenario.skew(s.client());
        KeyModel k = m.key(s.key());
        switch (s.kind()) {
            case RECORD_FAILURE:
                return Call.of(Call.Op.RECORD_FAILURE, s.key(), p, now);
            case RECORD_SUCCESS:
                return Call.of(Call.Op.RECORD_SUCCESS, s.key(), p, now);
            case RECORD_OUTCOME:
                return Call.outcome(s.key(), s.arg() % 2 == 1, p, now);
            case TRIAL_SUCCEEDED:
            case TRIAL_FAILED:
                return Call.trial(s.kind() == Scenario.Kind.TRIAL_SUCCEEDED, s.key(), trialVersion(s, k), p, now);
            case FORCE:
                BreakerStatus[] targets = {BreakerStatus.CLOSED, BreakerStatus.HALF_OPEN, BreakerStatus.FORCED_OPEN};
                return Call.force(s.key(), targets[s.arg() % 3], p, now);
            case PUT:
                return Call.put(s.key(), putState(s, k, p, now));
            case DELETE:
                return Call.plain(Call.Op.DELETE, s.key());
            case GET:
                return Call.plain(Call.Op.GET, s.key());
            case CLAIM:
                boolean shortTtl = (s.arg() / 3) % 2 == 1;
                return Call.claim(s.key(), 1 + s.arg() % 3, shortTtl ? SequenceRunner.SHORT_CLAIM_TTL : SequenceRunner.LONG_CLAIM_TTL);
            case RELEASE:
                return Call.release(s.key(), token(index, s, m));
            case RECORD_SLOW:
                return Call.slowOutcome(s.key(), s.arg() % 2 == 1, p, now);
            case SLOW_CALL:
                return Call.of(Call.Op.SLOW_CALL, s.key(), p, now);
            case SLOW_CALL_FAILED:
                long position = k.state() != null && k.state().window() != null ? k.state().window().position() : 0;
                long slot = position + new long[] {0, -1, 1}[(s.arg() / 5) % 3];
                return Call.slowCallFailed(s.key(), slot, trialVersion(s, k), p, now);
            case FORCE_MODE:
                return Call.forceMode(s.key(), BreakerMode.fromCode(s.arg() % 4), p, now);
            case RECORD_BATCH:
                return Call.batch(s.key(), batchOf(s.arg(), now), p, now);
            default:
                throw new AssertionError(s.kind());
        }
    }

    /**
     * The outcomes of a batch step, from its {@code arg}: 0 is one success at {@code now}; otherwise 1 to 12
     * outcomes (1 to 200 for one arg in eight), a third of them failures and a quarter slow, at instants spread over
     * up to the 2 s before {@code now} in order, mostly apart by a few ms, sometimes at the same instant, sometimes a
     * step back (a clock stepped back between two outcomes).
     */
    static List<Long> batchOf(int arg, long now) {
        if (arg == 0) {
            return List.of(dev.redeye.spi.AtomicOperation.packOutcome(true, false, now));
        }
        java.util.SplittableRandom r = new java.util.SplittableRandom(arg * 0x9E3779B97F4A7C15L + 7);
        int n = 1 + (arg % 8 == 0 ? r.nextInt(200) : r.nextInt(12));
        long[] at = new long[n];
        long t = now;
        for (int i = n - 1; i >= 0; i--) {
            at[i] = t;
            int c = r.nextInt(10);
            t -= c < 3 ? 0 : c < 9 ? r.nextInt(20) : -r.nextInt(5);
        }
        List<Long> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(dev.redeye.spi.AtomicOperation.packOutcome(r.nextInt(3) != 0, r.nextInt(4) == 0,
                    Math.max(now - 2_000, at[i])));
        }
        return out;
    }

    private long trialVersion(Step s, KeyModel k) {
        long current = k.state() != null ? k.state().version() : k.base();
        switch (s.arg() % 5) {
            case 0:
                return current;
            case 1:
                List<Long> vs = versions.get(s.key());
                for (int i = vs.size() - 1; i >= 0; i--) {
                    if (vs.get(i) != current) {
                        return vs.get(i);
                    }
                }
                return Math.max(BreakerState.UNKNOWN_VERSION, current - 1);
            case 2:
                return current + 1;
            case 3:
                return 0;
            default:
                return BreakerState.UNKNOWN_VERSION;
        }
    }

    private String token(int index, Step s, ReferenceModel m) {
        List<String> live = m.key(s.key()).tokens();
        for (int attempt = 0; attempt < 5; attempt++) {
            int choice = (s.arg() + attempt) % 5;
            String t = null;
            switch (choice) {
                case 0:
                    t = live.isEmpty() ? null : live.get(0);
                    break;
                case 1:
                    t = live.isEmpty() ? null : live.get(live.size() - 1);
                    break;
                case 2:
                    for (String x : issued.get(s.key())) {
                        if (!live.contains(x)) {
                            t = x;
                        }
                    }
                    break;
                case 3:
                    for (int other = 0; other < issued.size() && t == null; other++) {
                        if (other != s.key() && !issued.get(other).isEmpty()) {
                            t = issued.get(other).get(issued.get(other).size() - 1);
                        }
                    }
                    break;
                default:
                    t = "never-issued-" + (index + 1);
            }
            if (t != null) {
                return t;
            }
        }
        throw new AssertionError("a never-issued token is always available");
    }

    /**
     * A state for put, drawn from the step's seed: half the time what the engine's get-then-put fallback
     * writes (the next transition of the current state), else any valid state, awkward doubles and
     * saturated counters included; its version is never below the key's highest.
     */
    private static BreakerState putState(Step s, KeyModel k, Policy p, long now) {
        Random r = new Random(s.arg() * 0x9E3779B97F4A7C15L + 1);
        BreakerState cur = k.state();
        if (cur != null && r.nextBoolean()) {
            return cur.open() ? Transitions.closedFrom(cur) : Transitions.recordFailure(cur, p, now).state();
        }
        boolean open = r.nextBoolean();
        int[] counts = {0, 1, 2, 3, 5, Integer.MAX_VALUE};
        double[] rates = {0.0, 0.1 + 0.2, 1.0 / 3, 0.5, 0.9, 1.0, Double.MIN_VALUE};
        long version = k.highest() < BreakerState.UNKNOWN_VERSION && r.nextInt(8) == 0
                ? BreakerState.UNKNOWN_VERSION : k.base() + r.nextInt(2);
        return new BreakerState(
                counts[r.nextInt(counts.length)],
                r.nextBoolean() ? 0 : now - r.nextInt(5_000),
                open,
                open ? now - r.nextInt(120_000) : 0,
                counts[r.nextInt(counts.length - 1)] % 4,
                rates[r.nextInt(rates.length)],
                r.nextInt(13),
                open ? r.nextInt(3) : 0,
                open && r.nextInt(4) == 0,
                version);
    }
}

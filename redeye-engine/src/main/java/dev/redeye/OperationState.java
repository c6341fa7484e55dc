package dev.redeye;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one breaker instance keeps per operation: its metrics, the open-state cache, the local-cache entry and,
 * for stores without {@code TrialClaims}, the per-instance trial claims. Created once per operation and never
 * removed, so the healthy path finds it with one map lookup and allocates nothing.
 */
final class OperationState {
    final String name;
    final LongAdder calls = new LongAdder();
    final LongAdder successes = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder rejections = new LongAdder();
    final LongAdder storeErrors = new LongAdder();
    final LongAdder trials = new LongAdder();

    /** The open state this instance last saw (distributed mode only); null when it last saw it closed. */
    final AtomicReference<OpenView> openView = new AtomicReference<>();
    /** The local-cache entry (distributed mode with the local cache only). */
    volatile CacheEntry cached;

    private final List<LocalClaim> localClaims = new ArrayList<>(1);
    private final AtomicLong localTokens = new AtomicLong();

    OperationState(String name) {
        this.name = name;
    }

    Metrics metrics() {
        return new Metrics(calls.sum(), successes.sum(), failures.sum(), rejections.sum(), storeErrors.sum(),
                trials.sum());
    }

    /** Per-instance fallback for stores without TrialClaims; expiry by real time like a store's claims. */
    synchronized String claimLocally(int permits, long ttlNanos) {
        long now = System.nanoTime();
        for (Iterator<LocalClaim> it = localClaims.iterator(); it.hasNext();) {
            if (it.next().expiresAtNanos - now <= 0) {
                it.remove();
            }
        }
        if (localClaims.size() >= permits) {
            return null;
        }
        String token = "local-" + localTokens.incrementAndGet();
        localClaims.add(new LocalClaim(token, now + ttlNanos));
        return token;
    }

    synchronized void releaseLocally(String token) {
        localClaims.removeIf(c -> c.token.equals(token));
    }

    synchronized void clearLocalClaims() {
        localClaims.clear();
    }

    private static final class LocalClaim {
        final String token;
        final long expiresAtNanos;

        LocalClaim(String token, long expiresAtNanos) {
            this.token = token;
            this.expiresAtNanos = expiresAtNanos;
        }
    }

    /**
     * A cached open (or forced-open) state: rejections are served from it without a store read until
     * {@code refreshAt} (re-verification) or {@code eligibleAt} (this instance's trial eligibility), whichever
     * comes first.
     */
    static final class OpenView {
        final BreakerState state;
        final BreakerStatus status;
        final long eligibleAt;
        final long refreshAt;

        OpenView(BreakerState state, BreakerStatus status, long eligibleAt, long refreshAt) {
            this.state = state;
            this.status = status;
            this.eligibleAt = eligibleAt;
            this.refreshAt = refreshAt;
        }

        OpenView refreshingUntil(long until) {
            return new OpenView(state, status, eligibleAt, until);
        }
    }

    /**
     * A local-cache entry: the state, when it was fetched (virtual ms) and the gap epoch it was fetched in;
     * an entry from an older epoch (a feed gap happened since) is not trusted.
     */
    static final class CacheEntry {
        final BreakerState state;
        final long fetchedAt;
        final long epoch;

        CacheEntry(BreakerState state, long fetchedAt, long epoch) {
            this.state = state;
            this.fetchedAt = fetchedAt;
            this.epoch = epoch;
        }

        boolean trusted(long currentEpoch) {
            return epoch == currentEpoch && state.hasKnownVersion();
        }
    }
}

package dev.redeye.tck.broken;

import dev.redeye.api.AtomicOperation;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.StateChange;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Trial claims kept in one map shared by every client, with real-time expiry, and with one deliberate
 * defect. States, feed and transitions go to a correct in-memory client.
 */
final class FlawedClaims {
    enum Defect {
        /** Release deletes every claim of the key, whatever the token. */
        UNCONDITIONAL_RELEASE,
        /** No count check: every claim succeeds and the last writer wins. */
        LAST_WRITER_WINS,
        /** Tokens come from a per-client counter, so two clients hand out the same token. */
        PER_CLIENT_COUNTER,
        /** One claim namespace for the whole store: the key is ignored. */
        GLOBAL_CLAIMS,
        /** Release of a key without claims throws. */
        THROW_ON_UNKNOWN,
        /** delete removes the state but leaves the claims. */
        DELETE_KEEPS_CLAIMS,
        /**
         * With more than one permit, expired claims still count against the permits until a release of the key
         * prunes them (one permit is judged right, as a SET NX PX would be).
         */
        EXPIRED_COUNTED_UNTIL_RELEASE,
        /** force HALF_OPEN starts the new period but leaves the old period's live claims (force CLOSED is right). */
        FORCE_HALF_OPEN_KEEPS_CLAIMS
    }

    private final Defect defect;
    private final Map<String, Map<String, Long>> claims = new HashMap<>();

    FlawedClaims(Defect defect) {
        this.defect = defect;
    }

    private String slot(String key) {
        return defect == Defect.GLOBAL_CLAIMS ? "" : key;
    }

    synchronized Optional<String> claim(String key, int permits, Duration ttl, String token) {
        long now = System.nanoTime();
        Map<String, Long> live = claims.computeIfAbsent(slot(key), k -> new HashMap<>());
        if (defect != Defect.EXPIRED_COUNTED_UNTIL_RELEASE || permits == 1) {
            live.values().removeIf(expiry -> expiry - now <= 0);
        }
        if (defect != Defect.LAST_WRITER_WINS && live.size() >= permits) {
            return Optional.empty();
        }
        live.put(token, now + ttl.toNanos());
        return Optional.of(token);
    }

    synchronized void release(String key, String token) {
        Map<String, Long> live = claims.get(slot(key));
        if (live == null || live.isEmpty()) {
            if (defect == Defect.THROW_ON_UNKNOWN) {
                throw new StoreException("no claims for this key");
            }
            return;
        }
        if (defect == Defect.UNCONDITIONAL_RELEASE) {
            live.clear();
        } else {
            long now = System.nanoTime();
            live.values().removeIf(expiry -> expiry - now <= 0);
            live.remove(token);
        }
    }

    synchronized void clear(String key) {
        claims.remove(slot(key));
    }

    synchronized void delete(String key) {
        if (defect != Defect.DELETE_KEEPS_CLAIMS) {
            claims.remove(slot(key));
        }
    }

    /** A client whose claims go through this map and everything else to {@code inner}. */
    Store client(Store inner) {
        AtomicInteger counter = new AtomicInteger();
        return new ForwardingStore(inner) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                get(key); // fails fast after close, like the rest of the store
                String token = defect == Defect.PER_CLIENT_COUNTER
                        ? "t" + counter.incrementAndGet() : UUID.randomUUID().toString();
                return claim(key, permits, ttl, token);
            }

            @Override
            public void releaseTrial(String key, String token) {
                get(key);
                release(key, token);
            }

            @Override
            public void delete(String key) {
                super.delete(key);
                FlawedClaims.this.delete(key);
            }

            @Override
            public StateChange force(String key, BreakerStatus status, Policy policy, long now) {
                StateChange c = super.force(key, status, policy, now);
                boolean keep = defect == Defect.FORCE_HALF_OPEN_KEEPS_CLAIMS && status == BreakerStatus.HALF_OPEN;
                if (AtomicOperation.force(status).removesClaims() && !keep) {
                    clear(key); // forcing CLOSED or HALF_OPEN removes every claim of the key, as the SPI requires
                }
                return c;
            }

            @Override
            public String toString() {
                return "FlawedClaims(" + defect + ")";
            }
        };
    }
}

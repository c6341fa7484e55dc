package dev.redeye.tck.broken;

import dev.redeye.api.Policy;
import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicOperation;
import dev.redeye.spi.StateChange;
import dev.redeye.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

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
        FORCE_HALF_OPEN_KEEPS_CLAIMS,
        /** force_mode closes the breaker but leaves the trial claims (force CLOSED is right). */
        FORCE_MODE_KEEPS_CLAIMS,
        /** Claims with a ttl above 1 s never expire (as if long ttls were stored in a unit they overflow). */
        LONG_CLAIMS_NEVER_EXPIRE,
        /**
         * A claim prunes at most 16 expired claims, and only when the claim is made, under the condition that
         * the claims then number fewer than permits plus those pruned: with more than 16 + permits - 1
         * expired claims the condition never holds and the same 16 are tried again (the DynamoDB store's
         * {@code Claims} before R4.11).
         */
        PRUNES_AT_MOST_16,
        /**
         * A release reads the key's claims, and writes them back without its token a moment later: a claim made
         * in between is lost (a read-modify-write of a claim list without a condition).
         */
        RELEASE_LOSES_A_RACING_CLAIM
    }

    /** How long RELEASE_LOSES_A_RACING_CLAIM takes between reading the claims and writing them back. */
    private static final long WRITE_DELAY_NANOS = 3_000_000L;

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
        Map<String, Long> live = claims.computeIfAbsent(slot(key), k -> new LinkedHashMap<>());
        if (defect == Defect.PRUNES_AT_MOST_16) {
            List<String> dead = new ArrayList<>();
            live.forEach((t, expiry) -> {
                if (expiry - now <= 0 && dead.size() < 16) {
                    dead.add(t);
                }
            });
            if (live.size() >= permits + dead.size()) {
                return Optional.empty(); // the condition failed: nothing is written, nothing pruned
            }
            dead.forEach(live::remove);
        } else if (defect != Defect.EXPIRED_COUNTED_UNTIL_RELEASE || permits == 1) {
            live.values().removeIf(expiry -> expiry - now <= 0);
        }
        if (defect != Defect.LAST_WRITER_WINS && live.size() >= permits) {
            return Optional.empty();
        }
        boolean forever = defect == Defect.LONG_CLAIMS_NEVER_EXPIRE && ttl.compareTo(Duration.ofSeconds(1)) > 0;
        live.put(token, forever ? now + Duration.ofDays(365).toNanos() : now + ttl.toNanos());
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

    synchronized Map<String, Long> snapshot(String key) {
        return new LinkedHashMap<>(claims.getOrDefault(slot(key), Map.of()));
    }

    synchronized void write(String key, Map<String, Long> live) {
        claims.put(slot(key), live);
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
                if (defect == Defect.RELEASE_LOSES_A_RACING_CLAIM) {
                    Map<String, Long> read = snapshot(key);
                    LockSupport.parkNanos(WRITE_DELAY_NANOS);
                    read.remove(token);
                    write(key, read);
                    return;
                }
                release(key, token);
            }

            @Override
            public void delete(String key) {
                super.delete(key);
                FlawedClaims.this.delete(key);
            }

            @Override
            public StateChange apply(String key, AtomicOperation operation, Policy policy, long now) {
                StateChange c = super.apply(key, operation, policy, now);
                boolean keep = defect == Defect.FORCE_HALF_OPEN_KEEPS_CLAIMS
                        && operation.kind() == AtomicOperation.Kind.FORCE_HALF_OPEN
                        || defect == Defect.FORCE_MODE_KEEPS_CLAIMS
                        && operation.kind() == AtomicOperation.Kind.FORCE_MODE;
                if (operation.removesClaims() && !keep) {
                    clear(key); // forcing CLOSED, HALF_OPEN or a mode removes every claim of the key (the SPI)
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

package dev.redeye.tck.broken;

import dev.redeye.api.Store;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Trial claims kept in one shared map (so every client sees them), with real-time expiry, and with one of two
 * deliberate defects: an unconditional release (deletes every claim of the key, whatever the token) or a
 * last-writer-wins claim (no count check: every claim succeeds).
 */
final class FlawedClaims {
    enum Defect { UNCONDITIONAL_RELEASE, LAST_WRITER_WINS }

    private final Defect defect;
    private final Map<String, Map<String, Long>> claims = new HashMap<>();

    FlawedClaims(Defect defect) {
        this.defect = defect;
    }

    synchronized Optional<String> claim(String key, int permits, Duration ttl) {
        long now = System.nanoTime();
        Map<String, Long> live = claims.computeIfAbsent(key, k -> new HashMap<>());
        live.values().removeIf(expiry -> expiry - now <= 0);
        if (defect != Defect.LAST_WRITER_WINS && live.size() >= permits) {
            return Optional.empty();
        }
        String token = UUID.randomUUID().toString();
        live.put(token, now + ttl.toNanos());
        return Optional.of(token);
    }

    synchronized void release(String key, String token) {
        Map<String, Long> live = claims.get(key);
        if (live == null) {
            return;
        }
        if (defect == Defect.UNCONDITIONAL_RELEASE) {
            live.clear();
        } else {
            live.remove(token);
        }
    }

    synchronized void delete(String key) {
        claims.remove(key);
    }

    /** A client whose claims go through this map and everything else to {@code inner}. */
    Store client(Store inner) {
        return new ForwardingStore(inner) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                get(key); // fails fast after close, like the rest of the store
                return claim(key, permits, ttl);
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
            public String toString() {
                return "FlawedClaims(" + defect + ")";
            }
        };
    }
}

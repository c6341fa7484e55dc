package dev.redeye;

import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A table of trial claims whose expiry the test decides ({@link #expireAll()}), shared by every store made
 * with {@link #over(Store)}: the store's own claim expiry (real time, proven per store by TCK R4.8) without
 * a timing-dependent test. Claims are compare-and-delete by token like the SPI asks; states, feed and every
 * other method go to the wrapped store.
 */
final class ManualClaims {
    private final Map<String, List<String>> live = new HashMap<>();
    private final AtomicInteger tokens = new AtomicInteger();
    final AtomicInteger claimCalls = new AtomicInteger();

    /** A client over {@code client} whose claims live in this table. */
    Store over(Store client) {
        return new ForwardingStore(client) {
            @Override
            public Optional<String> claimTrial(String key, int permits, Duration ttl) {
                return claim(key, permits);
            }

            @Override
            public void releaseTrial(String key, String token) {
                release(key, token);
            }
        };
    }

    synchronized Optional<String> claim(String key, int permits) {
        claimCalls.incrementAndGet();
        List<String> held = live.computeIfAbsent(key, k -> new ArrayList<>());
        if (held.size() >= permits) {
            return Optional.empty();
        }
        String token = "t" + tokens.incrementAndGet();
        held.add(token);
        return Optional.of(token);
    }

    synchronized void release(String key, String token) {
        List<String> held = live.get(key);
        if (held != null) {
            held.remove(token);
        }
    }

    /** Every live claim expires now, as the store's ttl would make it. */
    synchronized void expireAll() {
        live.clear();
    }

    synchronized int liveClaims(String key) {
        List<String> held = live.get(key);
        return held == null ? 0 : held.size();
    }
}

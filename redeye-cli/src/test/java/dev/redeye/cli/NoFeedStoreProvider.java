package dev.redeye.cli;

import dev.redeye.api.BreakerState;
import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test fixture, scheme {@code nofeed:}: a plain store with only the required methods (no capability at all,
 * so no transition feed) and private data per instance (two clients share nothing, so the TCK's two-client
 * rules fail). Registered in src/test/resources/META-INF/services.
 */
public final class NoFeedStoreProvider implements StoreProvider {

    /** ServiceLoader calls this. */
    public NoFeedStoreProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("nofeed");
    }

    @Override
    public Store open(String uri) {
        return new PlainStore();
    }

    private static final class PlainStore implements Store {
        private final Map<String, BreakerState> states = new ConcurrentHashMap<>();
        private volatile boolean closed;

        private void ensureOpen() {
            if (closed) {
                throw new StoreException("closed");
            }
        }

        @Override
        public Optional<BreakerState> get(String key) {
            ensureOpen();
            return Optional.ofNullable(states.get(key));
        }

        @Override
        public void put(String key, BreakerState state, Duration ttl) {
            ensureOpen();
            states.put(key, state);
        }

        @Override
        public void delete(String key) {
            ensureOpen();
            states.remove(key);
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}

package dev.redeye.cli;

import dev.redeye.api.BreakerState;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test fixture, scheme {@code naive:}: a shared store with only the required methods (get, put, delete; no
 * atomic recording, no trial claims). Every client of the same URI shares one map, so it stands for the
 * naive get-then-set shared breaker the simulation must tell apart from an atomic one.
 */
public final class NaiveSharedStoreProvider extends OneSchemeProvider {
    private static final Map<String, Map<String, BreakerState>> DATA = new ConcurrentHashMap<>();

    /** ServiceLoader calls this. */
    public NaiveSharedStoreProvider() {
        super("naive");
    }

    @Override
    public Store open(String uri) {
        return new MapStore(DATA.computeIfAbsent(uri, u -> new ConcurrentHashMap<>()));
    }

    /** A plain get/put store over a map: no capability at all (also used by {@link NoFeedStoreProvider}). */
    static final class MapStore implements Store {
        private final Map<String, BreakerState> states;
        private volatile boolean closed;

        MapStore(Map<String, BreakerState> states) {
            this.states = states;
        }

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

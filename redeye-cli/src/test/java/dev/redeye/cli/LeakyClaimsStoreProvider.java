package dev.redeye.cli;

import dev.redeye.InMemoryStore;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test fixture, scheme {@code leaky:}: a shared in-memory store (one per URI) whose trial claims never
 * refuse, like the TCK's deliberately broken stores. Everything else is the real {@link InMemoryStore}.
 */
public final class LeakyClaimsStoreProvider extends OneSchemeProvider {
    private static final Map<String, InMemoryStore> BACKENDS = new ConcurrentHashMap<>();

    /** ServiceLoader calls this. */
    public LeakyClaimsStoreProvider() {
        super("leaky");
    }

    @Override
    public Store open(String uri) {
        return new Client(BACKENDS.computeIfAbsent(uri, u -> new InMemoryStore()).newClient());
    }

    private static final class Client extends ForwardingStore {
        Client(Store d) {
            super(d);
        }

        /** The defect: every caller wins. */
        @Override
        public Optional<String> claimTrial(String key, int permits, Duration ttl) {
            return Optional.of(UUID.randomUUID().toString());
        }

        @Override
        public void releaseTrial(String key, String token) {
            // nothing was held
        }
    }
}

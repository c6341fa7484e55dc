package dev.redeye;

import dev.redeye.api.StoreException;
import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test provider of {@code switchable://NAME} stores: clients of one in-memory backend per name, which a test
 * can take down and bring back ({@link Backend#down}), so that opening fails as with an unreachable server.
 * {@code switchable://NAME?lacking=feed} opens clients without a feed (a provider that declares more than it
 * opens). It declares its capabilities from the URI, so {@code Stores.open} opens it lazily.
 */
public final class SwitchableStoreProvider implements StoreProvider {
    static final Set<Class<?>> ALL = Set.of(AtomicUpdates.class, TrialClaims.class,
            TransitionFeed.class);
    private static final ConcurrentHashMap<String, Backend> BACKENDS = new ConcurrentHashMap<>();

    /** One named backend and its switch. */
    static final class Backend {
        final InMemoryStore store = new InMemoryStore();
        final AtomicInteger opens = new AtomicInteger();
        final AtomicInteger refused = new AtomicInteger();
        volatile boolean down;
        volatile long openMillis;
    }

    /** The backend of {@code name}, created up if new. */
    static Backend backend(String name) {
        return BACKENDS.computeIfAbsent(name, n -> new Backend());
    }

    /** Used by the ServiceLoader. */
    public SwitchableStoreProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("switchable");
    }

    @Override
    public Store open(String uri) {
        Backend b = backend(name(uri));
        if (b.openMillis > 0) {
            try {
                Thread.sleep(b.openMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException("interrupted (test)", e);
            }
        }
        if (b.down) {
            b.refused.incrementAndGet();
            throw new StoreException("cannot reach " + uri + ": connection refused (test)");
        }
        b.opens.incrementAndGet();
        return uri.endsWith("?lacking=feed") ? new SpyStore(b.store.newClient(), TransitionFeed.class)
                : b.store.newClient();
    }

    @Override
    public Optional<Description> describe(String uri) {
        name(uri);
        return Optional.of(new Description(Store.class, ALL));
    }

    private static String name(String uri) {
        if (!uri.startsWith("switchable://") || uri.length() == "switchable://".length()) {
            throw new IllegalArgumentException("expected switchable://NAME, was " + uri);
        }
        String rest = uri.substring("switchable://".length());
        int q = rest.indexOf('?');
        return q < 0 ? rest : rest.substring(0, q);
    }
}

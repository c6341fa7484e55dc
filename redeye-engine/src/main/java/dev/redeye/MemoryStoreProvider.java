package dev.redeye;

import dev.redeye.api.Store;
import dev.redeye.api.StoreProvider;
import dev.redeye.api.StoreUris;
import java.util.Set;

/**
 * The {@code memory:} scheme: each {@code Stores.open("memory:")} returns a new, empty
 * {@link InMemoryStore}. Registered through {@code META-INF/services}.
 */
public final class MemoryStoreProvider implements StoreProvider {

    /** Creates the provider (ServiceLoader calls this). */
    public MemoryStoreProvider() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    /**
     * @throws IllegalArgumentException if the URI's scheme is not {@code memory}
     */
    @Override
    public Store open(String uri) {
        if (!"memory".equals(StoreUris.scheme(uri))) {
            throw new IllegalArgumentException("not a memory: URI: " + StoreUris.redact(uri));
        }
        return new InMemoryStore();
    }
}

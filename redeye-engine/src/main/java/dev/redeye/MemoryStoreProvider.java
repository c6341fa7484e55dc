package dev.redeye;

import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.support.StoreUris;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code memory:} scheme, registered through {@code META-INF/services}.
 *
 * <ul>
 * <li>{@code memory:} returns a new, empty {@link InMemoryStore} on each call;</li>
 * <li>{@code memory://NAME} (or {@code memory:NAME}) returns a new client ({@link InMemoryStore#newClient()})
 * of one process-wide store registered under NAME, created on first use and kept for the life of the JVM:
 * two opens of the same named URI stand for two processes sharing one backend, which is what the TCK
 * ({@code redeye tck --store memory://tck}) and the fleet simulation need. Closing a client does not close
 * the named store.</li>
 * </ul>
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
        String rest = uri.substring(uri.indexOf(':') + 1);
        if (rest.startsWith("//")) {
            rest = rest.substring(2);
        }
        int q = rest.indexOf('?');
        String name = q < 0 ? rest : rest.substring(0, q);
        if (name.isEmpty()) {
            return new InMemoryStore();
        }
        return NAMED.computeIfAbsent(name, n -> new InMemoryStore()).newClient();
    }

    private static final ConcurrentHashMap<String, InMemoryStore> NAMED = new ConcurrentHashMap<>();
}

package dev.redeye;

import dev.redeye.api.Store;
import dev.redeye.api.StoreProvider;
import dev.redeye.api.StoreUris;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;

/**
 * Opens a store from a URI through the {@link StoreProvider}s on the classpath
 * ({@link ServiceLoader}, {@code META-INF/services/dev.redeye.api.StoreProvider}). Swapping backends is a
 * classpath change plus a URI change; no call site changes.
 *
 * <pre>{@code
 * Store store = Stores.open("redis://127.0.0.1:6379?prefix=myapp:");
 * }</pre>
 *
 * Providers are looked up on every call (opening a store is rare and may be expensive anyway), with the
 * thread context class loader first and this class's loader as a fallback.
 *
 * <h2>{@code memory:} is private; {@code memory://NAME} is shared</h2>
 * {@code Stores.open("memory:")} returns a <b>new, private</b> in-process store on every call: two breakers
 * each opened over {@code "memory:"} share nothing, exactly like two breakers in local mode. To make several
 * breakers (standing for several instances) share one in-process store, name it: every
 * {@code Stores.open("memory://fleet")} returns a new client of the one store named {@code fleet}, which lives
 * as long as the JVM. In production, state shared across processes needs a real store (Redis, PostgreSQL, ...).
 */
public final class Stores {

    private Stores() {
    }

    /**
     * Opens a new store for {@code uri} with the provider whose scheme matches (the longest matching scheme
     * wins, so {@code jdbc:postgresql} beats {@code jdbc}). The caller owns and closes the store. Note that
     * {@code "memory:"} opens a private store each time and {@code "memory://NAME"} a client of one shared
     * named store (see the class comment).
     *
     * @throws IllegalArgumentException if the URI is null or has no scheme, or no provider on the classpath
     *                                  handles its scheme (the message lists the schemes found), or the
     *                                  provider rejects the URI
     * @throws dev.redeye.api.StoreException if the provider cannot reach its backend
     */
    public static Store open(String uri) {
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("store URI must not be null or blank");
        }
        String lower = uri.toLowerCase(Locale.ROOT);
        StoreProvider best = null;
        int bestLength = -1;
        for (StoreProvider p : providers()) {
            for (String scheme : p.schemes()) {
                String s = scheme.toLowerCase(Locale.ROOT);
                if (lower.startsWith(s + ":") && s.length() > bestLength) {
                    best = p;
                    bestLength = s.length();
                }
            }
        }
        if (best == null) {
            throw new IllegalArgumentException("no store provider for '" + StoreUris.redact(uri)
                    + "' on the classpath; schemes found: " + String.join(", ", schemes())
                    + " (add a store module such as redeye-store-redis to the classpath)");
        }
        return best.open(uri);
    }

    /** The schemes of every provider on the classpath, sorted. */
    public static Set<String> schemes() {
        Set<String> out = new TreeSet<>();
        for (StoreProvider p : providers()) {
            out.addAll(p.schemes());
        }
        return out;
    }

    private static List<StoreProvider> providers() {
        List<StoreProvider> out = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        load(context != null ? context : Stores.class.getClassLoader(), out, seen);
        load(Stores.class.getClassLoader(), out, seen);
        return out;
    }

    private static void load(ClassLoader loader, List<StoreProvider> out, Set<String> seen) {
        ServiceLoader<StoreProvider> sl = ServiceLoader.load(StoreProvider.class, loader);
        for (var it = sl.iterator(); ; ) {
            StoreProvider p;
            try {
                if (!it.hasNext()) {
                    break;
                }
                p = it.next();
            } catch (ServiceConfigurationError e) {
                org.slf4j.LoggerFactory.getLogger(Stores.class).warn("skipping a broken store provider: {}",
                        e.getMessage());
                continue;
            }
            if (seen.add(p.getClass().getName())) {
                out.add(p);
            }
        }
    }
}

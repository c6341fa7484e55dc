package dev.redeye;

import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.support.StoreUris;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Opens a store from a URI through the {@link StoreProvider}s on the classpath
 * ({@link ServiceLoader}, {@code META-INF/services/dev.redeye.spi.StoreProvider}). Swapping backends is a
 * classpath change plus a URI change; no call site changes.
 *
 * <pre>{@code
 * Store store = Stores.open("redis://127.0.0.1:6379?prefix=myapp:");
 * }</pre>
 *
 * Providers are looked up on every call (opening a store is rare and may be expensive anyway), with the
 * thread context class loader first and this class's loader as a fallback.
 *
 * <h2>A store that is down at start does not fail the start</h2>
 * By default ({@link OpenMode#LAZY}) a network store is returned without connecting: it connects on first use,
 * retries in the background until it can, and meanwhile fails its calls as store errors, which every breaker
 * handles under its {@link StoreErrorPolicy} and reports to {@code onStoreError}. A circuit breaker built over
 * it knows its capabilities at once (the provider declares them from the URI). {@link OpenMode#STRICT}
 * connects before returning and throws when the backend cannot be reached.
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
     * wins, so {@code jdbc:postgresql} beats {@code jdbc}), in {@link OpenMode#LAZY} mode: a network store is
     * returned without connecting and connects on first use, so that a store that is down when the
     * application starts does not fail the start (its calls meanwhile fail as store errors, which every
     * breaker handles under its {@link StoreErrorPolicy}). The caller owns and closes the store. Note that
     * {@code "memory:"} opens a private store each time and {@code "memory://NAME"} a client of one shared
     * named store (see the class comment).
     *
     * @throws IllegalArgumentException if the URI is null or has no scheme, or no provider on the classpath
     *                                  handles its scheme (the message lists the schemes found), or the
     *                                  provider rejects the URI
     * @throws dev.redeye.api.StoreException only for a store whose provider cannot open it lazily (see
     *                                       {@link StoreProvider#describe(String)}), if it cannot reach its
     *                                       backend
     */
    public static Store open(String uri) {
        return open(uri, OpenMode.LAZY);
    }

    /**
     * Opens a new store for {@code uri} as {@link #open(String)} does, in the given mode:
     * {@link OpenMode#STRICT} connects before returning and fails if the backend cannot be reached.
     *
     * <pre>{@code
     * Store store = Stores.open("redis://127.0.0.1:6379?prefix=myapp:", OpenMode.STRICT); // fail fast
     * }</pre>
     *
     * @throws IllegalArgumentException      as {@link #open(String)}
     * @throws NullPointerException          if {@code mode} is null
     * @throws dev.redeye.api.StoreException in STRICT mode (or for a store that cannot be opened lazily), if
     *                                       the backend cannot be reached
     */
    public static Store open(String uri, OpenMode mode) {
        Objects.requireNonNull(mode, "mode");
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
        if (mode == OpenMode.LAZY) {
            Optional<StoreProvider.Description> declared = best.describe(uri);
            if (declared.isPresent()) {
                StoreProvider provider = best;
                return new ConnectingStore(StoreUris.redact(uri), declared.get(), () -> provider.open(uri));
            }
        }
        return best.open(uri);
    }

    /**
     * A store that opens {@code opener}'s store on first use, as {@link OpenMode#LAZY} does for a URI: for a
     * store built in code (over an application's own pool or client) that must not fail the application's
     * start when its backend is down. {@code opener} runs on a background thread, again with backoff until it
     * returns a store; every call fails with a {@link dev.redeye.api.StoreException} until then.
     *
     * <pre>{@code
     * Store store = Stores.connecting("PostgreSQL over the app's pool",
     *         StoreProvider.Description.allCapabilities(PostgresStore.class),
     *         () -> PostgresStore.builder(dataSource).build());
     * }</pre>
     *
     * @param description how messages and logs name the store; must not hold a password
     * @param declared    the class of the store {@code opener} returns and the capabilities it offers, declared
     *                    now because a breaker looks them up when it is built; a store of another class, or
     *                    lacking one of them, fails to connect
     * @param opener      opens the store, connected, or throws; the returned store owns what it opened
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if a capability is not one of {@code AtomicUpdates},
     *                                  {@code TrialClaims}, {@code TransitionFeed}
     */
    public static Store connecting(String description, StoreProvider.Description declared,
            Supplier<? extends Store> opener) {
        return new ConnectingStore(description, Objects.requireNonNull(declared, "declared"), opener);
    }

    /**
     * The class a store is known by, for metrics and log lines: its own, or for a store that connects on first
     * use ({@link OpenMode#LAZY}, {@link #connecting}) the class of the store it connects to, known before it
     * does.
     *
     * @throws NullPointerException if {@code store} is null
     */
    public static Class<? extends Store> typeOf(Store store) {
        Objects.requireNonNull(store, "store");
        return store instanceof ConnectingStore c ? c.type() : store.getClass();
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

package dev.redeye.store.hazelcast;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.ClientConnectionStrategyConfig;
import com.hazelcast.client.config.ConnectionRetryConfig;
import com.hazelcast.config.ListenerConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.core.LifecycleListener;
import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.spi.support.UriStoreProvider;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opens a {@link HazelcastStore} with its own Hazelcast client for {@code hazelcast://} URIs, found by
 * {@code Stores.open(uri)} through {@link java.util.ServiceLoader}:
 *
 * <pre>
 * hazelcast://[cluster@]host[:port][,host[:port]...][?map=redeye&amp;mode=auto&amp;timeout=2000]
 * </pre>
 *
 * <ul>
 * <li>{@code cluster}: the cluster name (default {@code dev}, Hazelcast's default); {@code port} defaults to
 * 5701. Several members may be listed; the client discovers the rest.</li>
 * <li>{@code map}: the map (default {@code redeye}; one entry per operation, its state and trial claims);
 * {@code mode}: {@code auto} (default), {@code native} or {@code cas} (see {@link HazelcastStore.Mode});
 * {@code timeout}: ms, default 2000 (see below); {@code user} and {@code password}: credentials, only for
 * clusters with security enabled (Enterprise): a member without security refuses a client that sends any
 * (Hazelcast's rule), which then cannot connect. The password is never logged, printed or put in a message.
 * Any other parameter is rejected, so a typo does not pass silently.</li>
 * </ul>
 *
 * <p><b>A client sized for a breaker.</b> Hazelcast's client defaults suit a data grid, not a breaker that must
 * answer fast: an invocation waits up to 120 s and a disconnected client blocks every call while it
 * reconnects. This client instead fails a call after {@code timeout} (rounded up to whole seconds, Hazelcast's
 * unit), fails calls at once while disconnected ({@code ReconnectMode.ASYNC}; the store reports a
 * {@link StoreException} and the breaker applies its store-error policy) and keeps reconnecting in the
 * background without end (100 ms doubling to 2 s), declares a silent connection dead after 10 s of missed
 * heartbeats, and connects sockets within {@code timeout}. {@link #open(String)} waits up to {@code timeout}
 * for the first connection and fails with a {@link StoreException} if it does not come (shutting that client
 * down). {@code Stores.open(uri)} does that on first use and again, with backoff, until a member answers
 * ({@link #describe(String)}); {@code Stores.open(uri, OpenMode.STRICT)} and {@link HazelcastStore#open}
 * do it at once. Hazelcast logs through SLF4J.
 */
public final class HazelcastStoreProvider extends UriStoreProvider<HazelcastStore> {
    private static final Set<String> PARAMS = Set.of("map", "mode", "timeout", "user", "password");
    private static final String SCHEME = "hazelcast";
    private static final AtomicLong CLIENTS = new AtomicLong();

    /** Used by {@link java.util.ServiceLoader}. */
    public HazelcastStoreProvider() {
        super(HazelcastStore.class, Set.of(SCHEME), HazelcastStoreProvider::parse,
                HazelcastStoreProvider::openStore);
    }

    /**
     * A store with its own client (see the class Javadoc for the URI), in either mode: the mode is only known once
     * connected, and native or CAS offer the same capabilities; see {@link HazelcastStore#open(String)}.
     *
     * @throws StoreException if the cluster cannot be reached within the timeout
     */
    private static HazelcastStore openStore(Parsed p, String uri) {
        HazelcastInstance client = newClient(p);
        try {
            return HazelcastStore.builder(client).map(p.map()).mode(p.mode()).closeInstance(true).build();
        } catch (RuntimeException e) {
            client.shutdown();
            throw e instanceof StoreException ? (StoreException) e
                    : new StoreException("cannot open the Hazelcast store at " + p.safe() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Starts a client configured by {@link #clientConfig} and waits up to the URI's timeout for its first
     * connection (and, within the same timeout, best effort, for its connections to every member).
     *
     * @throws StoreException if it does not connect in time (the client is shut down)
     */
    static HazelcastInstance newClient(Parsed p) {
        return newClient(p, clientConfig(p));
    }

    /** {@link #newClient(Parsed)} with a configuration made from {@code p} and changed by the caller. */
    static HazelcastInstance newClient(Parsed p, ClientConfig config) {
        CountDownLatch connected = new CountDownLatch(1);
        config.addListenerConfig(new ListenerConfig((LifecycleListener) e -> {
            if (e.getState() == LifecycleEvent.LifecycleState.CLIENT_CONNECTED) {
                connected.countDown();
            }
        }));
        HazelcastInstance client;
        try {
            client = HazelcastClient.newHazelcastClient(config);
        } catch (RuntimeException e) {
            throw new StoreException("cannot start a Hazelcast client for " + p.safe() + ": " + e.getMessage(), e);
        }
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(p.timeoutMillis());
            if (!connected.await(p.timeoutMillis(), TimeUnit.MILLISECONDS)) {
                client.shutdown();
                throw new StoreException("cannot reach the Hazelcast cluster at " + p.safe() + " within "
                        + p.timeoutMillis() + " ms (wrong address or cluster name, or credentials sent to a cluster"
                        + " without security?)");
            }
            // Best effort, within the same timeout: connected to every member, a feed listener registered on
            // this client covers every partition at once (see HazelcastFeed).
            while (!ClientConnections.connectedToAllMembers(client) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            return client;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.shutdown();
            throw new StoreException("interrupted while connecting to the Hazelcast cluster at " + p.safe(), e);
        }
    }

    /** The client configuration of a parsed URI (see the class Javadoc). */
    static ClientConfig clientConfig(Parsed p) {
        ClientConfig c = new ClientConfig();
        c.setInstanceName("redeye-" + ProcessHandle.current().pid() + "-" + CLIENTS.incrementAndGet());
        c.setClusterName(p.cluster());
        c.getNetworkConfig().setAddresses(new ArrayList<>(p.addresses())).setConnectionTimeout(p.timeoutMillis());
        if (p.user() != null || p.password() != null) {
            c.getSecurityConfig().setUsernamePasswordIdentityConfig(p.user(), p.password());
        }
        ClientConnectionStrategyConfig strategy = c.getConnectionStrategyConfig()
                .setAsyncStart(true)
                .setReconnectMode(ClientConnectionStrategyConfig.ReconnectMode.ASYNC);
        ConnectionRetryConfig retry = strategy.getConnectionRetryConfig();
        retry.setInitialBackoffMillis(100).setMaxBackoffMillis(2_000).setMultiplier(2.0).setJitter(0.2)
                .setClusterConnectTimeoutMillis(-1); // keep trying in the background; open() waits for the first
        c.setProperty("hazelcast.client.invocation.timeout.seconds",
                Long.toString(Math.max(1, (p.timeoutMillis() + 999) / 1000)));
        c.setProperty("hazelcast.client.invocation.retry.pause.millis", "100");
        c.setProperty("hazelcast.client.heartbeat.interval", "2000");
        c.setProperty("hazelcast.client.heartbeat.timeout", "10000");
        c.setProperty("hazelcast.logging.type", "slf4j");
        return c;
    }

    /**
     * A parsed URI.
     *
     * @param safe the URI redacted, for messages
     */
    record Parsed(String safe, String cluster, List<String> addresses, String map, HazelcastStore.Mode mode,
                  int timeoutMillis, String user, String password) {
        /** The redacted URI: never the password. */
        @Override
        public String toString() {
            return safe;
        }
    }

    /**
     * Parses a {@code hazelcast://} URI.
     *
     * @throws IllegalArgumentException naming the problem and the redacted URI
     */
    static Parsed parse(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("Hazelcast URI must not be null");
        }
        String safe = StoreUris.redact(uri);
        if (!SCHEME.equals(StoreUris.scheme(uri)) || !uri.regionMatches(true, 0, SCHEME + "://", 0, SCHEME.length() + 3)) {
            throw new IllegalArgumentException("not a hazelcast:// URI: " + safe);
        }
        String rest = uri.substring(SCHEME.length() + 3);
        int end = indexOfAny(rest, "/?#");
        String authority = end < 0 ? rest : rest.substring(0, end);
        if (end >= 0 && rest.charAt(end) == '/' && end + 1 < rest.length() && rest.charAt(end + 1) != '?') {
            throw new IllegalArgumentException("a Hazelcast URI has no path (name the map with ?map=): " + safe);
        }
        String cluster = "dev";
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            try {
                cluster = URLDecoder.decode(authority.substring(0, at).replace("+", "%2B"), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                cluster = "";
            }
            if (cluster.isEmpty() || cluster.indexOf(':') >= 0) {
                throw new IllegalArgumentException("the part before '@' of a Hazelcast URI is the cluster name"
                        + " (credentials go in ?user=&password=): " + safe);
            }
            authority = authority.substring(at + 1);
        }
        List<String> addresses = new ArrayList<>();
        for (String a : authority.split(",", -1)) {
            addresses.add(address(a.trim(), safe));
        }
        Map<String, String> q = StoreUris.query(uri);
        for (String k : q.keySet()) {
            if (!PARAMS.contains(k)) {
                throw new IllegalArgumentException("unknown Hazelcast URI parameter '" + k + "' (known: map, mode,"
                        + " timeout, user, password): " + safe);
            }
        }
        String map = q.getOrDefault("map", "redeye");
        if (map.isBlank()) {
            throw new IllegalArgumentException("Hazelcast URI parameter map must not be empty: " + safe);
        }
        HazelcastStore.Mode mode;
        try {
            mode = HazelcastStore.Mode.valueOf(q.getOrDefault("mode", "auto").trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Hazelcast URI parameter mode must be auto, native or cas, was '"
                    + q.get("mode") + "': " + safe);
        }
        int timeout = 2_000;
        if (q.containsKey("timeout")) {
            try {
                timeout = Integer.parseInt(q.get("timeout").trim());
            } catch (NumberFormatException e) {
                timeout = -1;
            }
            if (timeout < 1) {
                throw new IllegalArgumentException("Hazelcast URI parameter timeout must be a positive number of ms,"
                        + " was '" + q.get("timeout") + "': " + safe);
            }
        }
        return new Parsed(safe, cluster, List.copyOf(addresses), map, mode, timeout, q.get("user"), q.get("password"));
    }

    private static String address(String a, String safe) {
        if (a.isEmpty()) {
            throw new IllegalArgumentException("Hazelcast URI has an empty member address: " + safe);
        }
        int colon = a.lastIndexOf(':');
        boolean bracketed = a.startsWith("[");
        if (colon < 0 || (bracketed && a.endsWith("]"))) {
            return a + ":5701";
        }
        String port = a.substring(colon + 1);
        try {
            int n = Integer.parseInt(port);
            if (n < 1 || n > 65_535) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Hazelcast URI member port must be 1..65535, was '" + port + "': " + safe);
        }
        if (colon == 0) {
            throw new IllegalArgumentException("Hazelcast URI member address has no host: " + safe);
        }
        return a;
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }
}

package dev.redeye.store.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.LoggerFactory;

import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.spi.support.UriStoreProvider;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Opens a {@link RedisStore} for {@code redis://} and {@code rediss://} (TLS) URIs, found by
 * {@code Stores.open(uri)} through {@link java.util.ServiceLoader}:
 *
 * <pre>
 * redis://[[user]:password@]host[:port][/database][?prefix=myapp:&amp;timeout=2000&amp;poolSize=16]
 * rediss://...   same, over TLS with full verification (certificate chain and host name)
 * </pre>
 *
 * <ul>
 * <li>user-info {@code user:password}, {@code :password} or a bare {@code password}; percent-encode
 * reserved characters. The password is never logged, printed or put in an exception message.</li>
 * <li>{@code port} defaults to 6379, {@code database} to 0.</li>
 * <li>{@code prefix}: key prefix (default empty); {@code timeout}: connect and socket timeout in ms, and the
 * longest wait for a pooled connection (default 2000); {@code poolSize}: maximum connections of the store's
 * pool (default 16; the feed uses one more, outside the pool); {@code feedMaxLength}: approximate length cap
 * of the feed stream (default 10000); {@code idleCheck}: a pooled connection idle at least this many ms is
 * checked with a PING before use (default 1000; 0 checks every use); {@code trustStore} ({@code rediss}
 * only): a PEM file of the CA certificates to trust instead of the JVM default trust store;
 * {@code tlsServerName} ({@code rediss} only): the name every server's certificate must carry, instead of the
 * URI's host; {@code waitReplicas} (default 0, off): after every transition, wait until that many replicas
 * acknowledged it ({@code WAIT}), at most {@code waitTimeout} ms (default half of {@code timeout}, and below it),
 * else the call fails with {@link StoreException} (see {@link RedisStore.Builder#waitReplicas}). Any other
 * parameter is rejected, so a typo does not pass silently.</li>
 * </ul>
 *
 * <p>{@code rediss://} verifies the server's certificate chain <em>and</em> that the certificate names the
 * URI's host, or {@code tlsServerName} (a DNS or IP subject alternative name); a mismatch fails the handshake.
 * On a Cluster every node is checked against that same name, not against the IP address the cluster reports
 * it by (see {@link Tls}): one certificate for the cluster's name serves every node.
 *
 * <p>{@link #open(String)} pings the server once, so an unreachable server fails at once with
 * {@link StoreException} ({@code Stores.open(uri)} calls it on first use and retries until the server
 * answers, see {@link #describe(String)}; {@code Stores.open(uri, OpenMode.STRICT)} and
 * {@link RedisStore#open(String)} call it at once), and logs one warning when the server can evict breaker keys ({@code maxmemory} set
 * and a {@code maxmemory-policy} other than {@code noeviction}). If the node is part of a <b>Redis Cluster</b> ({@code INFO cluster} says
 * {@code cluster_enabled:1}) the store gets a {@link JedisCluster} seeded with that node (database must be 0)
 * and its feed follows the stream's slot; otherwise its own {@link JedisPooled} and a dedicated feed
 * connection with the same address and credentials. Either way the client is closed with the store.
 *
 * <p><b>Bounds.</b> Every store operation waits at most {@code timeout} for a pooled connection (then fails
 * with {@link StoreException}), at most {@code timeout} for a connection to open or a reply to arrive, and at
 * most min(250 ms, {@code timeout}) for the PING that checks a connection idle longer than
 * {@code idleCheck}. Writes are at most once: a command whose reply was lost is never re-sent (see
 * {@link RedisStore}). The cluster client follows no redirect and retries nothing itself (maxAttempts 1); the
 * store re-sends a command once when the server refused it with MOVED/ASK.
 */
public final class RedisStoreProvider extends UriStoreProvider<RedisStore> {
    private static final Set<String> PARAMS = Set.of("prefix", "timeout", "poolSize", "feedMaxLength", "idleCheck",
            "trustStore", "tlsServerName", "waitReplicas", "waitTimeout");
    static final int DEFAULT_TIMEOUT_MILLIS = 2_000;
    static final int DEFAULT_IDLE_CHECK_MILLIS = 1_000;
    /** The longest a PING checking an idle pooled connection may take. */
    static final int MAX_CHECK_MILLIS = 250;

    /** Used by {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {
        super(RedisStore.class, Set.of("redis", "rediss"), RedisStoreProvider::parse, RedisStoreProvider::openStore);
    }

    /**
     * The store of a parsed URI, standalone or cluster alike: the kind of server is only known once connected, and
     * both have a feed connection; see {@link RedisStore#open(String)}.
     *
     * @throws StoreException if the server cannot be reached or rejects the credentials
     */
    private static RedisStore openStore(Parsed p, String uri) {
        String safe = StoreUris.redact(uri);
        boolean cluster = probe(p, safe);
        RedisStore.Builder b;
        if (cluster) {
            if (p.config().getDatabase() != 0) {
                throw new StoreException("Redis URI names database " + p.config().getDatabase() + " but " + p.address()
                        + " is a Redis Cluster node, which has database 0 only: " + safe);
            }
            JedisCluster jc;
            try {
                jc = cluster(p);
            } catch (JedisException e) {
                throw new StoreException("cannot open a Redis Cluster client through " + safe + ": " + e.getMessage(),
                        e);
            }
            b = RedisStore.builder(jc);
        } else {
            JedisPooled pooled = pooled(p);
            try {
                pooled.ping(); // the database and credentials as configured
            } catch (JedisException e) {
                pooled.close();
                throw new StoreException("cannot reach Redis at " + safe + ": " + e.getMessage(), e);
            }
            b = RedisStore.builder(pooled).feedConnection(p.address(), p.config()).publishInScript(true);
        }
        b.prefix(p.prefix()).closeClient(true);
        if (p.feedMaxLength() > 0) {
            b.feedMaxLength(p.feedMaxLength());
        }
        if (p.waitReplicas() > 0) {
            b.waitReplicas(p.waitReplicas(), Duration.ofMillis(p.waitTimeoutMillis()));
        }
        RedisStore store = b.build();
        ServerChecks.warnIfEvicting(store.client(), safe);
        return store;
    }

    /**
     * Connects once (in database 0, which every server has) and asks whether the node is part of a Redis
     * Cluster; a server that refuses INFO (an ACL) is taken as standalone.
     *
     * @throws StoreException if the server cannot be reached or refuses the credentials
     */
    private static boolean probe(Parsed p, String safe) {
        JedisClientConfig db0 = DefaultJedisClientConfig.builder().from(p.config()).database(0).build();
        try (Connection c = new Connection(p.address(), db0)) {
            Jedis j = new Jedis(c);
            j.ping();
            try {
                return ServerChecks.clusterEnabled(j.info("cluster"));
            } catch (JedisDataException e) {
                LoggerFactory.getLogger(RedisStore.class).debug("redeye: INFO cluster refused by {} ({}); assuming a"
                        + " standalone server", safe, e.getMessage());
                return false;
            }
        } catch (JedisException e) {
            throw new StoreException("cannot reach Redis at " + safe + ": " + e.getMessage(), e);
        }
    }

    /**
     * The store's own pool: at most {@code poolSize} connections, a borrower waits at most {@code timeout}
     * (maxWait) for one, and a connection idle for {@code idleCheck} or longer is PINGed before use.
     */
    static JedisPooled pooled(Parsed p) {
        int checkMillis = Math.min(MAX_CHECK_MILLIS, p.config().getSocketTimeoutMillis());
        IdleCheckingConnectionFactory factory = new IdleCheckingConnectionFactory(p.address(), p.config(),
                Duration.ofMillis(p.idleCheckMillis()), checkMillis);
        ConnectionPoolConfig pool = poolConfig(p);
        pool.setTestOnBorrow(true); // the factory PINGs only connections idle >= idleCheck
        JedisPooled client = new JedisPooled(factory, pool);
        factory.pool(client.getPool());
        return client;
    }

    /** A cluster client that retries nothing itself: the store decides what may be sent twice. */
    static JedisCluster cluster(Parsed p) {
        return new JedisCluster(Set.of(p.address()), p.config(), 1, Duration.ofMillis(p.config().getSocketTimeoutMillis()),
                poolConfig(p));
    }

    private static ConnectionPoolConfig poolConfig(Parsed p) {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(p.poolSize());
        pool.setMaxIdle(p.poolSize());
        pool.setBlockWhenExhausted(true);
        pool.setMaxWait(Duration.ofMillis(p.config().getSocketTimeoutMillis()));
        pool.setJmxEnabled(false);
        return pool;
    }

    /**
     * A parsed URI: where to connect, how, and the store options.
     *
     * @param waitReplicas      WAIT after a transition for this many replicas (0: off), at most waitTimeoutMillis
     * @param waitTimeoutMillis the longest WAIT
     */
    record Parsed(HostAndPort address, JedisClientConfig config, String prefix, long feedMaxLength, int poolSize,
                  int idleCheckMillis, int waitReplicas, int waitTimeoutMillis) {
        /** The address and the store options: never the credentials the client configuration holds. */
        @Override
        public String toString() {
            return "Parsed[" + address + ", prefix=" + prefix + ", poolSize=" + poolSize + "]";
        }
    }

    /**
     * Parses a {@code redis://} or {@code rediss://} URI.
     *
     * @throws IllegalArgumentException naming the problem and the redacted URI
     */
    static Parsed parse(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("Redis URI must not be null");
        }
        String safe = StoreUris.redact(uri);
        String scheme = StoreUris.scheme(uri);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("not a redis:// or rediss:// URI: " + safe);
        }
        URI u;
        try {
            u = new URI(uri);
        } catch (URISyntaxException e) {
            // The parser's own message quotes the input, password included: never pass it on.
            throw new IllegalArgumentException("malformed Redis URI " + safe + " (at index " + e.getIndex() + ")");
        }
        String host = u.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("Redis URI has no host: " + safe);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = u.getPort() < 0 ? 6379 : u.getPort();

        DefaultJedisClientConfig.Builder cfg = DefaultJedisClientConfig.builder()
                .timeoutMillis(DEFAULT_TIMEOUT_MILLIS);
        String info = u.getRawUserInfo();
        if (info != null && !info.isEmpty()) {
            int colon = info.indexOf(':');
            String user = colon < 0 ? null : decode(info.substring(0, colon));
            String password = decode(colon < 0 ? info : info.substring(colon + 1));
            if (user != null && !user.isEmpty()) {
                cfg.user(user);
            }
            if (!password.isEmpty()) {
                cfg.password(password);
            }
        }
        String path = u.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            String db = path.substring(1);
            try {
                int n = Integer.parseInt(db);
                if (n < 0) {
                    throw new NumberFormatException();
                }
                cfg.database(n);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Redis URI database must be a number >= 0, was '" + db + "': "
                        + safe);
            }
        }
        Map<String, String> q = StoreUris.query(uri);
        for (String k : q.keySet()) {
            if (!PARAMS.contains(k)) {
                throw new IllegalArgumentException("unknown Redis URI parameter '" + k + "' (known: prefix, timeout,"
                        + " poolSize, feedMaxLength, idleCheck, trustStore, tlsServerName, waitReplicas, waitTimeout): "
                        + safe);
            }
        }
        boolean tls = scheme.equals("rediss");
        for (String tlsOnly : List.of("trustStore", "tlsServerName")) {
            if (q.containsKey(tlsOnly) && !tls) {
                throw new IllegalArgumentException("Redis URI parameter " + tlsOnly + " needs a rediss:// URI: " + safe);
            }
        }
        if (tls) {
            String ts = q.get("trustStore");
            String serverName = q.getOrDefault("tlsServerName", host);
            if (serverName.isBlank() || !serverName.strip().equals(serverName)) {
                throw new IllegalArgumentException("Redis URI parameter tlsServerName must be a host name, was '"
                        + serverName + "': " + safe);
            }
            Tls.configure(cfg, ts == null || ts.isBlank() ? null : ts, serverName);
        }
        if (q.containsKey("timeout")) {
            int t = positiveInt(q.get("timeout"), "timeout", safe);
            cfg.timeoutMillis(t);
        }
        long maxLen = q.containsKey("feedMaxLength") ? positiveInt(q.get("feedMaxLength"), "feedMaxLength", safe) : 0;
        int poolSize = q.containsKey("poolSize") ? positiveInt(q.get("poolSize"), "poolSize", safe) : 16;
        int idleCheck = q.containsKey("idleCheck") ? intParam(q.get("idleCheck"), "idleCheck", 0, "an integer >= 0", safe)
                : DEFAULT_IDLE_CHECK_MILLIS;
        String prefix = q.getOrDefault("prefix", "");
        try {
            RedisKeys.checkPrefix(prefix);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Redis URI parameter " + e.getMessage() + ": " + safe, e);
        }
        JedisClientConfig config = cfg.build();
        int waitReplicas = q.containsKey("waitReplicas")
                ? intParam(q.get("waitReplicas"), "waitReplicas", 0, "an integer >= 0", safe) : 0;
        int socketTimeout = config.getSocketTimeoutMillis();
        int waitTimeout = q.containsKey("waitTimeout") ? positiveInt(q.get("waitTimeout"), "waitTimeout", safe)
                : Math.max(1, socketTimeout / 2);
        if (q.containsKey("waitTimeout") && waitReplicas == 0) {
            throw new IllegalArgumentException("Redis URI parameter waitTimeout needs waitReplicas >= 1: " + safe);
        }
        if (waitTimeout >= socketTimeout) {
            throw new IllegalArgumentException("Redis URI parameter waitTimeout (" + waitTimeout + " ms) must be below"
                    + " timeout (" + socketTimeout + " ms), which bounds the reply to WAIT too: " + safe);
        }
        return new Parsed(new HostAndPort(host, port), config, prefix, maxLen, poolSize, idleCheck, waitReplicas,
                waitTimeout);
    }

    private static int positiveInt(String v, String name, String safe) {
        return intParam(v, name, 1, "a positive integer", safe);
    }

    private static int intParam(String v, String name, int min, String what, String safe) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Redis URI parameter " + name + " must be " + what + ", was '" + v
                    + "': " + safe);
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}

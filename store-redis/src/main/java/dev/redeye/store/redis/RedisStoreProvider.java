package dev.redeye.store.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.redeye.api.Store;
import dev.redeye.api.StoreException;
import dev.redeye.api.StoreProvider;
import dev.redeye.api.StoreUris;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Opens a {@link RedisStore} for {@code redis://} and {@code rediss://} (TLS) URIs, found by
 * {@code Stores.open(uri)} through {@link java.util.ServiceLoader}:
 *
 * <pre>
 * redis://[[user]:password@]host[:port][/database][?prefix=myapp:&amp;timeout=2000&amp;poolSize=16]
 * rediss://...   same, over TLS (the JVM's default trust store)
 * </pre>
 *
 * <ul>
 * <li>user-info {@code user:password}, {@code :password} or a bare {@code password}; percent-encode
 * reserved characters. The password is never logged, printed or put in an exception message.</li>
 * <li>{@code port} defaults to 6379, {@code database} to 0.</li>
 * <li>{@code prefix}: key prefix (default empty); {@code timeout}: connect and socket timeout in ms
 * (default 2000); {@code poolSize}: maximum connections of the store's pool (default 16; the feed uses one
 * more, outside the pool); {@code feedMaxLength}: approximate length cap of the feed stream (default 10000).
 * Any other parameter is rejected, so a typo does not pass silently.</li>
 * </ul>
 *
 * <p>The store gets its own {@link JedisPooled} (closed with the store) and opens its dedicated feed
 * connection with the same address and credentials. {@link #open(String)} pings the server once, so an
 * unreachable server fails at once with {@link StoreException}.
 */
public final class RedisStoreProvider implements StoreProvider {
    private static final Set<String> PARAMS = Set.of("prefix", "timeout", "poolSize", "feedMaxLength");

    /** Used by {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {
    }

    /** {@code redis} and {@code rediss}. */
    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    /**
     * Opens a store for the URI (see the class Javadoc for its form).
     *
     * @throws IllegalArgumentException if the URI is malformed (the message carries the redacted URI)
     * @throws StoreException           if the server cannot be reached or rejects the credentials
     */
    @Override
    public Store open(String uri) {
        return openRedis(uri);
    }

    /** {@link #open(String)} with the concrete type; see {@link RedisStore#open(String)}. */
    static RedisStore openRedis(String uri) {
        Parsed p = parse(uri);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(p.poolSize);
        pool.setMaxIdle(p.poolSize);
        JedisPooled client = new JedisPooled(p.address, p.config, pool);
        try {
            client.ping();
        } catch (JedisException e) {
            client.close();
            throw new StoreException("cannot reach Redis at " + StoreUris.redact(uri) + ": " + e.getMessage(), e);
        }
        RedisStore.Builder b = RedisStore.builder(client)
                .prefix(p.prefix)
                .closeClient(true)
                .feedConnection(p.address, p.config);
        if (p.feedMaxLength > 0) {
            b.feedMaxLength(p.feedMaxLength);
        }
        return b.build();
    }

    /** A parsed URI: where to connect, how, and the store options. */
    static final class Parsed {
        final HostAndPort address;
        final JedisClientConfig config;
        final String prefix;
        final long feedMaxLength;
        final int poolSize;

        Parsed(HostAndPort address, JedisClientConfig config, String prefix, long feedMaxLength, int poolSize) {
            this.address = address;
            this.config = config;
            this.prefix = prefix;
            this.feedMaxLength = feedMaxLength;
            this.poolSize = poolSize;
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

        DefaultJedisClientConfig.Builder cfg = DefaultJedisClientConfig.builder().ssl(scheme.equals("rediss"));
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
                        + " poolSize, feedMaxLength): " + safe);
            }
        }
        if (q.containsKey("timeout")) {
            int t = positiveInt(q.get("timeout"), "timeout", safe);
            cfg.timeoutMillis(t);
        }
        long maxLen = q.containsKey("feedMaxLength") ? positiveInt(q.get("feedMaxLength"), "feedMaxLength", safe) : 0;
        int poolSize = q.containsKey("poolSize") ? positiveInt(q.get("poolSize"), "poolSize", safe) : 16;
        String prefix = q.getOrDefault("prefix", "");
        return new Parsed(new HostAndPort(host, port), cfg.build(), prefix, maxLen, poolSize);
    }

    private static int positiveInt(String v, String name, String safe) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Redis URI parameter " + name + " must be a positive integer, was '"
                    + v + "': " + safe);
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "RedisStoreProvider" + schemes().toString().toLowerCase(Locale.ROOT);
    }
}

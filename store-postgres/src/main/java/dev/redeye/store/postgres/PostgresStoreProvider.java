package dev.redeye.store.postgres;

import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.spi.support.UriStoreProvider;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.postgresql.Driver;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a {@link PostgresStore} from a URI, for {@code Stores.open(uri)} (registered through
 * {@code META-INF/services/dev.redeye.spi.StoreProvider}).
 *
 * <p>Accepted forms:
 * <ul>
 * <li>{@code postgresql://[user[:password]@]host[:port][/database][?param=value&...]} (also
 * {@code postgres://}); user and password are percent-decoded; the database defaults to the driver's
 * default (the user name);</li>
 * <li>{@code jdbc:postgresql://host[:port]/database?user=...&password=...&...}, any URL the PostgreSQL JDBC
 * driver accepts.</li>
 * </ul>
 * The store's own parameters are:
 * <ul>
 * <li>{@code schema} (default {@code public}) and {@code table} (default {@code redeye_breakers}), plain SQL
 * identifiers;</li>
 * <li>{@code createSchema}: {@code true} (default) creates missing tables, columns and indexes on open;
 * {@code false} only checks them and fails naming the DDL to run (see {@link PostgresStore.Builder#createSchema});</li>
 * <li>{@code poolSize}: the most connections the store's pool opens, feed included (default 8, at least
 * 2);</li>
 * <li>{@code poolTimeoutMillis}: how long a call waits for a free or new connection before it fails with
 * {@link StoreException} (default 1000, at least 250);</li>
 * <li>{@code lockTimeoutMillis} (default 1000), {@code statementTimeoutMillis} (1500) and
 * {@code idleInTransactionTimeoutMillis} (2000): the server-side bounds of
 * {@link PostgresStore.Builder#lockTimeout}, {@link PostgresStore.Builder#statementTimeout} and
 * {@link PostgresStore.Builder#idleInTransactionTimeout}, 0 for none;</li>
 * <li>{@code timeoutsPerTransaction}: {@code false} (default) sets those bounds once per connection, when
 * the pool opens it; {@code true} sets them in every transaction instead (needed behind PgBouncer in
 * transaction mode, where a session setting does not stay with the client);</li>
 * <li>{@code purgeIntervalMillis}: how often the clean-up thread runs (default 60000; 0 for none, at least
 * 100 otherwise);</li>
 * <li>{@code synchronousCounts}: {@code false} (default) commits writes that are not transitions (failure
 * counts below the threshold, quiet clears) without waiting for the WAL flush; {@code true} makes them wait
 * (see {@link PostgresStore.Builder#synchronousCounts});</li>
 * <li>{@code feed}: {@code listen} (default) reads the transition feed with {@code LISTEN}; {@code poll} polls
 * the events table instead, every {@code pollIntervalMillis} (default 250, 10 to 60000), for PgBouncer in
 * transaction mode (see {@link PostgresStore.Builder#pollFeed}).</li>
 * </ul>
 * Every other parameter goes to the driver unchanged (for example {@code sslmode}, {@code sslrootcert},
 * {@code ApplicationName} (default {@code redeye})). Unless the URI sets them, the driver gets
 * {@code socketTimeout=2} (seconds: the longest wait for any reply, so a server that vanished without closing
 * the connection fails a call in 2 s instead of hanging it until TCP gives up; the longer of
 * {@code statementTimeoutMillis} and {@code lockTimeoutMillis} plus half a second, rounded up to seconds, when
 * that is longer), {@code connectTimeout=2}
 * (seconds, for the TCP connect), {@code loginTimeout=2} (seconds, for opening a connection as a whole) and
 * {@code tcpKeepAlive=true}.
 *
 * <p>The store opened here owns a small HikariCP pool over the driver's {@link PGSimpleDataSource} (one
 * connection of it is the feed's while anyone subscribes) and closes it in {@code close()}, so no
 * connection or pool thread outlives the store. The pool validates a connection idle for more than half a
 * second before lending it (in at most one second); when a call finds its connection closed by the server (a
 * restart, {@code pg_terminate_backend}) it evicts its idle connections, which are likely closed too, before
 * the call's one retry; and while it holds no connection at all (after an outage) a call opens its own, so the
 * first call after the server is back works (see {@code StorePool}). To share your application's pool, or to configure
 * TLS and credentials beyond a URI, build the store with
 * {@link PostgresStore#builder(javax.sql.DataSource)} instead. Passwords never appear in a message or log
 * line ({@link StoreUris#redact(String)}).
 */
public final class PostgresStoreProvider extends UriStoreProvider<PostgresStore> {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresStoreProvider.class);
    private static final Set<String> SCHEMES = Set.of("postgresql", "postgres", "jdbc:postgresql");
    private static final Set<String> STORE_PARAMS = Set.of("schema", "table", "createschema", "poolsize",
            "pooltimeoutmillis", "locktimeoutmillis", "statementtimeoutmillis", "idleintransactiontimeoutmillis",
            "timeoutspertransaction", "purgeintervalmillis", "synchronouscounts", "feed", "pollintervalmillis");
    /** The driver's {@code socketTimeout} (seconds) unless the URI sets one or the store's bounds need more. */
    static final int DEFAULT_SOCKET_TIMEOUT_SECONDS = 2;
    /** What the socketTimeout leaves above the server's own bounds for its answer to a cancelled statement. */
    static final long STATEMENT_REPLY_MARGIN_MILLIS = 500;
    /** The driver's {@code connectTimeout} (seconds) unless the URI sets one. */
    static final int DEFAULT_CONNECT_TIMEOUT_SECONDS = 2;
    /** How long a call waits for a pooled connection unless the URI sets {@code poolTimeoutMillis}. */
    static final long DEFAULT_POOL_TIMEOUT_MILLIS = 1_000;
    /** HikariCP's bound on validating an idle connection before lending it (the driver rounds up to 1 s). */
    static final long VALIDATION_TIMEOUT_MILLIS = 1_000;
    /** The {@code application_name} of the store's connections unless the URI sets {@code ApplicationName}. */
    static final String DEFAULT_APPLICATION_NAME = "redeye";

    /** A provider; stateless. */
    public PostgresStoreProvider() {
        super(PostgresStore.class, SCHEMES, PostgresStoreProvider::parse, PostgresStoreProvider::openStore);
    }

    /**
     * The store of a parsed URI, over its own pool; see {@link PostgresStore#open(String)}.
     *
     * @throws StoreException if the database cannot be reached or the tables cannot be created
     */
    private static PostgresStore openStore(Parsed p, String uri) {
        PGSimpleDataSource ds = driverDataSource(p);
        StorePool pool = new StorePool(ds, p.poolSize, p.poolTimeoutMillis, VALIDATION_TIMEOUT_MILLIS,
                // The server-side bounds once per connection: no statement per call (the pool is the store's own).
                p.timeouts.perTransaction ? null : p.timeouts.sessionSql());
        try {
            PostgresStore.Builder builder = PostgresStore.builder(pool);
            if (p.pollFeedMillis > 0) {
                builder.pollFeed(Duration.ofMillis(p.pollFeedMillis));
            }
            PostgresStore store = builder.schema(p.schema).table(p.table)
                    .createSchema(p.createSchema)
                    .lockTimeout(Duration.ofMillis(p.timeouts.lockMillis))
                    .statementTimeout(Duration.ofMillis(p.timeouts.statementMillis))
                    .idleInTransactionTimeout(Duration.ofMillis(p.timeouts.idleInTransactionMillis))
                    .timeoutsPerTransaction(p.timeouts.perTransaction)
                    .purgeInterval(Duration.ofMillis(p.purgeIntervalMillis))
                    .synchronousCounts(p.synchronousCounts)
                    .onBrokenConnection(pool::evictAll)
                    .closeWithStore(pool).build();
            LOG.debug("opened {} from {}", store, safe(uri));
            return store;
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /**
     * The driver's data source of a parsed URI: its URL and credentials, {@code ApplicationName} and the
     * client-side bounds the URI does not set itself.
     */
    static PGSimpleDataSource driverDataSource(Parsed p) {
        PGSimpleDataSource ds = plainDataSource(p);
        if (!p.hasApplicationName) {
            ds.setApplicationName(DEFAULT_APPLICATION_NAME); // visible in pg_stat_activity
        }
        // Client-side bounds, unless the URI chose its own: a vanished server fails a call, never hangs it.
        if (!p.driverParams.contains("socketTimeout")) {
            ds.setSocketTimeout(socketTimeoutSeconds(p.timeouts));
        }
        if (!p.driverParams.contains("connectTimeout")) {
            ds.setConnectTimeout(DEFAULT_CONNECT_TIMEOUT_SECONDS);
        }
        if (!p.driverParams.contains("tcpKeepAlive")) {
            ds.setTcpKeepAlive(true);
        }
        if (!p.driverParams.contains("loginTimeout")) {
            // bounds a connection opened around the pool (see StorePool) as a whole, TLS and login included
            ds.setLoginTimeout(DEFAULT_SOCKET_TIMEOUT_SECONDS);
        }
        return ds;
    }

    /**
     * The driver's {@code socketTimeout} when the URI sets none: {@link #DEFAULT_SOCKET_TIMEOUT_SECONDS}, or the
     * longer of statementTimeout and lockTimeout (statementTimeout 0 is none) plus half a second, rounded up to
     * whole seconds, when that is longer (the defaults, 1.5 s and 1 s, keep 2 s), so the driver never gives up on
     * a connection whose statement the server is still bounding (a wait for a held row then ends by its
     * lock_timeout, not as a lost connection that the pool has to replace).
     */
    static int socketTimeoutSeconds(Timeouts timeouts) {
        long bound = Math.max(timeouts.statementMillis, timeouts.lockMillis);
        long seconds = (bound + STATEMENT_REPLY_MARGIN_MILLIS + 999) / 1_000;
        return (int) Math.min(Integer.MAX_VALUE, Math.max(DEFAULT_SOCKET_TIMEOUT_SECONDS, seconds));
    }

    /** The driver's data source of a parsed URI with its URL and credentials only, the driver's defaults else. */
    static PGSimpleDataSource plainDataSource(Parsed p) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(p.jdbcUrl);
        if (p.user != null) {
            ds.setUser(p.user);
        }
        if (p.password != null) {
            ds.setPassword(p.password);
        }
        return ds;
    }

    /** A URI taken apart: the JDBC URL without credentials or store parameters, and the rest. */
    static final class Parsed {
        final String jdbcUrl;
        final String user;
        final String password;
        final String schema;
        final String table;
        final boolean createSchema;
        final int poolSize;
        final long poolTimeoutMillis;
        final boolean hasApplicationName;
        final Timeouts timeouts;
        final long purgeIntervalMillis;
        final boolean synchronousCounts;
        /** 0 for a LISTEN feed, else the polled feed's interval. */
        final long pollFeedMillis;
        /** The names of the parameters the URL passes to the driver (as the driver spells them). */
        final Set<String> driverParams;

        private Parsed(String jdbcUrl, String user, String password, Map<String, String> storeParams,
                       Properties driver, String uri) {
            this.jdbcUrl = jdbcUrl;
            this.user = user;
            this.password = password;
            this.schema = storeParams.getOrDefault("schema", "public");
            this.table = storeParams.getOrDefault("table", "redeye_breakers");
            TableNames.validate("schema", schema, TableNames.MAX_IDENTIFIER);
            TableNames.validate("table", table, TableNames.MAX_TABLE);
            this.createSchema = parseBoolean("createSchema", storeParams.getOrDefault("createschema", "true"), uri);
            this.poolSize = (int) parseLong("poolSize", storeParams.getOrDefault("poolsize", "8"), 2, 1000, uri);
            this.poolTimeoutMillis = parseLong("poolTimeoutMillis", storeParams.getOrDefault("pooltimeoutmillis",
                    String.valueOf(DEFAULT_POOL_TIMEOUT_MILLIS)), 250, Integer.MAX_VALUE, uri);
            this.timeouts = new Timeouts(
                    parseLong("lockTimeoutMillis", storeParams.getOrDefault("locktimeoutmillis",
                            String.valueOf(Timeouts.DEFAULT_LOCK_MILLIS)), 0, Timeouts.MAX_MILLIS, uri),
                    parseLong("statementTimeoutMillis", storeParams.getOrDefault("statementtimeoutmillis",
                            String.valueOf(Timeouts.DEFAULT_STATEMENT_MILLIS)), 0, Timeouts.MAX_MILLIS, uri),
                    parseLong("idleInTransactionTimeoutMillis", storeParams.getOrDefault(
                            "idleintransactiontimeoutmillis", String.valueOf(Timeouts.DEFAULT_IDLE_IN_TRANSACTION_MILLIS)),
                            0, Timeouts.MAX_MILLIS, uri),
                    parseBoolean("timeoutsPerTransaction", storeParams.getOrDefault("timeoutspertransaction", "false"),
                            uri));
            long purge = parseLong("purgeIntervalMillis", storeParams.getOrDefault("purgeintervalmillis",
                    String.valueOf(PostgresStore.DEFAULT_PURGE_INTERVAL.toMillis())), 0, Long.MAX_VALUE / 4, uri);
            if (purge > 0 && purge < 100) {
                throw new IllegalArgumentException("purgeIntervalMillis must be 0 (off) or at least 100, was "
                        + purge + " in " + safe(uri));
            }
            this.purgeIntervalMillis = purge;
            this.synchronousCounts = parseBoolean("synchronousCounts",
                    storeParams.getOrDefault("synchronouscounts", "false"), uri);
            String feed = storeParams.getOrDefault("feed", "listen").toLowerCase(Locale.ROOT);
            if (!feed.equals("listen") && !feed.equals("poll")) {
                throw new IllegalArgumentException("feed must be listen or poll, was '" + feed + "' in " + safe(uri));
            }
            long poll = parseLong("pollIntervalMillis", storeParams.getOrDefault("pollintervalmillis",
                    String.valueOf(PostgresStore.DEFAULT_POLL_MILLIS)), PostgresStore.MIN_POLL_MILLIS,
                    PostgresStore.MAX_POLL_MILLIS, uri);
            if (feed.equals("listen") && storeParams.containsKey("pollintervalmillis")) {
                throw new IllegalArgumentException("pollIntervalMillis is the interval of a polled feed: it needs "
                        + "feed=poll, in " + safe(uri));
            }
            this.pollFeedMillis = feed.equals("poll") ? poll : 0;
            this.hasApplicationName = driver.getProperty("ApplicationName") != null;
            this.driverParams = driver.stringPropertyNames();
        }
    }

    /**
     * Parses a store URI.
     *
     * @throws IllegalArgumentException if it is malformed; the message is redacted
     */
    static Parsed parse(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("PostgreSQL store URI must not be null");
        }
        String scheme = StoreUris.scheme(uri);
        if (!SCHEMES.contains(scheme)) {
            throw new IllegalArgumentException("not a PostgreSQL store URI (expected postgresql:// or "
                    + "jdbc:postgresql://): " + safe(uri));
        }
        String rest = uri.substring(scheme.length() + 1);
        int q = rest.indexOf('?');
        String base = q < 0 ? rest : rest.substring(0, q);
        String query = q < 0 ? "" : rest.substring(q + 1);
        int hash = query.indexOf('#');
        if (hash >= 0) {
            query = query.substring(0, hash);
        }
        Map<String, String> storeParams = new LinkedHashMap<>();
        StringBuilder driverQuery = new StringBuilder();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = decode(eq < 0 ? pair : pair.substring(0, eq), uri);
            if (STORE_PARAMS.contains(k.toLowerCase(Locale.ROOT))) {
                storeParams.put(k.toLowerCase(Locale.ROOT), decode(eq < 0 ? "" : pair.substring(eq + 1), uri));
            } else {
                driverQuery.append(driverQuery.length() == 0 ? "?" : "&").append(pair);
            }
        }
        String user = null;
        String password = null;
        String jdbcUrl;
        if (scheme.equals("jdbc:postgresql")) {
            jdbcUrl = "jdbc:postgresql:" + base + driverQuery;
        } else {
            if (!base.startsWith("//")) {
                throw new IllegalArgumentException("expected " + scheme + "://host..., got: " + safe(uri));
            }
            String authority = base.substring(2);
            int slash = authority.indexOf('/');
            String database = slash < 0 ? "" : authority.substring(slash + 1);
            authority = slash < 0 ? authority : authority.substring(0, slash);
            int at = authority.lastIndexOf('@');
            if (at >= 0) {
                String info = authority.substring(0, at);
                authority = authority.substring(at + 1);
                int colon = info.indexOf(':');
                user = decode(colon < 0 ? info : info.substring(0, colon), uri);
                password = colon < 0 ? null : decode(info.substring(colon + 1), uri);
                if (user.isEmpty()) {
                    user = null;
                }
            }
            if (authority.isEmpty()) {
                throw new IllegalArgumentException("no host in PostgreSQL store URI: " + safe(uri));
            }
            jdbcUrl = "jdbc:postgresql://" + authority + "/"
                    + URLEncoder.encode(decode(database, uri), StandardCharsets.UTF_8).replace("+", "%20")
                    + driverQuery;
        }
        Properties parsed = Driver.parseURL(jdbcUrl, null);
        if (parsed == null) {
            throw new IllegalArgumentException("the PostgreSQL driver rejects this URI: " + safe(uri));
        }
        return new Parsed(jdbcUrl, user, password, storeParams, parsed, uri);
    }

    /**
     * The URI safe to show: {@link StoreUris#redact(String)}, and, for a malformed URI whose user info it
     * cannot find (no {@code //}), everything between the scheme and the last {@code @} masked.
     */
    static String safe(String uri) {
        String r = StoreUris.redact(uri);
        int at = r.lastIndexOf('@');
        if (at < 0 || r.contains("***@")) {
            return r;
        }
        int colon = r.indexOf(':');
        if (r.regionMatches(true, 0, "jdbc:", 0, 5)) {
            colon = r.indexOf(':', 5);
        }
        return colon < 0 || colon >= at ? "***" + r.substring(at) : r.substring(0, colon + 1) + "***" + r.substring(at);
    }

    private static String decode(String s, String uri) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad percent-encoding in PostgreSQL store URI: "
                    + safe(uri));
        }
    }

    private static long parseLong(String name, String v, long min, long max, String uri) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, was '" + v + "' in "
                    + safe(uri));
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + n
                    + " in " + safe(uri));
        }
        return n;
    }

    private static boolean parseBoolean(String name, String v, String uri) {
        if (v.equalsIgnoreCase("true") || v.equals("1") || v.isEmpty()) {
            return true;
        }
        if (v.equalsIgnoreCase("false") || v.equals("0")) {
            return false;
        }
        throw new IllegalArgumentException(name + " must be true or false, was '" + v + "' in "
                + safe(uri));
    }
}

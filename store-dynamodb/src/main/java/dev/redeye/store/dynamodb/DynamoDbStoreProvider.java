package dev.redeye.store.dynamodb;

import dev.redeye.api.StoreException;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.spi.support.UriStoreProvider;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.AwsProfileRegionProvider;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.regions.providers.SystemSettingsRegionProvider;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Opens a {@link DynamoDbStore} for {@code dynamodb://} URIs, found by {@code Stores.open(uri)} through
 * {@link java.util.ServiceLoader}:
 *
 * <pre>
 * dynamodb://[accessKeyId:secretAccessKey@]TABLE[?region=eu-west-1&amp;endpoint=http://127.0.0.1:8000&amp;createTable=true]
 * </pre>
 *
 * <ul>
 * <li>credentials: the user-info part (percent-encode reserved characters), else the SDK's default chain
 * (environment, system properties, profile, container and instance roles). A secret is never logged,
 * printed or put in a message.</li>
 * <li>{@code region}: else the SDK's default region chain; with an {@code endpoint}, the region of the
 * environment or the profile, else {@code us-east-1} (local servers ignore it).</li>
 * <li>{@code endpoint}: another endpoint (dynalite, a VPC endpoint).</li>
 * <li>{@code createTable}: {@code true} creates a missing table (on-demand billing); default {@code false}.</li>
 * <li>{@code feedPollMillis} (default 500), {@code feedRingSize} (default 32), {@code feedShards} (default 16, 1 to
 * 256, the same on every instance), {@code legacyFeedHead} (default {@code true}), {@code maxAttempts} (default
 * 100): see {@link DynamoDbStore.Builder}.</li>
 * <li>{@code attemptTimeoutMillis} (default 250), {@code callTimeoutMillis} (default 1000), {@code sdkAttempts}
 * (default 3): the client's timeouts and attempts, below.</li>
 * <li>{@code callDeadlineMillis} (default 2000): the longest one store call may take, all its requests
 * included; see {@link DynamoDbStore.Builder#callDeadline}.</li>
 * <li>{@code allowGlobalTable}: {@code true} accepts a Global Table with eventually consistent replicas; default
 * {@code false}, see {@link DynamoDbStore.Builder#allowGlobalTable}.</li>
 * </ul>
 * Any other parameter is rejected, so that a typo does not pass silently.
 *
 * <p>The client built here is sized for a breaker, whose callers wait on it: the url-connection HTTP
 * client (connect timeout 500 ms), each attempt at most 250 ms, the whole call (retries included) at most
 * 1 s, 3 attempts with backoffs of 10 to 100 ms (throttling 50 to 250 ms) instead of the SDK's defaults,
 * which back off for seconds. The store owns it and closes it in {@code close()}.
 */
public final class DynamoDbStoreProvider extends UriStoreProvider<DynamoDbStore> {
    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbStoreProvider.class);
    private static final Set<String> PARAMS = Set.of("region", "endpoint", "createTable", "feedPollMillis",
            "feedRingSize", "maxAttempts", "attemptTimeoutMillis", "callTimeoutMillis", "sdkAttempts",
            "callDeadlineMillis", "allowGlobalTable", "feedShards", "legacyFeedHead");

    /** Used by {@link java.util.ServiceLoader}. */
    public DynamoDbStoreProvider() {
        super(DynamoDbStore.class, Set.of("dynamodb"), DynamoDbStoreProvider::parse, DynamoDbStoreProvider::openStore);
    }

    /**
     * The store of a parsed URI, over its own client; it checks (or creates) its table; see
     * {@link DynamoDbStore#open(String)}.
     *
     * @throws StoreException if the table is missing and not to be created, or DynamoDB fails
     */
    private static DynamoDbStore openStore(Parsed p, String uri) {
        DynamoDbClient client = p.client();
        try {
            DynamoDbStore.Builder b = DynamoDbStore.builder(client).table(p.table).createTable(p.createTable)
                    .allowGlobalTable(p.allowGlobalTable).callDeadline(Duration.ofMillis(p.callDeadlineMillis))
                    .closeWithStore(client);
            if (p.feedPollMillis > 0) {
                b.feedPollInterval(Duration.ofMillis(p.feedPollMillis));
            }
            if (p.feedRingSize > 0) {
                b.feedRingSize(p.feedRingSize);
            }
            b.feedShards(p.feedShards).legacyFeedHead(p.legacyFeedHead);
            if (p.maxAttempts > 0) {
                b.maxAttempts(p.maxAttempts);
            }
            DynamoDbStore store = b.build();
            LOG.debug("opened {} from {}", store, StoreUris.redact(uri));
            return store;
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /** A parsed URI. */
    static final class Parsed {
        String table;
        String accessKeyId;
        String secretAccessKey;
        String region;
        URI endpoint;
        boolean createTable;
        boolean allowGlobalTable;
        long callDeadlineMillis = DynamoDbStore.DEFAULT_CALL_DEADLINE.toMillis();
        long feedPollMillis;
        int feedRingSize;
        int feedShards = Feed.DEFAULT_SHARDS;
        boolean legacyFeedHead = true;
        int maxAttempts;
        long attemptTimeoutMillis = 250;
        long callTimeoutMillis = 1000;
        int sdkAttempts = 3;
        String safe;

        /** The client these settings describe; the caller closes it. */
        DynamoDbClient client() {
            AwsCredentialsProvider credentials = accessKeyId != null
                    ? StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, secretAccessKey))
                    : DefaultCredentialsProvider.builder().build();
            var builder = DynamoDbClient.builder()
                    .region(Region.of(resolveRegion()))
                    .credentialsProvider(credentials)
                    .httpClientBuilder(UrlConnectionHttpClient.builder()
                            .connectionTimeout(Duration.ofMillis(Math.min(500, callTimeoutMillis)))
                            .socketTimeout(Duration.ofMillis(callTimeoutMillis)))
                    .overrideConfiguration(o -> o
                            .apiCallAttemptTimeout(Duration.ofMillis(attemptTimeoutMillis))
                            .apiCallTimeout(Duration.ofMillis(callTimeoutMillis))
                            .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                                    .maxAttempts(sdkAttempts)
                                    .backoffStrategy(BackoffStrategy.exponentialDelay(Duration.ofMillis(10),
                                            Duration.ofMillis(100)))
                                    .throttlingBackoffStrategy(BackoffStrategy.exponentialDelay(Duration.ofMillis(50),
                                            Duration.ofMillis(250)))
                                    .circuitBreakerEnabled(false)
                                    .build()));
            if (endpoint != null) {
                builder.endpointOverride(endpoint);
            }
            try {
                return builder.build();
            } catch (SdkException e) {
                throw new StoreException("cannot build a DynamoDB client for " + safe + ": " + e.getMessage(), e);
            }
        }

        private String resolveRegion() {
            if (region != null) {
                return region;
            }
            if (endpoint != null) {
                // An explicit endpoint: the region from the environment or the profile if there is one, never
                // from instance metadata (a local server ignores the region, but the SDK wants one to sign).
                try {
                    return new SystemSettingsRegionProvider().getRegion().id();
                } catch (SdkException e) {
                    try {
                        return new AwsProfileRegionProvider().getRegion().id();
                    } catch (SdkException e2) {
                        return "us-east-1";
                    }
                }
            }
            try {
                return new DefaultAwsRegionProviderChain().getRegion().id();
            } catch (SdkException e) {
                throw new IllegalArgumentException("no AWS region for " + safe + ": add ?region=... to the URI or set"
                        + " AWS_REGION");
            }
        }
    }

    /**
     * Parses a {@code dynamodb://} URI.
     *
     * @throws IllegalArgumentException naming the problem and the redacted URI
     */
    static Parsed parse(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("DynamoDB URI must not be null");
        }
        Parsed p = new Parsed();
        p.safe = StoreUris.redact(uri);
        if (!StoreUris.scheme(uri).equals("dynamodb")) {
            throw new IllegalArgumentException("not a dynamodb:// URI: " + p.safe);
        }
        URI u;
        try {
            u = new URI(uri);
        } catch (URISyntaxException e) {
            // The parser's own message quotes the input, secret included: never pass it on.
            throw new IllegalArgumentException("malformed DynamoDB URI " + p.safe + " (at index " + e.getIndex() + ")");
        }
        // The authority is TABLE or KEY:SECRET@TABLE; table names may hold '_', which java.net.URI does not
        // take for a host name, so the authority is split here.
        String authority = u.getRawAuthority();
        String info = null;
        String table = authority;
        if (authority != null && authority.lastIndexOf('@') >= 0) {
            info = authority.substring(0, authority.lastIndexOf('@'));
            table = authority.substring(authority.lastIndexOf('@') + 1);
        }
        if (table == null || table.isEmpty()) {
            throw new IllegalArgumentException("DynamoDB URI has no table: " + p.safe
                    + " (expected dynamodb://TABLE?region=...)");
        }
        if (u.getRawPath() != null && !u.getRawPath().isEmpty() && !u.getRawPath().equals("/")) {
            throw new IllegalArgumentException("DynamoDB URI has a path; the table is the host part: " + p.safe);
        }
        try {
            p.table = Tables.validate(table);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("DynamoDB URI: " + e.getMessage() + ": "
                    + p.safe);
        }
        if (info != null) {
            int colon = info.indexOf(':');
            if (colon <= 0 || colon == info.length() - 1) {
                throw new IllegalArgumentException("DynamoDB URI user info must be accessKeyId:secretAccessKey: "
                        + p.safe);
            }
            p.accessKeyId = decode(info.substring(0, colon));
            p.secretAccessKey = decode(info.substring(colon + 1));
        }
        Map<String, String> q = StoreUris.query(uri);
        for (String k : q.keySet()) {
            if (!PARAMS.contains(k)) {
                throw new IllegalArgumentException("unknown DynamoDB URI parameter '" + k + "' (known: "
                        + String.join(", ", PARAMS.stream().sorted().toList()) + "): " + p.safe);
            }
        }
        if (q.containsKey("region")) {
            p.region = q.get("region").trim();
            if (p.region.isEmpty()) {
                throw new IllegalArgumentException("DynamoDB URI parameter region is empty: " + p.safe);
            }
        }
        if (q.containsKey("endpoint")) {
            try {
                p.endpoint = new URI(q.get("endpoint").trim());
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("DynamoDB URI parameter endpoint is not a URI: " + p.safe);
            }
            String s = p.endpoint.getScheme();
            if (s == null || !(s.equalsIgnoreCase("http") || s.equalsIgnoreCase("https")) || p.endpoint.getHost() == null) {
                throw new IllegalArgumentException("DynamoDB URI parameter endpoint must be http://host:port or "
                        + "https://host:port: " + p.safe);
            }
        }
        p.createTable = bool(q, "createTable", p.safe);
        p.allowGlobalTable = bool(q, "allowGlobalTable", p.safe);
        p.callDeadlineMillis = positive(q, "callDeadlineMillis", p.callDeadlineMillis, p.safe);
        if (p.callDeadlineMillis < DynamoDbStore.MIN_CALL_DEADLINE.toMillis()
                || p.callDeadlineMillis > DynamoDbStore.MAX_CALL_DEADLINE.toMillis()) {
            throw new IllegalArgumentException("DynamoDB URI parameter callDeadlineMillis must be between "
                    + DynamoDbStore.MIN_CALL_DEADLINE.toMillis() + " and " + DynamoDbStore.MAX_CALL_DEADLINE.toMillis()
                    + ", was " + p.callDeadlineMillis + ": " + p.safe);
        }
        p.feedPollMillis = positive(q, "feedPollMillis", 0, p.safe);
        p.feedRingSize = (int) positive(q, "feedRingSize", 0, p.safe);
        p.maxAttempts = (int) positive(q, "maxAttempts", 0, p.safe);
        long shards = positive(q, "feedShards", p.feedShards, p.safe);
        if (shards > Feed.MAX_SHARDS) {
            throw new IllegalArgumentException("DynamoDB URI parameter feedShards must be between 1 and "
                    + Feed.MAX_SHARDS + " (every instance of a fleet the same), was " + shards + ": " + p.safe);
        }
        p.feedShards = (int) shards;
        p.legacyFeedHead = !q.containsKey("legacyFeedHead") || bool(q, "legacyFeedHead", p.safe);
        p.attemptTimeoutMillis = positive(q, "attemptTimeoutMillis", p.attemptTimeoutMillis, p.safe);
        p.callTimeoutMillis = positive(q, "callTimeoutMillis", p.callTimeoutMillis, p.safe);
        p.sdkAttempts = (int) positive(q, "sdkAttempts", p.sdkAttempts, p.safe);
        return p;
    }

    private static boolean bool(Map<String, String> q, String name, String safe) {
        String v = q.get(name);
        if (v == null) {
            return false;
        }
        String t = v.trim().toLowerCase(Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException("DynamoDB URI parameter " + name + " must be true or false, was '" + v
                    + "': " + safe);
        }
        return t.equals("true");
    }

    private static long positive(Map<String, String> q, String name, long absent, String safe) {
        String v = q.get(name);
        if (v == null) {
            return absent;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 1 || n > Integer.MAX_VALUE) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DynamoDB URI parameter " + name + " must be a positive integer, was '"
                    + v + "': " + safe);
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}

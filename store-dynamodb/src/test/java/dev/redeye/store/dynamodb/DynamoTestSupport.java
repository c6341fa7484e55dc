package dev.redeye.store.dynamodb;

import dev.redeye.testsupport.ServiceAddress;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import org.testcontainers.containers.wait.strategy.Wait;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * Where the tests find a DynamoDB endpoint ({@link #DYNAMODB}: {@code REDEYE_DYNAMODB_URL}, dynalite started by
 * {@code scripts/services.sh}; else dynalite in a Testcontainers container; else a failure saying how to
 * provide one) and the raw client they check it with. Every test class works in tables of its own (random
 * names) and deletes them.
 */
final class DynamoTestSupport {
    static final String ENV = "REDEYE_DYNAMODB_URL";
    static final ServiceAddress DYNAMODB = ServiceAddress.of(ENV, "node:20-alpine", 4567, "http://%s:%d",
            "for example '. scripts/services.sh', which installs dynalite with npm and starts it, or 'npx dynalite"
                    + " --port 4567 --createTableMs 0 --deleteTableMs 0 --updateTableMs 0' and export " + ENV
                    + "=http://127.0.0.1:4567.")
            .withContainer(c -> c.withCommand("npx", "-y", "dynalite@4.0.0", "--port", "4567", "--createTableMs",
                    "0", "--deleteTableMs", "0", "--updateTableMs", "0")
                    .waitingFor(Wait.forListeningPort().withStartupTimeout(Duration.ofMinutes(3))));

    private DynamoTestSupport() {
    }

    static String url() {
        return DYNAMODB.url();
    }

    /** A random table name for one test class. */
    static String newTable(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /**
     * The provider URI of a table on the test endpoint (dummy credentials: dynalite accepts any), with the
     * client's timeouts and the store's call deadline raised to {@value #TEST_TIMEOUTS}: dynalite is one Node.js
     * thread, and on a 2-core machine shared with builds, 32 racing callers queue for far longer than the 250 ms
     * per attempt and 2 s per call sized for DynamoDB itself. The defaults are proven by
     * {@code DynamoDbFaultTest}, on servers of its own.
     */
    static String uri(String table, String params) {
        return "dynamodb://test:test@" + table + "?region=us-east-1&" + TEST_TIMEOUTS + "&endpoint=" + url()
                + (params == null || params.isEmpty() ? "" : "&" + params);
    }

    static final String TEST_TIMEOUTS = "attemptTimeoutMillis=2000&callTimeoutMillis=5000&callDeadlineMillis=60000";

    /** The call deadline of {@link #TEST_TIMEOUTS}, for stores built over {@link #rawClient()}. */
    static final Duration TEST_DEADLINE = Duration.ofSeconds(60);

    /** A plain client of the test endpoint with the provider's short timeouts; the caller closes it. */
    static DynamoDbClient rawClient() {
        return rawClient(url());
    }

    static DynamoDbClient rawClient(String endpoint) {
        return DynamoDbClient.builder().endpointOverride(URI.create(endpoint)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofSeconds(5)))
                .build();
    }

    /** Deletes a table this test created; quiet when it is gone. */
    static void deleteTable(String table) {
        try (DynamoDbClient c = rawClient()) {
            c.deleteTable(r -> r.tableName(table));
        } catch (ResourceNotFoundException e) {
            // already gone
        }
    }
}

package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.util.Arrays;
import java.util.UUID;
import picocli.CommandLine;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/** Runs the real entry point in-process and captures what it prints. */
final class Cli {
    /** What one command printed and returned. */
    record Run(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout ---\n" + out + "\n--- stderr ---\n" + err;
        }
    }

    private Cli() {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = RedeyeCommand.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    static String[] args(String... a) {
        return Arrays.copyOf(a, a.length);
    }

    /** REDEYE_REDIS_URL, or the local default that scripts/services.sh also uses. */
    static String redisUri() {
        String env = System.getenv("REDEYE_REDIS_URL");
        return env == null || env.isBlank() ? "redis://127.0.0.1:6379" : env;
    }

    /** REDEYE_POSTGRES_URL, or the local default that scripts/services.sh also uses. */
    static String postgresUri() {
        String env = System.getenv("REDEYE_POSTGRES_URL");
        return env == null || env.isBlank() ? "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" : env;
    }

    /**
     * A {@code dynamodb://} URI of {@code table} on REDEYE_DYNAMODB_URL (dynalite, started by scripts/services.sh),
     * with dummy credentials, table creation on, timeouts and the call deadline raised for a one-thread server on
     * a busy machine (the store's defaults are sized for DynamoDB itself), and feed polls 100 ms apart (the TCK's
     * subscription warm-up wants subscribers of two clients to see a transition within 200 ms; see
     * DynamoDbStoreTckTest);
     * null when the variable is unset.
     */
    static String dynamodbUri(String table) {
        String env = System.getenv("REDEYE_DYNAMODB_URL");
        if (env == null || env.isBlank()) {
            return null;
        }
        return "dynamodb://cli:s3cretkey@" + table + "?region=us-east-1&createTable=true"
                + "&attemptTimeoutMillis=2000&callTimeoutMillis=5000&callDeadlineMillis=60000&feedPollMillis=100"
                + "&endpoint=" + env.trim();
    }

    /** Deletes {@code table} from REDEYE_DYNAMODB_URL, if the variable is set and the table exists. */
    static void dropDynamoDbTable(String table) {
        String env = System.getenv("REDEYE_DYNAMODB_URL");
        if (env == null) {
            return;
        }
        try (DynamoDbClient c = DynamoDbClient.builder().endpointOverride(URI.create(env.trim()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("cli", "x")))
                .build()) {
            c.deleteTable(r -> r.tableName(table));
        } catch (ResourceNotFoundException e) {
            // never created
        }
    }

    /** Fails, saying how to start Redis and PostgreSQL, unless the store behind the URI answers a read. */
    static void assertReachable(String uri) {
        assertTrue(reachable(uri), () -> "store not reachable: " + StoreUris.redact(uri)
                + " (run scripts/test.sh, which starts Redis and PostgreSQL, or set REDEYE_REDIS_URL / REDEYE_POSTGRES_URL)");
    }

    /** Whether the store behind the URI answers a read (tests against it fail with how to provide it otherwise). */
    static boolean reachable(String uri) {
        try (Store s = Stores.open(uri)) {
            s.get("redeye-cli-test-probe");
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A fresh operation name with characters a naive store or printer would mangle. */
    static String uniqueOperation() {
        return "cli test {" + UUID.randomUUID().toString().substring(0, 8) + "}:'op'";
    }
}

package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.tck.TcpRelay;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * The first requests of a new store are slower than its per-call budget: a cold client loads and initialises
 * much of the SDK in its first call (650-1,300 ms measured on a loaded 2-core machine, against a 1 s call
 * timeout), and an endpoint may be slow to answer a new client. Opening must not fail for it. Here a relay in
 * front of dynalite holds every answer until 1.2 s after the client's first byte, with the provider's
 * default timeouts (1 s per call, 250 ms per attempt).
 */
class DynamoDbSlowStartTest {
    private static final long HOLD_MILLIS = 1_200;
    private static final String TABLE = DynamoTestSupport.newTable("slowstart");

    @BeforeAll
    static void createTable() {
        try (DynamoDbClient c = DynamoTestSupport.rawClient()) {
            c.createTable(r -> r.tableName(TABLE).billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(a -> a.attributeName(Items.PK).attributeType(ScalarAttributeType.S))
                    .keySchema(k -> k.attributeName(Items.PK).keyType(KeyType.HASH)));
        }
    }

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    @Test
    void aSlowFirstAnswerDoesNotFailTheOpen() throws Exception {
        URI endpoint = URI.create(DynamoTestSupport.url());
        AtomicLong firstByte = new AtomicLong();
        try (TcpRelay relay = new TcpRelay(endpoint.getHost(), endpoint.getPort(), (connection, fromClient, bytes) -> {
            if (fromClient) {
                firstByte.compareAndSet(0, System.nanoTime());
                return;
            }
            long wait = firstByte.get() + TimeUnit.MILLISECONDS.toNanos(HOLD_MILLIS) - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
        })) {
            String uri = "dynamodb://test:test@" + TABLE + "?region=us-east-1&endpoint=http://127.0.0.1:" + relay.port();
            long start = System.nanoTime();
            try (DynamoDbStore store = DynamoDbStore.open(uri)) {
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(millis >= HOLD_MILLIS, "the relay held the first answer (" + millis + " ms)");
                assertTrue(store.get("op").isEmpty(), "the opened store works");
            }
        }
    }
}

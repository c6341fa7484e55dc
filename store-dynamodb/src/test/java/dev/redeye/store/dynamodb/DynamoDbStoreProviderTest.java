package dev.redeye.store.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.Stores;
import dev.redeye.spi.Store;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** URI parsing, validation, redaction and discovery of {@link DynamoDbStoreProvider}. */
class DynamoDbStoreProviderTest {
    private static final String TABLE = DynamoTestSupport.newTable("redeye_provider");

    @AfterAll
    static void dropTable() {
        DynamoTestSupport.deleteTable(TABLE);
    }

    @Test
    void parsesTableCredentialsAndParameters() {
        DynamoDbStoreProvider.Parsed p = DynamoDbStoreProvider.parse("dynamodb://AKIDX:se%2Fcr%40et@my_table.v2?"
                + "region=eu-west-1&endpoint=http://127.0.0.1:4567&createTable=true&feedPollMillis=200&feedRingSize=8"
                + "&maxAttempts=20&attemptTimeoutMillis=300&callTimeoutMillis=900&sdkAttempts=2&callDeadlineMillis=1500"
                + "&allowGlobalTable=true");
        assertEquals("my_table.v2", p.table);
        assertEquals("AKIDX", p.accessKeyId);
        assertEquals("se/cr@et", p.secretAccessKey);
        assertEquals("eu-west-1", p.region);
        assertEquals(URI.create("http://127.0.0.1:4567"), p.endpoint);
        assertTrue(p.createTable);
        assertEquals(200, p.feedPollMillis);
        assertEquals(8, p.feedRingSize);
        assertEquals(20, p.maxAttempts);
        assertEquals(300, p.attemptTimeoutMillis);
        assertEquals(900, p.callTimeoutMillis);
        assertEquals(2, p.sdkAttempts);
        assertEquals(1500, p.callDeadlineMillis);
        assertTrue(p.allowGlobalTable);
        DynamoDbStoreProvider.Parsed plain = DynamoDbStoreProvider.parse("dynamodb://redeye_breakers");
        assertNull(plain.accessKeyId);
        assertFalse(plain.createTable);
        assertEquals(250, plain.attemptTimeoutMillis);
        assertEquals(1000, plain.callTimeoutMillis);
        assertEquals(3, plain.sdkAttempts);
        assertEquals(DynamoDbStore.DEFAULT_CALL_DEADLINE.toMillis(), plain.callDeadlineMillis);
        assertEquals(2000, plain.callDeadlineMillis, "the documented default");
        assertFalse(plain.allowGlobalTable);
    }

    @Test
    void badUrisAreRefusedNamingTheProblemWithoutTheSecret() {
        String[] bad = {
            "dynamodb://AKID:topsecret@x?region=eu-west-1",                 // table too short
            "dynamodb://AKID:topsecret@tab/le",                             // a path
            "dynamodb://AKID:topsecret@table?regoin=eu-west-1",             // typo
            "dynamodb://AKID:topsecret@table?createTable=yes",
            "dynamodb://AKID:topsecret@table?endpoint=ftp://h:1",
            "dynamodb://AKID:topsecret@table?feedPollMillis=0",
            "dynamodb://AKID:topsecret@table?callDeadlineMillis=5",            // below 10 ms
            "dynamodb://AKID:topsecret@table?callDeadlineMillis=600001",       // above 10 minutes
            "dynamodb://AKID:topsecret@table?callDeadlineMillis=soon",
            "dynamodb://AKID:topsecret@table?allowGlobalTable=yes",
            "dynamodb://topsecret@table",                                   // no key id
            "redis://AKID:topsecret@table",
        };
        for (String uri : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DynamoDbStoreProvider.parse(uri), uri);
            assertFalse(e.getMessage().contains("topsecret"), "the secret leaked: " + e.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> DynamoDbStoreProvider.parse("dynamodb://table?regoin=x")).getMessage().contains("'regoin'"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> DynamoDbStoreProvider.parse("dynamodb://table?callDeadlineMillis=5")).getMessage()
                .contains("callDeadlineMillis"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> DynamoDbStoreProvider.parse("dynamodb://table?allowGlobalTable=1")).getMessage()
                .contains("allowGlobalTable"));
    }

    @Test
    void theBuilderRefusesACallDeadlineOutOfRangeNamingTheOption() {
        try (var c = DynamoTestSupport.rawClient()) {
            DynamoDbStore.Builder b = DynamoDbStore.builder(c);
            for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(9), Duration.ofMinutes(11),
                    Duration.ofSeconds(-1))) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.callDeadline(bad));
                assertTrue(e.getMessage().contains("callDeadline"), e.getMessage());
            }
            assertThrows(NullPointerException.class, () -> b.callDeadline(null));
        }
    }

    @Test
    void storesOpenFindsTheProviderAndTheStoreWorks() {
        try (Store s = Stores.open(DynamoTestSupport.uri(TABLE, "createTable=true"), dev.redeye.OpenMode.STRICT)) {
            assertInstanceOf(DynamoDbStore.class, s);
            assertEquals(TABLE, ((DynamoDbStore) s).table());
            s.put("op", dev.redeye.api.BreakerState.INITIAL.toBuilder().failures(2).build(),
                    Duration.ofMinutes(1));
            assertEquals(2, s.get("op").orElseThrow().failures());
            assertTrue(s.toString().contains(TABLE));
            assertFalse(s.toString().contains("test:test"));
        }
        try (Store again = Stores.open(DynamoTestSupport.uri(TABLE, ""))) {
            assertTrue(again.capability(dev.redeye.spi.TransitionFeed.class).isPresent());
        }
    }

    @Test
    void withAnEndpointAndNoRegionTheClientSignsForUsEast1() {
        // Local servers ignore the region; the SDK still wants one. No instance-metadata lookup is made for it.
        DynamoDbStoreProvider.Parsed p = DynamoDbStoreProvider.parse("dynamodb://table?endpoint="
                + DynamoTestSupport.url());
        if (System.getenv("AWS_REGION") == null && System.getenv("AWS_DEFAULT_REGION") == null
                && System.getProperty("aws.region") == null) {
            try (var c = p.client()) {
                assertEquals("us-east-1", c.serviceClientConfiguration().region().id());
            }
        }
    }
}

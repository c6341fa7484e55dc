package dev.redeye.store.dynamodb;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * A test class's own table on the test endpoint (registered as a static {@code @RegisterExtension} field):
 * created before the class's tests with a raw client the tests may use, dropped after them; the stores a test
 * builds with {@link #store}, each over a client of its own, are closed after that test.
 */
final class DynamoTable implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
    private final String name;
    private final List<DynamoDbClient> clients = new CopyOnWriteArrayList<>();
    private final List<DynamoDbStore> stores = new CopyOnWriteArrayList<>();
    private volatile DynamoDbClient raw;

    /** A table named from {@code prefix} and a random suffix. */
    DynamoTable(String prefix) {
        this.name = DynamoTestSupport.newTable(prefix);
    }

    String name() {
        return name;
    }

    /** The class's raw client (open from before the first test to after the last). */
    DynamoDbClient raw() {
        return raw;
    }

    /** A store over a DynamoDbClient of its own (two of them stand for two processes), closed after the test. */
    DynamoDbStore store(UnaryOperator<DynamoDbStore.Builder> config) {
        DynamoDbClient c = DynamoTestSupport.rawClient();
        clients.add(c);
        DynamoDbStore s = config.apply(DynamoDbStore.builder(c).table(name)
                .callDeadline(DynamoTestSupport.TEST_DEADLINE)).build();
        stores.add(s);
        return s;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        raw = DynamoTestSupport.rawClient();
        DynamoDbStore.builder(raw).table(name).createTable(true).build().close();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        stores.forEach(DynamoDbStore::close);
        clients.forEach(DynamoDbClient::close);
        stores.clear();
        clients.clear();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        DynamoTestSupport.deleteTable(name);
        raw.close();
    }
}

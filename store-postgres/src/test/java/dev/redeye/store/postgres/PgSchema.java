package dev.redeye.store.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A schema of a test class's own on the test server, created before its first test and dropped after its last:
 * {@code @RegisterExtension static final PgSchema SCHEMA = new PgSchema("prefix");}. It names new tables in it
 * and closes what a test {@linkplain #keep keeps} after that test, last kept first.
 */
final class PgSchema implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
    private final String prefix;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private volatile String name;

    PgSchema(String prefix) {
        this.prefix = prefix;
    }

    /** The schema's name (random, starting with the prefix); set once the class's tests start. */
    String name() {
        return name;
    }

    /** A new random table name, unquoted. */
    String newTable() {
        return "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    /** {@code table} qualified with this schema, both quoted, for SQL. */
    String qualified(String table) {
        return TableNames.quote(name) + "." + TableNames.quote(table);
    }

    /** Returns {@code resource}, to be closed after the current test. */
    synchronized <T extends AutoCloseable> T keep(T resource) {
        resources.add(resource);
        return resource;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        name = PgTestSupport.createSchema(prefix);
    }

    @Override
    public synchronized void afterEach(ExtensionContext context) throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        resources.clear();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (name != null) {
            PgTestSupport.dropSchema(name);
        }
    }
}

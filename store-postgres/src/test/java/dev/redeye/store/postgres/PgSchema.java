package dev.redeye.store.postgres;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A schema of a test class's own on the test server, created before its first test and dropped after its last:
 * {@code @RegisterExtension static final PgSchema SCHEMA = new PgSchema("prefix");}.
 */
final class PgSchema implements BeforeAllCallback, AfterAllCallback {
    private final String prefix;
    private volatile String name;

    PgSchema(String prefix) {
        this.prefix = prefix;
    }

    /** The schema's name (random, starting with the prefix); set once the class's tests start. */
    String name() {
        return name;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        name = PgTestSupport.createSchema(prefix);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (name != null) {
            PgTestSupport.dropSchema(name);
        }
    }
}

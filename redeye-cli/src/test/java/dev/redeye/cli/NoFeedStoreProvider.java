package dev.redeye.cli;

import dev.redeye.spi.Store;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test fixture, scheme {@code nofeed:}: a plain store with only the required methods (no capability at all,
 * so no transition feed) and private data per instance (two clients share nothing, so the TCK's two-client
 * rules fail). Registered in src/test/resources/META-INF/services.
 */
public final class NoFeedStoreProvider extends OneSchemeProvider {

    /** ServiceLoader calls this. */
    public NoFeedStoreProvider() {
        super("nofeed");
    }

    @Override
    public Store open(String uri) {
        return new NaiveSharedStoreProvider.MapStore(new ConcurrentHashMap<>());
    }
}

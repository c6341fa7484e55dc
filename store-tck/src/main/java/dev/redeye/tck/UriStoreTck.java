package dev.redeye.tck;

import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;

/**
 * The TCK against a store named by URI: each client is {@code Stores.open(uri)}, so the store module must be
 * on the classpath. The URI comes from the JUnit configuration parameter {@value TckRunner#URI_PARAMETER}
 * (what {@link TckRunner#run(String)} and {@code redeye tck --store URI} set) or, failing that, from the
 * system property of the same name. When neither is set every rule is skipped with that reason.
 *
 * <p>Each {@code Stores.open(uri)} must give a new client of the same shared data (true of every networked
 * store). {@code memory:} opens a new, empty store each time, so two clients do not share state and the
 * multi-client rules fail: run the in-memory store through {@code InMemoryStore.newClient()} instead.
 *
 * <p>The hooks of R1.7 and R6.8 are not available through a URI: those rules are skipped. R0.1 checks the
 * capabilities listed by {@value TckRunner#EXPECT_PARAMETER}, if any, and fails a store that declares no
 * capability unless that parameter says {@code none}.
 */
@ExtendWith(UriStoreTck.UriParameter.class)
public class UriStoreTck extends ConfiguredStoreTck {
    private volatile String uri;

    /** Used by the JUnit Platform. */
    public UriStoreTck() {
    }

    @BeforeEach
    final void requireUri() {
        Assumptions.assumeTrue(uri != null && !uri.isBlank(), "no store URI: set the JUnit configuration "
                + "parameter or system property " + TckRunner.URI_PARAMETER + " (for example redis://127.0.0.1:6379)");
    }

    /**
     * Opens a new client with {@code Stores.open(uri)}.
     *
     * @throws IllegalArgumentException if no store provider on the classpath handles the URI's scheme
     */
    @Override
    protected Store newClient() {
        return Stores.open(uri);
    }

    @Override
    public String toString() {
        return "UriStoreTck[" + StoreUris.redact(uri) + "]";
    }

    /** Hands the configured URI to each test instance. */
    static final class UriParameter implements TestInstancePostProcessor {
        @Override
        public void postProcessTestInstance(Object testInstance, ExtensionContext context) {
            Optional<String> configured = context.getConfigurationParameter(TckRunner.URI_PARAMETER)
                    .or(() -> Optional.ofNullable(System.getProperty(TckRunner.URI_PARAMETER)));
            UriStoreTck tck = (UriStoreTck) testInstance;
            tck.uri = configured.orElse(null);
            tck.readExpectations(context);
        }
    }
}

package dev.redeye.tck.example;

import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.TrialClaims;
import dev.redeye.tck.StoreTck;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;

/** The READMEs' minimal store through the whole TCK. */
class MapStoreTckTest extends StoreTck {
    private static final MapStore BACKEND = new MapStore();

    @Override
    protected Store newClient() {
        return BACKEND.newClient();
    }

    @Override
    protected Set<Class<?>> expectedCapabilities() {
        return Set.of(AtomicUpdates.class, TrialClaims.class);
    }

    @AfterAll
    static void closeBackend() {
        BACKEND.close();
    }
}

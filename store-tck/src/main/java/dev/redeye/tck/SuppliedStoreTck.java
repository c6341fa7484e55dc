package dev.redeye.tck;

import dev.redeye.spi.Store;
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;

/**
 * The TCK over a client supplier handed to {@link TckRunner#run(Supplier)}: the runner registers the supplier
 * under an id and passes the id as a configuration parameter. Not meant to be run on its own.
 */
@ExtendWith(SuppliedStoreTck.SupplierParameter.class)
class SuppliedStoreTck extends ConfiguredStoreTck {
    private volatile Supplier<? extends Store> clients;

    @BeforeEach
    final void requireSupplier() {
        Assumptions.assumeTrue(clients != null, "no store supplier registered: run this class through TckRunner");
    }

    @Override
    protected Store newClient() {
        return clients.get();
    }

    /** Looks the supplier up by the id the runner passed. */
    static final class SupplierParameter implements TestInstancePostProcessor {
        @Override
        public void postProcessTestInstance(Object testInstance, ExtensionContext context) {
            SuppliedStoreTck tck = (SuppliedStoreTck) testInstance;
            tck.clients = context.getConfigurationParameter(TckRunner.SUPPLIER_PARAMETER)
                    .map(TckRunner::supplier)
                    .orElse(null);
            tck.readExpectations(context);
        }
    }
}

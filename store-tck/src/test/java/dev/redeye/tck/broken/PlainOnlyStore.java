package dev.redeye.tck.broken;

import dev.redeye.spi.Store;
import java.util.Optional;

/** A correct store that declares no optional capability: only get, put and delete. */
final class PlainOnlyStore extends ForwardingStore {

    PlainOnlyStore(Store inner) {
        super(inner);
    }

    @Override
    public <C> Optional<C> capability(Class<C> type) {
        return Optional.empty();
    }
}

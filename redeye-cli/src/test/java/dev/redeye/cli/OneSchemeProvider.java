package dev.redeye.cli;

import dev.redeye.spi.StoreProvider;
import java.util.Set;

/** A test fixture's provider: it opens the URIs of one scheme. */
abstract class OneSchemeProvider implements StoreProvider {
    private final String scheme;

    OneSchemeProvider(String scheme) {
        this.scheme = scheme;
    }

    @Override
    public Set<String> schemes() {
        return Set.of(scheme);
    }
}

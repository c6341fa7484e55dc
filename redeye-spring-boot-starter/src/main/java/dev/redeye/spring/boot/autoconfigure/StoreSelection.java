package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Which store the breakers share, when the application defines no {@link Store} bean of its own: a client
 * bean's store (used instead of the URI), else the store {@code redeye.store} names. {@code redeye.store}
 * with another store's scheme turns a client bean down, so an application's own {@code DataSource} never
 * takes over a {@code redis://} configuration; several client beans and no {@code redeye.store} to choose is
 * a start-up error naming them.
 */
final class StoreSelection {
    private static final Logger LOG = LoggerFactory.getLogger(StoreSelection.class);

    private final String uri;
    private final StoreClientSource client;

    private StoreSelection(String uri, StoreClientSource client) {
        this.uri = uri;
        this.client = client;
    }

    /**
     * Chooses among the client sources and the URI.
     *
     * @param uri     {@code redeye.store}, or null
     * @param sources the client sources registered
     * @throws IllegalStateException if several client sources match and nothing chooses among them
     */
    static StoreSelection choose(String uri, List<StoreClientSource> sources) {
        List<StoreClientSource> matching = uri == null ? sources
                : sources.stream().filter(s -> s.matches(uri)).collect(Collectors.toList());
        if (matching.size() > 1) {
            throw new IllegalStateException("redeye found client beans of several store modules: "
                    + matching.stream().map(StoreClientSource::description).collect(Collectors.joining(", "))
                    + "; set redeye.store to the scheme of the one to use (for example redeye.store=redis:)");
        }
        if (matching.size() == 1) {
            if (uri != null) {
                LOG.info("redeye.store={} chooses the store; its address and parameters are not used: the {} is",
                        StoreUris.redact(uri), matching.get(0).description());
            }
            return new StoreSelection(uri, matching.get(0));
        }
        if (uri == null) {
            throw new IllegalStateException("no store to select: neither redeye.store nor a client bean");
        }
        return new StoreSelection(uri, null);
    }

    /**
     * Opens the store, from the URI or over the client bean, in {@code mode} (lazy: a store that cannot be
     * reached is returned anyway and connects on first use).
     *
     * @throws InvalidConfigurationPropertyValueException naming {@code redeye.store} if the URI is malformed or
     *                                                    no store module handles its scheme
     * @throws IllegalStateException                      in STRICT mode, if the store cannot be reached
     */
    Store open(OpenMode mode) {
        if (client != null) {
            return client.open(mode);
        }
        try {
            return Stores.open(uri, mode);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException("redeye.store", StoreUris.redact(uri), e.getMessage());
        } catch (StoreException e) {
            throw new IllegalStateException("redeye.store=" + StoreUris.redact(uri) + " cannot be opened: "
                    + e.getMessage(), e);
        }
    }

    /** The client bean the store is built over, if it is. */
    Optional<String> clientBean() {
        return Optional.ofNullable(client).map(StoreClientSource::bean);
    }

    /** For people: the redacted URI or the client bean; never a password. */
    String description() {
        return client != null ? client.description() : StoreUris.redact(uri) + " (redeye.store)";
    }
}

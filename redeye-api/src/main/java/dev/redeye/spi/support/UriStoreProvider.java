package dev.redeye.spi.support;

import dev.redeye.api.StoreException;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A {@link StoreProvider} of a network store opened from its parsed URI, each of whose stores offers every
 * capability of the SPI: {@link #open(String)} parses the URI and opens a store from the result, and
 * {@link #describe(String)} parses it the same way without connecting, so that a URI {@code open} would
 * refuse is refused at once by both. The parser names the problem in an {@link IllegalArgumentException}
 * whose message holds the URI redacted ({@link StoreUris#redact(String)}) at most.
 *
 * @param <S> the class of the stores opened
 */
public abstract class UriStoreProvider<S extends Store> implements StoreProvider {
    private final Class<S> type;
    private final Set<String> schemes;
    /** The parser, for {@link #describe(String)}. */
    private final Function<String, ?> check;
    /** The parser, then the opener. */
    private final Function<String, S> opening;

    /**
     * @param <P>     what the parser makes of a URI
     * @param type    the class of every store {@code opener} returns
     * @param schemes the schemes opened, lower case, without the colon
     * @param parser  checks a URI and takes it apart, without connecting; throws
     *                {@link IllegalArgumentException} for a URI it refuses
     * @param opener  opens a connected store from a parsed URI and the URI itself (to name it, redacted, in a
     *                message or log line); throws {@link StoreException} if the backend cannot be reached
     * @throws NullPointerException if an argument is null
     */
    protected <P> UriStoreProvider(Class<S> type, Set<String> schemes, Function<String, P> parser,
                                   BiFunction<P, String, S> opener) {
        Objects.requireNonNull(parser, "parser");
        Objects.requireNonNull(opener, "opener");
        this.type = Objects.requireNonNull(type, "type");
        this.schemes = Set.copyOf(schemes);
        this.check = parser;
        this.opening = uri -> opener.apply(parser.apply(uri), uri);
    }

    @Override
    public final Set<String> schemes() {
        return schemes;
    }

    /**
     * Opens a connected store for the URI (see the provider's class Javadoc for its form).
     *
     * @throws IllegalArgumentException if the URI is malformed (the message carries the redacted URI)
     * @throws StoreException           if the backend cannot be reached or refuses the store
     */
    @Override
    public final S open(String uri) {
        return opening.apply(uri);
    }

    /**
     * A store of this provider's type with every capability, after checking the URI as {@link #open(String)}
     * does, without connecting: {@code Stores.open(uri)} then returns a store that connects on first use.
     *
     * @throws IllegalArgumentException if the URI is malformed
     */
    @Override
    public final Optional<Description> describe(String uri) {
        check.apply(uri);
        return Optional.of(Description.allCapabilities(type));
    }

    /** The provider's class name and its schemes, for example {@code RedisStoreProvider[redis, rediss]}. */
    @Override
    public String toString() {
        return getClass().getSimpleName() + new TreeSet<>(schemes);
    }
}

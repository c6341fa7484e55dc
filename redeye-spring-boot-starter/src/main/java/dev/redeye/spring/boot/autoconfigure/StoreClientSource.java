package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * A store that can be built over a client bean of the application (a {@code JedisPooled}, a
 * {@code DataSource}, ...), registered by {@link RedeyeStoreClientsAutoConfiguration} when the store module
 * and exactly one such bean are there. Cheap: nothing connects until {@link #open(OpenMode)}.
 *
 * @param schemes      the URI schemes of the same store, so that {@code redeye.store} can choose among sources
 * @param bean         the client bean's name
 * @param description  for people and logs: the bean's name and type, never its connection details
 * @param declared     what the store built over the bean is (its class and capabilities), known before it is
 *                     built, for a store whose build reaches the backend (it is then built on first use in
 *                     LAZY mode); null for one whose build does not (it is built at once)
 * @param prepare      applies the store's options to its builder (an invalid one fails here, at start) and
 *                     returns the build; the store never closes the bean
 */
record StoreClientSource(Set<String> schemes, String bean, String description, StoreProvider.Description declared,
        Supplier<Supplier<Store>> prepare) {

    /** Whether {@code uri} (possibly a bare scheme such as {@code redis:}) names this store. */
    boolean matches(String uri) {
        String lower = uri.toLowerCase(Locale.ROOT);
        for (String s : schemes) {
            if (lower.startsWith(s + ":")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The store over the bean: its options applied now; built now, or in {@link OpenMode#LAZY} mode, for a
     * store whose build reaches the backend, on first use (so that a backend that is down does not fail the
     * start).
     *
     * @throws InvalidConfigurationPropertyValueException naming the property of an invalid store option
     */
    Store open(OpenMode mode) {
        Supplier<Store> build = prepare.get();
        if (mode == OpenMode.LAZY && declared != null) {
            return Stores.connecting(description, declared, build);
        }
        return build.get();
    }

    /**
     * The source over the one candidate bean of {@code type} ({@link #candidate}): {@code prepare} gets that bean,
     * looked up when the store is opened, and does what {@link #prepare} does.
     */
    static <C> StoreClientSource over(ListableBeanFactory beans, Class<C> type, Set<String> schemes,
            StoreProvider.Description declared, Function<C, Supplier<Store>> prepare) {
        String name = candidate(beans, type);
        return new StoreClientSource(schemes, name, describe(beans, name), declared,
                () -> prepare.apply(beans.getBean(name, type)));
    }

    /**
     * The name of the one candidate bean of {@code type} (the only one, or the primary one): the condition
     * {@code @ConditionalOnSingleCandidate} already made sure there is exactly one.
     */
    static String candidate(ListableBeanFactory beans, Class<?> type) {
        String[] names = beans.getBeanNamesForType(type);
        if (names.length == 1 || !(beans instanceof ConfigurableListableBeanFactory c)) {
            return names[0];
        }
        for (String n : names) {
            if (c.containsBeanDefinition(n) && c.getBeanDefinition(n).isPrimary()) {
                return n;
            }
        }
        return names[0];
    }

    /** "JedisPooled bean 'jedis'". */
    static String describe(ListableBeanFactory beans, String name) {
        Class<?> type = beans.getType(name);
        return (type == null ? "client" : type.getSimpleName()) + " bean '" + name + "'";
    }

    /**
     * Applies one store option set by a property, turning the store builder's {@link IllegalArgumentException}
     * into one that names the property.
     */
    static <T> void option(String property, T value, Consumer<T> setter) {
        if (value == null) {
            return;
        }
        try {
            setter.accept(value);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException(property, value, e.getMessage());
        }
    }
}

package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.CircuitBreaker;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.RedeyeBreakerCustomizer;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.RedeyeProperties;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The breakers and their store, from {@code redeye.*} properties.
 *
 * <ul>
 * <li>{@link Store} bean: the application's own if it defines one; else built over a client bean of a store
 * module ({@link RedeyeStoreClientsAutoConfiguration}), used instead of the URI; else opened from
 * {@code redeye.store}; else none (local mode: each breaker keeps its state in this process). Closed by
 * Spring at shutdown, after the breakers, which are built with {@code closeStore(false)}. A store opened from
 * {@code redeye.store} that cannot be reached does not fail the start ({@code redeye.store-open-mode=lazy},
 * the default): it connects on first use, and meanwhile the breakers follow their store error policy;
 * {@code strict} fails the start instead.</li>
 * <li>{@link RedeyeCircuitBreakers} bean {@value #REGISTRY}: the default breaker and one per
 * {@code redeye.breakers.<name>}, each with the properties applied, then every
 * {@link RedeyeBreakerCustomizer} bean. It owns and closes them.</li>
 * <li>{@link CircuitBreaker} beans: the default one ({@code redeyeCircuitBreaker}, primary, qualifier
 * {@value RedeyeCircuitBreakers#DEFAULT}) and one per configured name, qualified after it
 * ({@code @Qualifier("payments") CircuitBreaker payments}) and named {@code redeyeCircuitBreaker.payments}, so
 * that it never clashes with an application bean named like the breaker; see {@link NamedBreakersRegistrar}.</li>
 * </ul>
 *
 * An invalid property fails the start with an exception naming the property.
 */
@AutoConfiguration(after = RedeyeStoreClientsAutoConfiguration.class)
@ConditionalOnProperty(prefix = "redeye", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RedeyeProperties.class)
@Import(NamedBreakersRegistrar.class)
public class RedeyeAutoConfiguration {
    /** The registry's bean name. */
    public static final String REGISTRY = "redeyeCircuitBreakers";
    /** The name of the store bean this auto-configuration opens (none when the application has its own). */
    public static final String STORE = "redeyeStore";

    private static final Logger LOG = LoggerFactory.getLogger(RedeyeAutoConfiguration.class);
    private static final String LOCAL = "none (local mode)";

    @Bean
    @ConditionalOnMissingBean(Store.class)
    @Conditional(StoreConfiguredCondition.class)
    StoreSelection redeyeStoreSelection(RedeyeProperties properties, ObjectProvider<StoreClientSource> sources) {
        String uri = StringUtils.hasText(properties.getStore()) ? properties.getStore().trim() : null;
        return StoreSelection.choose(uri, sources.orderedStream().toList());
    }

    @Bean(name = STORE, destroyMethod = "close")
    @ConditionalOnMissingBean(Store.class)
    @Conditional(StoreConfiguredCondition.class)
    Store redeyeStore(StoreSelection selection, RedeyeProperties properties, ConfigurableListableBeanFactory beans) {
        Store store = selection.open(properties.getStoreOpenMode());
        // the client bean is looked up by name, which records no dependency: record it, so that Spring
        // closes this store (and, before it, every breaker) before it closes the application's client
        selection.clientBean().ifPresent(client -> beans.registerDependentBean(client, STORE));
        return store;
    }

    @Bean(name = REGISTRY, destroyMethod = "close")
    RedeyeCircuitBreakers redeyeCircuitBreakers(RedeyeProperties properties, ObjectProvider<Store> stores,
            ObjectProvider<StoreSelection> selection, ObjectProvider<RedeyeBreakerCustomizer> customizers,
            Environment environment, ConfigurableListableBeanFactory beans) {
        Store store = stores.getIfAvailable();
        String description = LOCAL;
        if (store != null) {
            String storeBean = beanNameOf(beans, store);
            if (storeBean != null) {
                beans.registerDependentBean(storeBean, REGISTRY); // the store closes after every breaker
            }
            StoreSelection ours = selection.getIfAvailable();
            description = ours != null ? ours.description()
                    : "Store bean '" + storeBean + "' (" + Stores.typeOf(store).getSimpleName() + ")";
            if (ours == null && StringUtils.hasText(properties.getStore())) {
                LOG.info("redeye.store is not used: the application's {} is", description);
            }
        }
        BreakerFactory factory = new BreakerFactory(properties.getDefaults(), properties.getBreakers(), store,
                customizers.orderedStream().toList(), environment);
        Map<String, CircuitBreaker> built = new LinkedHashMap<>();
        try {
            for (String name : factory.names()) {
                built.put(name, factory.build(name));
            }
        } catch (RuntimeException e) {
            built.values().forEach(CircuitBreaker::close);
            throw e;
        }
        LOG.info("redeye: breakers {} over {}", built.keySet(), description);
        return new RedeyeCircuitBreakers(built, description);
    }

    /** The default breaker; the registry closes it. */
    @Bean(destroyMethod = "")
    @Primary
    @Qualifier(RedeyeCircuitBreakers.DEFAULT)
    CircuitBreaker redeyeCircuitBreaker(RedeyeCircuitBreakers breakers) {
        return breakers.getDefault();
    }

    private static String beanNameOf(ConfigurableListableBeanFactory beans, Store store) {
        for (String name : beans.getBeanNamesForType(Store.class)) {
            if (beans.getBean(name) == store) {
                return name;
            }
        }
        return null;
    }

    /** Names of the breakers configured under {@code redeye.breakers}, besides the default one. */
    static List<String> configuredNames(Map<String, ?> breakers) {
        return breakers.keySet().stream().filter(n -> !n.equals(RedeyeCircuitBreakers.DEFAULT)).toList();
    }
}

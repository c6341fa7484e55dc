package dev.redeye.spring.boot.autoconfigure;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/**
 * Matches when there is a store to open: {@code redeye.store} has text, or a {@link StoreClientSource} bean was
 * registered (by {@link RedeyeStoreClientsAutoConfiguration}, which runs before). Otherwise the breakers run
 * in local mode and no store bean exists.
 */
class StoreConfiguredCondition extends SpringBootCondition implements ConfigurationCondition {

    @Override
    public ConfigurationPhase getConfigurationPhase() {
        return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        if (StringUtils.hasText(context.getEnvironment().getProperty("redeye.store"))) {
            return ConditionOutcome.match("redeye.store is set");
        }
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        if (beans != null && beans.getBeanNamesForType(StoreClientSource.class, true, false).length > 0) {
            return ConditionOutcome.match("a store module's client bean is there");
        }
        return ConditionOutcome.noMatch("neither redeye.store nor a store module's client bean: local mode");
    }
}

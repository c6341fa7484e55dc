package dev.redeye.resilience4j.spring;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.StringUtils;

/** Matches when {@code redeye.store} has text: the application asked for a shared store. */
class StoreUriCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        return StringUtils.hasText(context.getEnvironment().getProperty("redeye.store"))
                ? ConditionOutcome.match("redeye.store is set")
                : ConditionOutcome.noMatch("redeye.store is not set: Resilience4j's own registry");
    }
}

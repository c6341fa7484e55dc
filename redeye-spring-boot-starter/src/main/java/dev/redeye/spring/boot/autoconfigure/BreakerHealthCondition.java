package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.spring.boot.BreakerProperties;
import dev.redeye.spring.boot.RedeyeProperties;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when a breaker asks for its health indicator: {@code redeye.defaults.register-health-indicator} or a
 * {@code redeye.breakers.<name>.register-health-indicator} is true.
 */
class BreakerHealthCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        RedeyeProperties p = Binder.get(context.getEnvironment()).bind("redeye", RedeyeProperties.class)
                .orElseGet(RedeyeProperties::new);
        if (registered(p.getDefaults(), null)) {
            return ConditionOutcome.match("redeye.defaults.register-health-indicator is true");
        }
        for (var e : p.getBreakers().entrySet()) {
            if (registered(e.getValue(), p.getDefaults())) {
                return ConditionOutcome.match("redeye.breakers." + e.getKey() + ".register-health-indicator is true");
            }
        }
        return ConditionOutcome.noMatch("no breaker sets register-health-indicator");
    }

    /** Whether {@code own} (falling back to {@code defaults}) registers its health indicator. */
    static boolean registered(BreakerProperties own, BreakerProperties defaults) {
        Boolean v = own != null ? own.getRegisterHealthIndicator() : null;
        if (v == null && defaults != null) {
            v = defaults.getRegisterHealthIndicator();
        }
        return Boolean.TRUE.equals(v);
    }

    /** Whether {@code own} (falling back to {@code defaults}) may report DOWN. */
    static boolean allowedToFail(BreakerProperties own, BreakerProperties defaults) {
        Boolean v = own != null ? own.getAllowHealthIndicatorToFail() : null;
        if (v == null) {
            v = defaults.getAllowHealthIndicatorToFail();
        }
        return Boolean.TRUE.equals(v);
    }

    /** Whether {@code own} (falling back to {@code defaults}) reports OUT_OF_SERVICE while an outlier. */
    static boolean reportsOutlier(BreakerProperties own, BreakerProperties defaults) {
        Boolean v = own != null ? own.getHealthReportsOutlier() : null;
        if (v == null && defaults != null) {
            v = defaults.getHealthReportsOutlier();
        }
        return Boolean.TRUE.equals(v);
    }
}

package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.dashboard.FleetView;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.RedeyeCircuitBreakers;
import dev.redeye.spring.boot.RedeyeProperties;
import dev.redeye.spring.boot.actuate.RedeyeDashboardController;
import dev.redeye.spring.boot.actuate.RedeyeDashboardEndpoint;
import java.time.Clock;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The live fleet view as an opt-in Actuator endpoint, {@code redeyedashboard} ({@link RedeyeDashboardEndpoint},
 * with the page and its streams, {@link RedeyeDashboardController}): in a servlet web application with Actuator,
 * {@code redeye-dashboard} on the class path and a shared store, created only when the endpoint is exposed
 * ({@code management.endpoints.web.exposure.include=redeyedashboard}). One {@link FleetView} over the
 * application's store: one feed subscription and one listing every {@code redeye.dashboard.refresh}, whatever the
 * number of browsers; the thresholds shown are the default breaker's.
 */
@AutoConfiguration(after = RedeyeAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, FleetView.class, SseEmitter.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean({RedeyeCircuitBreakers.class, Store.class})
@ConditionalOnAvailableEndpoint(RedeyeDashboardEndpoint.class)
public class RedeyeDashboardAutoConfiguration {

    @Bean(initMethod = "start", destroyMethod = "close")
    @ConditionalOnMissingBean
    FleetView redeyeFleetView(Store store, RedeyeCircuitBreakers breakers, RedeyeProperties properties) {
        RedeyeProperties.Dashboard d = properties.getDashboard();
        return new FleetView(store, breakers.getDefault().config().policy(), d.getOperations(), d.getRefresh(),
                Clock.systemUTC());
    }

    @Bean
    @ConditionalOnMissingBean
    RedeyeDashboardEndpoint redeyeDashboardEndpoint(FleetView view) {
        return new RedeyeDashboardEndpoint(view);
    }

    @Bean
    @ConditionalOnMissingBean
    RedeyeDashboardController redeyeDashboardController(FleetView view, RedeyeProperties properties) {
        return new RedeyeDashboardController(view, properties.getDashboard().isActions());
    }
}

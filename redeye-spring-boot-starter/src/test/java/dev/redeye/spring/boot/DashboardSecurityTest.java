package dev.redeye.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.redeye.Stores;
import dev.redeye.api.BreakerState;
import dev.redeye.spi.Store;
import dev.redeye.spring.boot.actuate.RedeyeDashboardEndpoint;
import dev.redeye.spring.boot.app.InventoryApplication;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.security.servlet.EndpointRequest;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The {@code redeyedashboard} endpoint behind Spring Security as an application secures Actuator: one rule,
 * {@code EndpointRequest.to(RedeyeDashboardEndpoint.class)} needs the role OPS (HTTP basic), and it covers the
 * page, its assets, its event stream, the Hystrix stream and the actions, which are all under the endpoint's path.
 * Without credentials 401, with a user without the role 403, with an operator 200; an action without credentials, or
 * without the CSRF token, is refused by Spring Security and changes nothing. The dashboard adds no authentication of its own. Run by
 * its own Surefire execution, the only one with Spring Security on the class path.
 */
@SpringBootTest(classes = {InventoryApplication.class, DashboardSecurityTest.Security.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,redeyedashboard",
            "redeye.store=memory://dashboard-security-test", "redeye.dashboard.actions=true",
            "spring.main.banner-mode=off"})
class DashboardSecurityTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Store OTHER = Stores.open("memory://dashboard-security-test");

    @LocalServerPort
    int port;

    /** The application's security: the dashboard endpoint for operators, everything else open. */
    @TestConfiguration
    static class Security {
        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            http.authorizeHttpRequests(a -> a.requestMatchers(EndpointRequest.to(RedeyeDashboardEndpoint.class))
                    .hasRole("OPS").anyRequest().permitAll()).httpBasic(Customizer.withDefaults());
            return http.build();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("ops").password("{noop}ops-secret").roles("OPS").build(),
                    User.withUsername("viewer").password("{noop}viewer-secret").roles("USER").build());
        }
    }

    @AfterAll
    static void close() {
        OTHER.close();
    }

    private int status(String method, String path, String user, String password) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (user != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder().encodeToString((user + ":" + password)
                    .getBytes(StandardCharsets.UTF_8)));
        }
        if (method.equals("POST")) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                    "{\"action\": \"force-open\", \"operation\": \"ledger\"}"));
        }
        // streams answer 200 at once and go on: only the status is read
        HttpResponse<java.io.InputStream> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        r.body().close();
        return r.statusCode();
    }

    @Test
    void theEndpointsRuleProtectsThePageItsStreamsAndItsActions() throws Exception {
        OTHER.put("ledger", BreakerState.INITIAL, Duration.ofHours(1));
        for (String path : List.of("/actuator/redeyedashboard", "/actuator/redeyedashboard/",
                "/actuator/redeyedashboard/assets/dashboard.js", "/actuator/redeyedashboard/events",
                "/actuator/redeyedashboard/hystrix.stream")) {
            assertThat(status("GET", path, null, null)).as(path + " without credentials").isEqualTo(401);
            assertThat(status("GET", path, "viewer", "viewer-secret")).as(path + " without the role").isEqualTo(403);
            assertThat(status("GET", path, "ops", "ops-secret")).as(path + " as an operator").isEqualTo(200);
        }
        // Spring Security's CSRF filter answers an anonymous POST before authentication does
        assertThat(status("POST", "/actuator/redeyedashboard/api/action", null, null)).isIn(401, 403);
        assertThat(status("POST", "/actuator/redeyedashboard/api/action", "ops", "ops-secret"))
                .as("an action without the CSRF token").isEqualTo(403);
        assertThat(OTHER.get("ledger").orElseThrow().forced()).isFalse();
        assertThat(status("GET", "/actuator/health", null, null)).isEqualTo(200);
    }
}

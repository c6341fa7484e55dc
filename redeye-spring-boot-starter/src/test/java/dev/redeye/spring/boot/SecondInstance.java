package dev.redeye.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A second instance of a Boot application, started in the test's JVM on a random port before the class's tests
 * (and before its first instance, the {@code @SpringBootTest} one) over the Redis store of a prefix; stopped after
 * them, and then every key under the prefix deleted:
 * {@code @RegisterExtension static final SecondInstance B = new SecondInstance(App.class, PREFIX, properties);}.
 */
final class SecondInstance implements BeforeAllCallback, AfterAllCallback {
    private final Class<?> application;
    private final String prefix;
    private final List<String> properties;
    private ConfigurableApplicationContext context;
    private String url;

    /** An instance of {@code application} with {@code properties} ("name=value") over the store of {@code prefix}. */
    SecondInstance(Class<?> application, String prefix, String... properties) {
        this.application = application;
        this.prefix = prefix;
        this.properties = List.of(properties);
    }

    /** The instance's base URL ({@code http://127.0.0.1:port}); set once the class's tests start. */
    String url() {
        return url;
    }

    /** The instance's bean of {@code type}. */
    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void beforeAll(ExtensionContext extensionContext) {
        List<String> props = new ArrayList<>(properties);
        props.add("server.port=0");
        props.add("redeye.store=" + TestServices.redisStoreUri(prefix));
        context = new SpringApplicationBuilder(application).properties(props.toArray(String[]::new)).run();
        url = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
    }

    @Override
    public void afterAll(ExtensionContext extensionContext) {
        if (context != null) {
            context.close();
        }
        TestServices.deleteRedisKeys(prefix);
    }
}

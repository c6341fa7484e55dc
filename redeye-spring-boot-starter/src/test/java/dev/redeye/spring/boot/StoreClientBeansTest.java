package dev.redeye.spring.boot;

import static dev.redeye.spring.boot.TestServices.failCall;
import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.ClientConnectionStrategyConfig;
import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.zaxxer.hikari.HikariDataSource;
import dev.redeye.CircuitBreaker;
import dev.redeye.spi.Store;
import dev.redeye.store.dynamodb.DynamoDbStore;
import dev.redeye.store.hazelcast.HazelcastStore;
import dev.redeye.store.hazelcast.RedeyeSerializableFactory;
import dev.redeye.store.postgres.PostgresStore;
import dev.redeye.store.redis.RedisStore;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.JedisPooled;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * An application's own client bean (JedisPooled, DataSource, HazelcastInstance, DynamoDbClient) is used instead
 * of a URI when the store module is on the class path; {@code redeye.store} of another scheme turns it down;
 * several need a choice; the store never closes the application's client. Real Redis, PostgreSQL, dynalite
 * and a Hazelcast member.
 */
class StoreClientBeansTest {
    private static final ApplicationContextRunner RUNNER = new ApplicationContextRunner()
            .withConfiguration(RedeyeAutoConfigurationTest.ALL);

    private static JedisPooled jedis;
    private static HikariDataSource dataSource;
    private static HazelcastInstance member;
    private static String schema;

    @BeforeAll
    static void clients() throws IOException {
        jedis = new JedisPooled(URI.create(TestServices.redisUrl()));
        dataSource = new HikariDataSource();
        dataSource.setJdbcUrl(TestServices.postgresUrl());
        dataSource.setMaximumPoolSize(4);
        schema = TestServices.newName("redeye_spring");
    }

    @AfterAll
    static void close() throws SQLException {
        if (jedis != null) {
            jedis.close();
        }
        if (dataSource != null) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
            } finally {
                dataSource.close();
            }
        }
        if (member != null) {
            member.shutdown();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jedis {
        @Bean(destroyMethod = "") // shared by the tests: closed in @AfterAll
        JedisPooled jedis() {
            return jedis;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jdbc {
        @Bean(destroyMethod = "")
        DataSource appDataSource() {
            return dataSource;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HazelcastMember {
        @Bean(destroyMethod = "")
        HazelcastInstance hazelcast() {
            return member();
        }
    }

    @Test
    void aJedisBeanIsUsedWithTheRedisPrefixPropertyAndOutlivesTheContext() {
        String prefix = TestServices.newPrefix();
        RUNNER.withUserConfiguration(Jedis.class)
                .withPropertyValues("redeye.redis.prefix=" + prefix, "redeye.defaults.failure-threshold=2")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RedisStore store = context.getBean(RedisStore.class);
                    assertThat(store.prefix()).isEqualTo(prefix);
                    RedeyeCircuitBreakers breakers = context.getBean(RedeyeCircuitBreakers.class);
                    assertThat(breakers.storeDescription()).isEqualTo("JedisPooled bean 'jedis'");
                    CircuitBreaker b = breakers.getDefault();
                    failCall(b, "charge");
                    failCall(b, "charge");
                    // written through the application's own client, under the prefix
                    assertThat(jedis.exists(store.stateKey("charge"))).isTrue();
                    // Spring closes the application's client only after the store (and the breakers before it)
                    assertThat(context.getBeanFactory().getDependentBeans("jedis")).contains("redeyeStore");
                    assertThat(context.getBeanFactory().getDependentBeans("redeyeStore"))
                            .contains("redeyeCircuitBreakers");
                });
        assertThat(jedis.ping()).isEqualTo("PONG"); // the store never closes a client it was given
    }

    @Test
    void aUriWithTheSameSchemeOnlyChoosesTheStoreTheBeanIsUsed() {
        // 127.0.0.1:1 has no server: the start succeeds only because the bean is used, not the address
        RUNNER.withUserConfiguration(Jedis.class)
                .withPropertyValues("redeye.store=redis://127.0.0.1:1", "redeye.redis.prefix=" + TestServices.newPrefix())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Store.class)).isInstanceOf(RedisStore.class);
                    failCall(context.getBean(CircuitBreaker.class), "x");
                    assertThat(context.getBean(CircuitBreaker.class).metrics("x").storeErrors()).isZero();
                });
    }

    @Test
    void aUriOfAnotherStoreTurnsTheClientBeanDown() {
        String name = TestServices.newName("mem");
        RUNNER.withUserConfiguration(Jedis.class, Jdbc.class)
                .withPropertyValues("redeye.store=memory://" + name)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Store.class)).isNotInstanceOf(RedisStore.class)
                            .isNotInstanceOf(PostgresStore.class);
                    assertThat(context.getBean(RedeyeCircuitBreakers.class).storeDescription())
                            .isEqualTo("memory://" + name + " (redeye.store)");
                });
    }

    @Test
    void withoutTheStoreModuleTheClientBeanIsIgnored() {
        RUNNER.withUserConfiguration(Jedis.class)
                .withClassLoader(new FilteredClassLoader(RedisStore.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(Store.class);
                    assertThat(context.getBean(RedeyeCircuitBreakers.class).storeDescription())
                            .isEqualTo("none (local mode)");
                });
    }

    @Test
    void twoClientBeansNeedRedeyeStoreToChoose() {
        RUNNER.withUserConfiguration(Jedis.class, Jdbc.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(RedeyeAutoConfigurationTest.allMessages(context))
                    .contains("JedisPooled bean 'jedis'", "HikariDataSource bean 'appDataSource'",
                            "set redeye.store to the scheme of the one to use");
        });
        RUNNER.withUserConfiguration(Jedis.class, Jdbc.class)
                .withPropertyValues("redeye.store=redis:", "redeye.redis.prefix=" + TestServices.newPrefix())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Store.class)).isInstanceOf(RedisStore.class);
                });
    }

    @Test
    void aDataSourceBeanIsUsedWithThePostgresProperties() throws SQLException {
        RUNNER.withUserConfiguration(Jdbc.class)
                .withPropertyValues("redeye.postgres.schema=" + schema, "redeye.postgres.table=breakers",
                        "redeye.breakers.payments.failure-threshold=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RedeyeCircuitBreakers.class).storeDescription())
                            .isEqualTo("HikariDataSource bean 'appDataSource'");
                    failCall(RedeyeAutoConfigurationTest.qualified(context, "payments"), "charge");
                    // built over the bean on first use (a database down at start does not fail the start)
                    assertThat(context.getBean(Store.class).capability(PostgresStore.class)).isPresent();
                });
        assertThat(dataSource.isClosed()).isFalse();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) FROM \"" + schema + "\".\"breakers\"")) {
            r.next();
            assertThat(r.getInt(1)).isEqualTo(1);
        }
    }

    @Test
    void aBadStoreOptionNamesItsProperty() {
        RUNNER.withUserConfiguration(Jdbc.class)
                .withPropertyValues("redeye.postgres.schema=not a name")
                .run(context -> {
                    assertThat(context).hasFailed();
                    InvalidConfigurationPropertyValueException e = RedeyeAutoConfigurationTest.find(context,
                            InvalidConfigurationPropertyValueException.class);
                    assertThat(e.getName()).isEqualTo("redeye.postgres.schema");
                });
    }

    @Test
    void aHazelcastInstanceBeanIsUsedWithTheMapProperty() {
        String map = TestServices.newName("redeye");
        RUNNER.withUserConfiguration(HazelcastMember.class)
                .withPropertyValues("redeye.hazelcast.map=" + map, "redeye.defaults.failure-threshold=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    failCall(context.getBean(CircuitBreaker.class), "charge");
                    assertThat(context.getBean(Store.class).capability(HazelcastStore.class)).isPresent();
                    assertThat(member().getMap(map).containsKey("charge")).isTrue();
                });
        assertThat(member().getLifecycleService().isRunning()).isTrue();
    }

    @Test
    void aDynamoDbClientBeanIsUsedWithTheDynamoDbProperties() {
        String table = TestServices.newName("redeye_spring");
        try (DynamoDbClient client = DynamoDbClient.builder().endpointOverride(URI.create(TestServices.dynamoDbUrl()))
                .region(Region.US_EAST_1).httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .build()) {
            try {
                RUNNER.withBean("dynamo", DynamoDbClient.class, () -> client, bd -> bd.setDestroyMethodName(""))
                        .withPropertyValues("redeye.dynamodb.table=" + table, "redeye.dynamodb.create-table=true",
                                "redeye.defaults.failure-threshold=1")
                        .run(context -> {
                            assertThat(context).hasNotFailed();
                            Store store = context.getBean(Store.class);
                            assertThat(context.getBean(RedeyeCircuitBreakers.class).storeDescription())
                                    .endsWith(" bean 'dynamo'");
                            failCall(context.getBean(CircuitBreaker.class), "charge");
                            assertThat(store.capability(DynamoDbStore.class)).isPresent();
                            assertThat(store.get("charge")).get().satisfies(s -> assertThat(s.open()).isTrue());
                        });
                // the table was created through the application's client, which is still open
                assertThat(client.describeTable(r -> r.tableName(table)).table().tableName()).isEqualTo(table);
            } finally {
                client.deleteTable(r -> r.tableName(table));
            }
        }
    }

    /**
     * A HazelcastInstance client bean whose cluster has no member yet: the context starts (the store over it is
     * built on first use), its breakers follow their store error policy, and once a member runs on the
     * client's address the store is built and used. {@code redeye.store-open-mode=strict} builds it at start,
     * which then fails.
     */
    @Test
    void aClientBeanWhoseBackendIsDownAtStartIsUsedOnceItComesUp() throws Exception {
        int port = freePort();
        String cluster = TestServices.newName("redeye-spring-late");
        String map = TestServices.newName("redeye");
        HazelcastInstance client = lateClient(cluster, port);
        HazelcastInstance late = null;
        try {
            RUNNER.withBean("hazelcast", HazelcastInstance.class, () -> client, bd -> bd.setDestroyMethodName(""))
                    .withPropertyValues("redeye.hazelcast.map=" + map, "redeye.defaults.store-error-policy=allow",
                            "redeye.defaults.failure-threshold=1", "redeye.store-open-mode=strict")
                    .run(context -> assertThat(context).hasFailed());
            HazelcastInstance[] member = new HazelcastInstance[1];
            RUNNER.withBean("hazelcast", HazelcastInstance.class, () -> client, bd -> bd.setDestroyMethodName(""))
                    .withPropertyValues("redeye.hazelcast.map=" + map, "redeye.defaults.store-error-policy=allow",
                            "redeye.defaults.failure-threshold=1")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        CircuitBreaker b = context.getBean(CircuitBreaker.class);
                        assertThat(b.execute("charge", () -> "ran")).isEqualTo("ran");
                        assertThat(b.metrics("charge").storeErrors()).isPositive();
                        member[0] = standaloneMember(cluster, port);
                        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
                        while (context.getBean(Store.class).capability(HazelcastStore.class).isEmpty()) {
                            assertThat(System.nanoTime()).as("the store is built once the member runs")
                                    .isLessThan(deadline);
                            try {
                                b.state("charge");
                            } catch (dev.redeye.api.StoreException notYet) {
                                Thread.sleep(100);
                            }
                        }
                        failCall(b, "charge");
                        assertThat(member[0].getMap(map).containsKey("charge")).isTrue();
                    });
            late = member[0];
        } finally {
            client.shutdown();
            if (late != null) {
                late.shutdown();
            }
        }
    }

    /** A client of a cluster at 127.0.0.1:port that starts without a member and connects when one comes. */
    private static HazelcastInstance lateClient(String cluster, int port) {
        ClientConfig c = new ClientConfig();
        c.setClusterName(cluster);
        c.setProperty("hazelcast.logging.type", "slf4j");
        c.getNetworkConfig().addAddress("127.0.0.1:" + port);
        c.getConnectionStrategyConfig().setAsyncStart(true)
                .setReconnectMode(ClientConnectionStrategyConfig.ReconnectMode.ASYNC)
                .getConnectionRetryConfig().setInitialBackoffMillis(100).setMaxBackoffMillis(500)
                .setClusterConnectTimeoutMillis(-1);
        return HazelcastClient.newHazelcastClient(c);
    }

    private static HazelcastInstance standaloneMember(String cluster, int port) {
        Config c = new Config();
        c.setClusterName(cluster);
        c.setProperty("hazelcast.logging.type", "slf4j");
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.partition.count", "31");
        c.setProperty("hazelcast.shutdownhook.enabled", "false");
        c.getJetConfig().setEnabled(false);
        c.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
        c.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        c.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
        c.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
        return Hazelcast.newHazelcastInstance(c);
    }

    /** One standalone member on a free loopback port, started on first use. */
    static synchronized HazelcastInstance member() {
        if (member == null) {
            Config c = new Config();
            c.setClusterName(TestServices.newName("redeye-spring"));
            c.setProperty("hazelcast.logging.type", "slf4j");
            c.setProperty("hazelcast.phone.home.enabled", "false");
            c.setProperty("hazelcast.partition.count", "31");
            c.setProperty("hazelcast.shutdownhook.enabled", "false");
            c.getJetConfig().setEnabled(false);
            c.getNetworkConfig().setPort(freePort()).setPortAutoIncrement(false);
            c.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
            c.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
            c.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
            RedeyeSerializableFactory.register(c); // native mode, as an application's embedded member would run it
            member = Hazelcast.newHazelcastInstance(c);
        }
        return member;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}

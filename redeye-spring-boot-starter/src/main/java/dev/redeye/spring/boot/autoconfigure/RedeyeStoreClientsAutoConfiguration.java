package dev.redeye.spring.boot.autoconfigure;

import com.hazelcast.core.HazelcastInstance;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider.Description;
import dev.redeye.spring.boot.RedeyeProperties;
import dev.redeye.store.dynamodb.DynamoDbStore;
import dev.redeye.store.hazelcast.HazelcastStore;
import dev.redeye.store.postgres.PostgresStore;
import dev.redeye.store.redis.RedisStore;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Registers a {@link StoreClientSource} for each store module on the class path whose client the application
 * already has as a bean (exactly one candidate): {@code UnifiedJedis} ({@code JedisPooled},
 * {@code JedisCluster}) for {@code redeye-store-redis}, {@code DataSource} for {@code redeye-store-postgres},
 * {@code HazelcastInstance} for {@code redeye-store-hazelcast}, {@code DynamoDbClient} for
 * {@code redeye-store-dynamodb}. Nothing connects here; {@link RedeyeAutoConfiguration} chooses and opens:
 * the options at start, the store itself (PostgreSQL, Hazelcast and DynamoDB stores reach their backend when
 * built) on first use unless {@code redeye.store-open-mode=strict}.
 * Runs after Spring Boot's own DataSource and Hazelcast auto-configuration, whose beans count as the
 * application's. Off when the application defines its own {@link Store} bean.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.hazelcast.HazelcastAutoConfiguration",
        "io.awspring.cloud.autoconfigure.dynamodb.DynamoDbAutoConfiguration"})
@ConditionalOnProperty(prefix = "redeye", name = "enabled", havingValue = "true", matchIfMissing = true)
@ConditionalOnMissingBean(Store.class)
@EnableConfigurationProperties(RedeyeProperties.class)
public class RedeyeStoreClientsAutoConfiguration {

    /** A Redis store over the application's {@code UnifiedJedis}; key prefix from {@code redeye.redis.prefix}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({RedisStore.class, UnifiedJedis.class})
    @ConditionalOnSingleCandidate(UnifiedJedis.class)
    static class Redis {
        @Bean
        StoreClientSource redeyeRedisClientStore(ListableBeanFactory beans, RedeyeProperties properties) {
            // building a RedisStore over a client reaches no server: it is built at once
            return StoreClientSource.over(beans, UnifiedJedis.class, Set.of("redis", "rediss"), null, client -> {
                RedisStore.Builder b = RedisStore.builder(client);
                StoreClientSource.option("redeye.redis.prefix", properties.getRedis().getPrefix(), b::prefix);
                return b::build;
            });
        }
    }

    /** A PostgreSQL store over the application's {@code DataSource}; {@code redeye.postgres.*} options. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({PostgresStore.class, DataSource.class})
    @ConditionalOnSingleCandidate(DataSource.class)
    static class Postgres {
        @Bean
        StoreClientSource redeyePostgresClientStore(ListableBeanFactory beans, RedeyeProperties properties) {
            return StoreClientSource.over(beans, DataSource.class, Set.of("postgresql", "postgres", "jdbc:postgresql"),
                    Description.allCapabilities(PostgresStore.class), client -> {
                        RedeyeProperties.Postgres p = properties.getPostgres();
                        PostgresStore.Builder b = PostgresStore.builder(client);
                        StoreClientSource.option("redeye.postgres.schema", p.getSchema(), b::schema);
                        StoreClientSource.option("redeye.postgres.table", p.getTable(), b::table);
                        StoreClientSource.option("redeye.postgres.create-schema", p.getCreateSchema(),
                                b::createSchema);
                        return b::build;
                    });
        }
    }

    /** A Hazelcast store over the application's {@code HazelcastInstance}; map from {@code redeye.hazelcast.map}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({HazelcastStore.class, HazelcastInstance.class})
    @ConditionalOnSingleCandidate(HazelcastInstance.class)
    static class Hazelcast {
        @Bean
        StoreClientSource redeyeHazelcastClientStore(ListableBeanFactory beans, RedeyeProperties properties) {
            return StoreClientSource.over(beans, HazelcastInstance.class, Set.of("hazelcast"),
                    Description.allCapabilities(HazelcastStore.class), client -> {
                        HazelcastStore.Builder b = HazelcastStore.builder(client);
                        StoreClientSource.option("redeye.hazelcast.map", properties.getHazelcast().getMap(), b::map);
                        return b::build;
                    });
        }
    }

    /** A DynamoDB store over the application's {@code DynamoDbClient}; {@code redeye.dynamodb.*} options. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({DynamoDbStore.class, DynamoDbClient.class})
    @ConditionalOnSingleCandidate(DynamoDbClient.class)
    static class DynamoDb {
        @Bean
        StoreClientSource redeyeDynamoDbClientStore(ListableBeanFactory beans, RedeyeProperties properties) {
            return StoreClientSource.over(beans, DynamoDbClient.class, Set.of("dynamodb"),
                    Description.allCapabilities(DynamoDbStore.class), client -> {
                        RedeyeProperties.DynamoDb p = properties.getDynamodb();
                        DynamoDbStore.Builder b = DynamoDbStore.builder(client);
                        StoreClientSource.option("redeye.dynamodb.table", p.getTable(), b::table);
                        StoreClientSource.option("redeye.dynamodb.create-table", p.getCreateTable(), b::createTable);
                        return b::build;
                    });
        }
    }
}

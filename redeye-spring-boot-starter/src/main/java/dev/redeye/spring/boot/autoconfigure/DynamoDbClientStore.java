package dev.redeye.spring.boot.autoconfigure;

import dev.redeye.api.Store;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Set;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Builds {@code DynamoDbStore.builder(client).table(table).build()} by reflection, so that this module needs
 * neither {@code redeye-store-dynamodb} nor the AWS SDK to compile; both are looked up by name only when the
 * condition of {@link RedeyeStoreClientsAutoConfiguration.DynamoDb} found them on the class path.
 */
final class DynamoDbClientStore {
    static final String STORE = "dev.redeye.store.dynamodb.DynamoDbStore";
    static final String CLIENT = "software.amazon.awssdk.services.dynamodb.DynamoDbClient";

    private DynamoDbClientStore() {
    }

    static StoreClientSource source(ListableBeanFactory beans, String table) {
        ClassLoader loader = DynamoDbClientStore.class.getClassLoader();
        Class<?> clientType = ClassUtils.resolveClassName(CLIENT, loader);
        String name = StoreClientSource.candidate(beans, clientType);
        return new StoreClientSource(Set.of("dynamodb"), name, StoreClientSource.describe(beans, name), () -> {
            Class<?> storeType = ClassUtils.resolveClassName(STORE, loader);
            Object builder = call(method(storeType, "builder", clientType), null, beans.getBean(name));
            StoreClientSource.option("redeye.dynamodb.table", table,
                    t -> call(method(builder.getClass(), "table", String.class), builder, t));
            return (Store) call(method(builder.getClass(), "build"), builder);
        });
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("redeye-store-dynamodb on the class path lacks " + type.getName() + "."
                    + name + ": a version this starter does not know", e);
        }
    }

    /** Invokes, rethrowing what the method threw (an IllegalArgumentException naming the option stays one). */
    private static Object call(Method m, Object target, Object... args) {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}

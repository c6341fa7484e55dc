package dev.redeye.store.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * A {@link HazelcastInstance} whose maps report every call (each one network round trip from a client) to a
 * {@link Hook}, before and after it runs: to count a store's map operations, to pause its thread between two of
 * them (as a GC pause would), or to fail one (as a dropped connection would, before the request left or after
 * the member applied it). Everything else goes to the real instance untouched. Test code only.
 */
final class HookedInstance {
    private HookedInstance() {
    }

    /** What a test does around each map call; {@code getName} is not reported (it never reaches a member). */
    interface Hook {
        /** Runs before the call is sent; throwing here means the request never left. */
        default void before(String map, String method) {
        }

        /** Runs after the call returned; throwing here means the call was applied but its answer was lost. */
        default void after(String map, String method) {
        }
    }

    /** {@code real}, with every map it hands out reporting to {@code hook}. */
    static HazelcastInstance wrap(HazelcastInstance real, Hook hook) {
        return (HazelcastInstance) Proxy.newProxyInstance(HookedInstance.class.getClassLoader(),
                new Class<?>[] {HazelcastInstance.class}, (proxy, m, args) -> {
                    Object r = invoke(real, m, args);
                    return m.getName().equals("getMap") ? hooked((IMap<?, ?>) r, hook) : r;
                });
    }

    private static IMap<?, ?> hooked(IMap<?, ?> real, Hook hook) {
        return (IMap<?, ?>) Proxy.newProxyInstance(HookedInstance.class.getClassLoader(), new Class<?>[] {IMap.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("getName")) {
                        return real.getName();
                    }
                    hook.before(real.getName(), m.getName());
                    Object r = invoke(real, m, args);
                    hook.after(real.getName(), m.getName());
                    return r;
                });
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}

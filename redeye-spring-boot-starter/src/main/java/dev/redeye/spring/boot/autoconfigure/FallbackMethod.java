package dev.redeye.spring.boot.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.springframework.util.ReflectionUtils;

/**
 * The {@code fallbackMethod} of one guarded method, resolved once against the bean's class: every method of that
 * name in the class and its superclasses (any visibility) that takes the guarded method's parameters plus one
 * exception parameter and returns what the guarded method returns, indexed by that exception type. For an
 * exception the fallback chosen is the one whose parameter is the exception's own class or its closest
 * superclass, the rule Resilience4j documents for its {@code fallbackMethod}; the choice per exception class is
 * cached. Thread-safe.
 */
final class FallbackMethod {
    private final String name;
    private final Map<Class<?>, Method> byExceptionType;
    private final Map<Class<?>, Optional<Method>> chosen = new ConcurrentHashMap<>();

    private FallbackMethod(String name, Map<Class<?>, Method> byExceptionType) {
        this.name = name;
        this.byExceptionType = byExceptionType;
    }

    /**
     * The fallback named {@code name} for {@code guarded}, looked up in {@code targetClass}.
     *
     * @throws IllegalStateException naming the expected signature and what was found, if no method fits
     */
    static FallbackMethod resolve(Method guarded, Class<?> targetClass, String name) {
        Class<?>[] params = guarded.getParameterTypes();
        Map<Class<?>, Method> byType = new LinkedHashMap<>();
        List<Method> sameName = new ArrayList<>();
        // subclasses first: a subclass's method wins over a superclass's of the same exception type
        ReflectionUtils.doWithMethods(targetClass, m -> {
            sameName.add(m);
            if (fits(m, params, guarded.getReturnType())) {
                byType.putIfAbsent(m.getParameterTypes()[params.length], m);
            }
        }, m -> m.getName().equals(name) && !m.isBridge() && !m.isSynthetic());
        if (byType.isEmpty()) {
            String expected = guarded.getReturnType().getSimpleName() + " " + name + "("
                    + Arrays.stream(params).map(Class::getSimpleName).map(s -> s + ", ").collect(Collectors.joining())
                    + "<a Throwable type>)";
            String found = sameName.isEmpty() ? "no method of that name"
                    : "only " + sameName.stream().map(FallbackMethod::signature).collect(Collectors.joining(", "));
            throw new IllegalStateException("fallbackMethod '" + name + "' of " + guarded + " must be declared in "
                    + targetClass.getName() + " (or a superclass) as " + expected + "; found " + found);
        }
        byType.values().forEach(ReflectionUtils::makeAccessible);
        return new FallbackMethod(name, Map.copyOf(byType));
    }

    private static boolean fits(Method m, Class<?>[] params, Class<?> returnType) {
        Class<?>[] p = m.getParameterTypes();
        return p.length == params.length + 1
                && Arrays.equals(Arrays.copyOf(p, params.length), params)
                && Throwable.class.isAssignableFrom(p[params.length])
                && returnType.isAssignableFrom(m.getReturnType())
                && (returnType != void.class || m.getReturnType() == void.class);
    }

    private static String signature(Method m) {
        return m.getReturnType().getSimpleName() + " " + m.getName() + "("
                + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
                + ")";
    }

    /** The fallback for {@code error}, if one takes it (never for a {@link VirtualMachineError}). */
    Optional<Method> forError(Throwable error) {
        if (error instanceof VirtualMachineError) {
            return Optional.empty();
        }
        return chosen.computeIfAbsent(error.getClass(), this::closest);
    }

    private Optional<Method> closest(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            Method m = byExceptionType.get(c);
            if (m != null) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    /**
     * Answers {@code error} with the fallback for it: its result, or what it throws.
     *
     * @throws Throwable {@code error} itself if no fallback takes it, else what the fallback throws
     */
    Object recover(Object target, Object[] args, Throwable error) throws Throwable {
        Optional<Method> m = forError(error);
        if (m.isEmpty()) {
            throw error;
        }
        Object[] withError = Arrays.copyOf(args, args.length + 1);
        withError[args.length] = error;
        try {
            return m.get().invoke(target, withError);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Override
    public String toString() {
        return "fallbackMethod '" + name + "' for " + byExceptionType.keySet().stream().map(Class::getSimpleName)
                .collect(Collectors.joining(", "));
    }
}

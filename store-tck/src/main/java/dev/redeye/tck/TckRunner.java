package dev.redeye.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import dev.redeye.spi.AtomicUpdates;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import dev.redeye.spi.TrialClaims;
import dev.redeye.spi.support.StoreUris;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the TCK outside a build, through the JUnit Platform Launcher, and returns a {@link TckReport}. This is
 * what {@code redeye tck --store URI} calls:
 *
 * <pre>{@code
 * TckReport report = TckRunner.run("redis://127.0.0.1:6379");
 * System.out.print(report.format());
 * System.exit(report.successful() ? 0 : 1);
 * }</pre>
 *
 * <p>A run opens many clients (two or more per rule) and takes a few seconds to a minute depending on the
 * store; rules run one after another on the calling thread's launcher. Runs are independent and may happen
 * concurrently. The Jupiter engine must be on the classpath (this module brings it at runtime scope).
 */
public final class TckRunner {
    /** The JUnit configuration parameter (and system property) holding the store URI of {@link UriStoreTck}. */
    public static final String URI_PARAMETER = "redeye.tck.uri";
    /**
     * The JUnit configuration parameter (and system property) setting how long, in ms, feed and expiry rules
     * wait for what should happen (default 10000). Raise it for a slow backend; a passing rule never waits
     * this long.
     */
    public static final String PATIENCE_PARAMETER = "redeye.tck.patience";
    /**
     * The JUnit configuration parameter (and system property) listing the capabilities the store must declare
     * for R0.1 when run through {@link #run(String)} or {@link #run(Supplier)}: comma-separated simple names
     * ({@code AtomicUpdates,TrialClaims,TransitionFeed}), {@code all}, or {@code none} for
     * a store meant to be plain. Unset, R0.1 expects nothing but fails a store that declares no capability at
     * all, since every group but R1 would then be skipped.
     */
    public static final String EXPECT_PARAMETER = "redeye.tck.expect";
    /**
     * The JUnit configuration parameter (and system property) seeding the random scenarios of the model rules
     * (R8): the same seed draws the same scenarios, so a failure is run again with the seed its message
     * names. Default {@value #DEFAULT_SEED}: every run draws the same scenarios unless told otherwise.
     */
    public static final String SEED_PARAMETER = "redeye.tck.seed";
    /**
     * The JUnit configuration parameter (and system property) setting how many random scenarios the model
     * rules run: R8.1 runs this many sequences, R8.3 this many concurrent scenarios, R8.2 (which waits in
     * real time) a fifth of it, at least one. Default {@value #DEFAULT_TRIES}.
     */
    public static final String TRIES_PARAMETER = "redeye.tck.tries";
    /** The seed of the model rules unless {@link #SEED_PARAMETER} says otherwise. */
    public static final long DEFAULT_SEED = 20261130L;
    /** How many scenarios the model rules run unless {@link #TRIES_PARAMETER} says otherwise. */
    public static final int DEFAULT_TRIES = 100;
    private static final List<Class<?>> CAPABILITIES = List.of(AtomicUpdates.class, TrialClaims.class, TransitionFeed.class);
    /** The configuration parameter naming a registered supplier of {@link SuppliedStoreTck}. */
    static final String SUPPLIER_PARAMETER = "redeye.tck.supplier";

    private static final Map<String, Supplier<? extends Store>> SUPPLIERS = new ConcurrentHashMap<>();

    private TckRunner() {
    }

    /**
     * Runs every rule against the store the URI opens ({@code Stores.open(uri)} for each client).
     *
     * @throws NullPointerException     if {@code uri} is null
     * @throws IllegalArgumentException if the URI has no scheme
     */
    public static TckReport run(String uri) {
        return run(uri, EnumSet.allOf(Rule.class));
    }

    /**
     * Runs the given rules against the store the URI opens.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the URI has no scheme or {@code rules} is empty
     */
    public static TckReport run(String uri, Collection<Rule> rules) {
        return run(uri, rules, Map.of());
    }

    /**
     * Runs the given rules against the store the URI opens, with extra JUnit configuration parameters (for
     * example {@link #EXPECT_PARAMETER} or {@link #PATIENCE_PARAMETER}).
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the URI has no scheme, {@code rules} is empty, or
     *                                  {@link #EXPECT_PARAMETER} names an unknown capability
     */
    public static TckReport run(String uri, Collection<Rule> rules, Map<String, String> configuration) {
        Objects.requireNonNull(uri, "uri");
        StoreUris.scheme(uri); // fails early, redacted, on a URI without a scheme
        Map<String, String> parameters = new HashMap<>(Objects.requireNonNull(configuration, "configuration"));
        expected(parameters.get(EXPECT_PARAMETER)); // fails early on a bad name
        parameters.put(URI_PARAMETER, uri);
        return launch(UriStoreTck.class, parameters, rules, StoreUris.redact(uri));
    }

    /**
     * The capabilities named by an {@link #EXPECT_PARAMETER} value; empty for {@code null}, blank or
     * {@code none}.
     *
     * @throws IllegalArgumentException naming an unknown capability and the valid names, or for {@code none}
     *                                  listed with a capability
     */
    public static Set<Class<?>> expected(String list) {
        Set<Class<?>> out = new LinkedHashSet<>();
        if (list == null || list.isBlank()) {
            return out;
        }
        if (list.trim().equalsIgnoreCase("none")) {
            return out;
        }
        for (String name : list.split(",")) {
            String n = name.trim();
            if (n.isEmpty()) {
                continue;
            }
            if (n.equalsIgnoreCase("none")) {
                throw new IllegalArgumentException(EXPECT_PARAMETER + ": 'none' cannot be listed with capabilities ("
                        + list + ")");
            }
            if (n.equalsIgnoreCase("all")) {
                out.addAll(CAPABILITIES);
                continue;
            }
            Class<?> found = CAPABILITIES.stream().filter(c -> c.getSimpleName().equalsIgnoreCase(n)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(EXPECT_PARAMETER + ": unknown capability '" + n
                            + "' (expected all, none, or some of AtomicUpdates, TrialClaims, "
                            + "TransitionFeed)"));
            out.add(found);
        }
        return out;
    }

    /** {@link #EXPECT_PARAMETER} from the configuration, else from the system property. */
    static Set<Class<?>> expected(ExtensionContext context) {
        return expected(expectParameter(context));
    }

    /** Whether {@link #EXPECT_PARAMETER} was given (as a configuration parameter or system property). */
    static boolean expectationStated(ExtensionContext context) {
        String v = expectParameter(context);
        return v != null && !v.isBlank();
    }

    private static String expectParameter(ExtensionContext context) {
        return context.getConfigurationParameter(EXPECT_PARAMETER).orElse(System.getProperty(EXPECT_PARAMETER));
    }

    /**
     * Runs every rule over clients from {@code clients}: each call must return a new independent client of
     * the same shared data (two clients stand for two processes). The TCK closes every client it gets. The
     * report names the supplier by its {@code toString()} (a lambda is named generically); the optional hooks
     * cannot be passed this way, so R1.7 and R6.8 are skipped.
     *
     * @throws NullPointerException if {@code clients} is null
     */
    public static TckReport run(Supplier<? extends Store> clients) {
        return run(clients, EnumSet.allOf(Rule.class));
    }

    /**
     * Runs the given rules over clients from {@code clients}.
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code rules} is empty
     */
    public static TckReport run(Supplier<? extends Store> clients, Collection<Rule> rules) {
        return run(clients, rules, Map.of());
    }

    /**
     * Runs the given rules over clients from {@code clients}, with extra JUnit configuration parameters (for
     * example {@link #PATIENCE_PARAMETER} or {@link #EXPECT_PARAMETER}).
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code rules} is empty or {@link #EXPECT_PARAMETER} names an unknown
     *                                  capability
     */
    public static TckReport run(Supplier<? extends Store> clients, Collection<Rule> rules,
            Map<String, String> configuration) {
        Objects.requireNonNull(clients, "clients");
        Map<String, String> parameters = new HashMap<>(Objects.requireNonNull(configuration, "configuration"));
        expected(parameters.get(EXPECT_PARAMETER)); // fails early on a bad name
        String id = UUID.randomUUID().toString();
        parameters.put(SUPPLIER_PARAMETER, id);
        SUPPLIERS.put(id, clients);
        try {
            Class<?> type = clients.getClass();
            String target = type.isSynthetic() || type.isAnonymousClass() || type.getName().contains("$$Lambda")
                    ? "clients from a Supplier<Store>" : clients.toString();
            return launch(SuppliedStoreTck.class, parameters, rules, target);
        } finally {
            SUPPLIERS.remove(id);
        }
    }

    /**
     * Runs every rule of {@code tck}, a {@link StoreTck} subclass with a public no-argument constructor, and
     * returns the report: the one path that gives both the implementer's hooks ({@code corrupt},
     * {@code interruptFeed}, {@code cleanup}) and the report.
     *
     * @throws NullPointerException if {@code tck} is null
     */
    public static TckReport run(Class<? extends StoreTck> tck) {
        return run(tck, EnumSet.allOf(Rule.class), Map.of());
    }

    /**
     * Runs the given rules of {@code tck} (a {@link StoreTck} subclass with a public no-argument constructor)
     * with extra JUnit configuration parameters (for example {@link #SEED_PARAMETER}, {@link #TRIES_PARAMETER},
     * {@link #PATIENCE_PARAMETER}).
     *
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code rules} is empty
     */
    public static TckReport run(Class<? extends StoreTck> tck, Collection<Rule> rules,
            Map<String, String> configuration) {
        Objects.requireNonNull(tck, "tck");
        return launch(tck, new HashMap<>(Objects.requireNonNull(configuration, "configuration")), rules,
                tck.getName());
    }

    /**
     * Runs every rule against the store named by the first argument and prints the report; exits 0 when no
     * rule failed, 1 when one did, 2 on a usage error. The store module must be on the classpath:
     * {@code java -cp <tck, engine, store jars> dev.redeye.tck.TckRunner redis://127.0.0.1:6379}.
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: TckRunner <store URI>   (for example redis://127.0.0.1:6379)");
            System.exit(2);
            return;
        }
        TckReport report = run(args[0]);
        System.out.print(report.format());
        System.exit(report.successful() ? 0 : 1);
    }

    static Supplier<? extends Store> supplier(String id) {
        return SUPPLIERS.get(id);
    }

    static TckReport launch(Class<?> testClass, Map<String, String> parameters, Collection<Rule> rules,
            String target) {
        Objects.requireNonNull(rules, "rules");
        if (rules.isEmpty()) {
            throw new IllegalArgumentException("no rules selected");
        }
        EnumSet<Rule> selected = EnumSet.copyOf(rules);
        Map<String, String> quiet = new HashMap<>(parameters);
        quiet.put(TckReportListener.REPORT_PARAMETER, "false"); // the caller gets the report; no second one printed
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request()
                .filters(EngineFilter.includeEngines("junit-jupiter"))
                .configurationParameters(quiet);
        for (Rule r : selected) {
            request.selectors(selectMethod(testClass, testMethod(testClass, r)));
        }
        RuleResults collector = new RuleResults();
        long start = System.nanoTime();
        try (LauncherSession session = LauncherFactory.openSession()) {
            session.getLauncher().execute(request.build(), collector);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return collector.report(target, selected, elapsed);
    }

    /** The test method of {@code rule} in the class hierarchy of {@code testClass}, its rule groups included. */
    static Method testMethod(Class<?> testClass, Rule rule) {
        for (Class<?> c : hierarchy(testClass)) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.isAnnotationPresent(Test.class) && m.getName().startsWith(rule.methodPrefix())) {
                    return m;
                }
            }
        }
        throw new IllegalStateException("no test method for rule " + rule.id() + " in " + testClass.getName());
    }

    /** {@code type}, its superclasses and every interface they implement (the rule groups), each once. */
    static List<Class<?>> hierarchy(Class<?> type) {
        List<Class<?>> out = new ArrayList<>();
        Deque<Class<?>> todo = new ArrayDeque<>();
        todo.add(type);
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            if (c == Object.class || out.contains(c)) {
                continue;
            }
            out.add(c);
            if (c.getSuperclass() != null) {
                todo.add(c.getSuperclass());
            }
            todo.addAll(Arrays.asList(c.getInterfaces()));
        }
        return out;
    }
}

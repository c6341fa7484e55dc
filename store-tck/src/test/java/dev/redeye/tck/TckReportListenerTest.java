package dev.redeye.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.InMemoryStore;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.ForwardingStore;
import dev.redeye.tck.TckReport.Status;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The report printed at the end of a JUnit run of a {@link StoreTck} subclass (what {@code mvn test} shows),
 * and {@link TckRunner#run(Class)}, the path that gives both the hooks and the report.
 */
class TckReportListenerTest {
    private static final InMemoryStore BACKING = new InMemoryStore();

    /** A store that declares nothing, by mistake (its implementer expects the atomic capabilities). */
    static class NothingDeclaredTck extends StoreTck {
        @Override
        protected Store newClient() {
            return new ForwardingStore(BACKING.newClient()) {
                @Override
                public <C> Optional<C> capability(Class<C> type) {
                    return Optional.empty();
                }
            };
        }

        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of(dev.redeye.spi.AtomicUpdates.class);
        }
    }

    /** The same store, meant to be plain, and said so: {@code expectedCapabilities()} is {@code Set.of()}. */
    static class PlainByDesignTck extends NothingDeclaredTck {
        @Override
        protected Set<Class<?>> expectedCapabilities() {
            return Set.of();
        }
    }

    @AfterAll
    static void close() {
        BACKING.close();
    }

    @Test
    void theListenerIsRegisteredForTheJUnitPlatform() {
        boolean found = ServiceLoader.load(TestExecutionListener.class).stream()
                .anyMatch(p -> p.type() == TckReportListener.class);
        assertTrue(found, "META-INF/services/org.junit.platform.launcher.TestExecutionListener must list it");
    }

    @Test
    void aRunOfAStoreTckSubclassEndsWithTheRuleReport() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request()
                .configurationParameters(Map.of(TckReportListener.REPORT_PARAMETER, "false"));
        for (Rule r : EnumSet.of(Rule.R0_1, Rule.R1_1, Rule.R2_1, Rule.R3_1, Rule.R4_1, Rule.R5_1, Rule.R6_1)) {
            request.selectors(selectMethod(NothingDeclaredTck.class, TckRunner.testMethod(NothingDeclaredTck.class, r)));
        }
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            LauncherFactory.create().execute(request.build(), new TckReportListener(out, true));
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("redeye store TCK against " + NothingDeclaredTck.class.getName() + " (7 rules"), text);
        assertTrue(text.contains("FAILED   R0.1"), text);
        assertTrue(text.contains("store does not declare AtomicUpdates although expectedCapabilities() lists it"),
                text);
        assertTrue(text.contains("PASSED   R1.1"), text);
        assertTrue(text.contains("SKIPPED  R4.1"), text);
        assertTrue(text.contains("    R4: store does not declare TrialClaims"), text);
        assertTrue(text.contains("WARNING: THE STORE DECLARES NO CAPABILITY (AtomicUpdates, TrialClaims, "
                + "TransitionFeed)"), text);
        assertTrue(text.contains("1 passed, 1 failed, 5 skipped"), text);
    }

    @Test
    void aStoreThatIsPlainByDesignGetsNoAlarm() {
        TckReport report = TckRunner.run(PlainByDesignTck.class, EnumSet.of(Rule.R0_1, Rule.R1_1, Rule.R2_1, Rule.R4_1,
                Rule.R5_1, Rule.R6_1), Map.of());
        String text = report.format();
        assertEquals(Status.PASSED, report.result("R0.1").status(), text);
        assertTrue(!text.contains("THE STORE DECLARES NO CAPABILITY"), text);
        assertTrue(text.contains("The store declares no capability, as its implementer expects (R0.1 passed): only "
                + "the plain-store rules apply."), text);
        assertTrue(text.contains("2 passed, 0 failed, 4 skipped"), text);
    }

    @Test
    void tckRunnerRunsASubclassWithItsHooks() {
        TckReport report = TckRunner.run(NothingDeclaredTck.class, EnumSet.of(Rule.R0_1, Rule.R1_7, Rule.R1_1),
                Map.of());
        assertEquals(NothingDeclaredTck.class.getName(), report.target());
        assertEquals(Status.FAILED, report.result("R0.1").status(), report.format());
        assertEquals(Status.PASSED, report.result("R1.1").status(), report.format());
        assertTrue(report.result("R1.7").message().contains("corrupt"), report.format());
        assertEquals(Set.of(), report.undeclaredCapabilities(), "no rule needing a capability was selected");
    }
}

package dev.redeye.cli;

import dev.redeye.InMemoryStore;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import dev.redeye.tck.Rule;
import dev.redeye.tck.TckReport;
import dev.redeye.tck.TckRunner;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code redeye tck --store URI}: runs the store TCK ({@link TckRunner}, through the JUnit Platform
 * launcher) against the store behind a URI and prints the rule report; exit 1 if any rule failed. The model
 * rules (R8) draw {@code --tries} random scenarios from {@code --seed}; a failing sequence is printed shrunk,
 * as Java to replay, with the seed that draws it again.
 *
 * <p>{@code memory:} is run over one {@link InMemoryStore} with {@linkplain InMemoryStore#newClient() a new
 * client} per TCK client, since each {@code Stores.open("memory:")} is a separate, empty store. Any other URI
 * is opened once first, to fail fast with one line when the store is unreachable, then once per TCK client.
 * Cost: seconds to a minute, many clients (closed by the TCK), keys under unique names.
 */
@Command(name = "tck", mixinStandardHelpOptions = true,
        description = {"Run the store contract suite (TCK) against the store behind a URI and print the rule "
            + "report (exit 1 if a rule failed).",
            "Checks your own store too: add its jar with the launcher's --classpath (./redeye --classpath "
            + "my-store.jar tck --store mystore://...) or REDEYE_CLASSPATH, or run java -cp "
            + "redeye.jar:my-store.jar dev.redeye.cli.RedeyeCommand tck ...",
            "The model rules (R8) run random scenarios from a fixed seed; a failure prints the shrunk sequence "
            + "as Java to replay and the seed that draws it again."},
        footer = {"", "Examples:", "  redeye tck --store memory:", "  redeye tck --store redis://127.0.0.1:6379",
            "  redeye tck --store postgresql://127.0.0.1:5432/test --rule R2.7 --rule R4.4",
            "  redeye tck --store redis://127.0.0.1:6379 --expect all",
            "  redeye tck --store redis://127.0.0.1:6379 --rule R8.1 --tries 2000 --seed 7"})
public final class TckCommand extends StoreCommand {

    @Option(names = "--rule", paramLabel = "ID", split = ",",
            description = "Run only these rules (e.g. R2.7, repeatable or comma-separated; default: all).")
    List<String> ruleIds = new ArrayList<>();

    @Option(names = "--expect", paramLabel = "CAPABILITIES",
            description = "Capabilities the store must declare (rule R0.1): comma-separated AtomicUpdates, "
                + "TrialClaims, TransitionFeed, or all; none for a store meant to offer only "
                + "get/put/delete (without it, a store declaring nothing fails R0.1).")
    String expect;

    @Option(names = "--tries", paramLabel = "N",
            description = "Random scenarios of each model rule: R8.1 sequences and R8.3 concurrent scenarios (R8.2, "
                + "which waits in real time, runs a fifth; default: " + TckRunner.DEFAULT_TRIES + ").")
    Integer tries;

    @Option(names = "--seed", paramLabel = "S",
            description = "Seed of the model rules' scenarios (default: " + TckRunner.DEFAULT_SEED + "); a failure "
                + "prints the seed that draws it again.")
    Long seed;

    /** Creates the command (picocli calls this). */
    public TckCommand() {
    }

    @Override
    public Integer call() {
        EnumSet<Rule> rules = selectedRules();
        Map<String, String> configuration = configuration();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        TckReport report;
        if (StoreOption.isMemory(store.uri())) {
            try (InMemoryStore shared = new InMemoryStore()) {
                report = TckRunner.run(new MemoryClients(shared), rules, configuration);
            }
        } else {
            requireProvider(store.uri());
            // One client first: an unreachable store or unknown scheme is one clear line, not 50 failed rules.
            try (Store probe = store.open(null)) {
                probe.get("redeye-tck-probe");
            }
            err.println("running the TCK against " + store.redacted() + " ...");
            err.flush();
            report = TckRunner.run(store.uri(), rules, configuration);
        }
        out.print(report.format());
        out.flush();
        return report.successful() ? 0 : RedeyeCommand.EXIT_FAILURE;
    }

    /**
     * Fails with the way to register a provider when no store provider on the class path handles the URI's
     * scheme: the TCK is for a store of one's own, which no store module of redeye's provides.
     */
    private void requireProvider(String uri) {
        String lower = uri.toLowerCase(Locale.ROOT);
        Set<String> schemes = Stores.schemes();
        if (schemes.stream().anyMatch(sc -> lower.startsWith(sc.toLowerCase(Locale.ROOT) + ":"))) {
            return;
        }
        String scheme;
        try {
            scheme = StoreUris.scheme(uri);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        throw new ParameterException(spec.commandLine(), "no store provider for scheme '" + scheme + "' on the "
                + "class path (schemes found: " + String.join(", ", schemes) + "). To check a store of your own, put "
                + "its jar on the class path (./redeye --classpath my-store.jar tck ..., or REDEYE_CLASSPATH) and "
                + "register its provider: a file META-INF/services/dev.redeye.spi.StoreProvider in the jar naming "
                + "your StoreProvider class, whose schemes() includes \"" + scheme + "\"");
    }

    private Map<String, String> configuration() {
        Map<String, String> c = new HashMap<>();
        if (expect != null) {
            try {
                TckRunner.expected(expect);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--expect: " + e.getMessage());
            }
            c.put(TckRunner.EXPECT_PARAMETER, expect);
        }
        if (tries != null) {
            if (tries < 1 || tries > 1_000_000) {
                throw new ParameterException(spec.commandLine(), "--tries must be within 1 .. 1000000, was " + tries);
            }
            c.put(TckRunner.TRIES_PARAMETER, Integer.toString(tries));
        }
        if (seed != null) {
            c.put(TckRunner.SEED_PARAMETER, Long.toString(seed));
        }
        return c;
    }

    private EnumSet<Rule> selectedRules() {
        if (ruleIds.isEmpty()) {
            return EnumSet.allOf(Rule.class);
        }
        EnumSet<Rule> rules = EnumSet.noneOf(Rule.class);
        for (String id : ruleIds) {
            try {
                rules.add(Rule.byId(id));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        return rules;
    }

    /** New clients of one in-memory store, named for the report. */
    private static final class MemoryClients implements Supplier<Store> {
        private final InMemoryStore shared;

        MemoryClients(InMemoryStore shared) {
            this.shared = shared;
        }

        @Override
        public Store get() {
            return shared.newClient();
        }

        @Override
        public String toString() {
            return "memory: (one InMemoryStore, a new client per TCK client)";
        }
    }
}

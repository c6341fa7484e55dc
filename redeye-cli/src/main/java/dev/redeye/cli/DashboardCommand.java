package dev.redeye.cli;

import dev.redeye.api.InvalidOptionException;
import dev.redeye.api.Policy;
import dev.redeye.dashboard.DashboardServer;
import dev.redeye.dashboard.FleetView;
import dev.redeye.spi.OperationListing;
import dev.redeye.spi.Store;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code redeye dashboard --store URI}: a live web view of every breaker in the store ({@link FleetView} behind
 * a {@link DashboardServer}): one tile per operation, updated from the store's feed over Server-Sent Events, the
 * last hour's transitions, a name filter, the operator's actions behind a token printed at start, and a
 * Hystrix-compatible stream at {@code /hystrix.stream}. The store is read once per {@code --refresh} whatever
 * the number of browsers, and opened without creating anything (as {@code status} does).
 */
@Command(name = "dashboard", mixinStandardHelpOptions = true,
        description = {"Serve a live web view of every breaker in a store: tiles by state, the last hour's "
            + "transitions, force-open / half-open / reset behind a token, and /hystrix.stream for Hystrix "
            + "Dashboard.",
            "Lists the operations when the store can (every store shipped: memory:, PostgreSQL, Redis, DynamoDB, "
                + "Hazelcast); else name them (OP...). Listens on "
                + "127.0.0.1 unless --bind says otherwise. Ctrl-C to stop."},
        footer = {"", "Examples:", "  redeye dashboard --store postgresql://127.0.0.1:5432/app",
            "  redeye dashboard --store redis://127.0.0.1:6379 --read-only --port 9090"})
public final class DashboardCommand extends StoreCommand {

    @Mixin
    PolicyOptions policyOptions;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080",
            description = "Port to listen on (default: ${DEFAULT-VALUE}; 0: a free one).")
    int port;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}, this machine only).")
    String bind;

    @Option(names = "--read-only", description = "Refuse every action (no token is printed).")
    boolean readOnly;

    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:REDEYE_DASHBOARD_TOKEN}",
            description = "The operator token actions need (default: $REDEYE_DASHBOARD_TOKEN, else a random one, "
                + "printed at start).")
    String token;

    @Option(names = "--refresh", paramLabel = "DURATION", converter = DurationConverter.class,
            defaultValue = "5s", description = "How often the whole store is read again, for counters that change "
                + "without a transition (default: ${DEFAULT-VALUE}).")
    Duration refresh;

    @Option(names = "--failure-threshold", paramLabel = "N", description = "The application's failureThreshold, "
            + "shown against the failures (default: the library's).")
    Integer failureThreshold;

    @Option(names = "--error-rate-threshold", paramLabel = "X", description = "The application's "
            + "errorRateThreshold, 0 to 1 (default: the library's).")
    Double errorRateThreshold;

    @Option(names = "--failure-rate-threshold", paramLabel = "PERCENT", description = "The application's "
            + "failureRateThreshold of a sliding window (default: the library's).")
    Double failureRateThreshold;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Stop after this long (for scripts; default: until Ctrl-C).")
    Duration timeout;

    @Parameters(arity = "0..*", paramLabel = "OP", description = "Operations to show, for a store that cannot "
            + "list them (one without OperationListing); ignored by one that can.")
    List<String> operations;

    /** Creates the command (picocli calls this). */
    public DashboardCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        if (port < 0 || port > 65_535) {
            throw new ParameterException(spec.commandLine(), "--port must be 0 to 65535, was " + port);
        }
        if (refresh.isZero() || refresh.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--refresh must be positive, was " + refresh);
        }
        Policy policy = policy();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<String> ops = operations == null ? List.of() : operations;
        try (Store s = store.openWithoutCreating(err)) {
            if (s.capability(OperationListing.class).isEmpty() && ops.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "this store cannot list its operations (it has no "
                        + "OperationListing): name the operations to show, e.g. redeye dashboard --store "
                        + store.redacted() + " payment-gateway inventory");
            }
            String secret = readOnly ? null : token == null || token.isBlank() ? DashboardServer.newToken()
                    : token.trim();
            try (FleetView view = new FleetView(s, policy, ops, refresh, Clock.systemUTC())) {
                view.start();
                CountDownLatch stop = new CountDownLatch(1);
                try (DashboardServer server = DashboardServer.start(view, bind, port, secret, readOnly)) {
                    Thread hook = new Thread(() -> {
                        server.close();
                        stop.countDown();
                    }, "redeye-dashboard-shutdown");
                    Runtime.getRuntime().addShutdownHook(hook);
                    out.println("redeye dashboard: " + server.url() + "  (store " + store.redacted() + ")");
                    out.println(readOnly ? "read-only: operator actions are refused"
                            : "operator token: " + secret + "  (the page asks for it before force-open, "
                                    + "half-open and reset)");
                    out.println("Hystrix stream: " + server.url() + "hystrix.stream");
                    out.flush();
                    try {
                        if (timeout != null) {
                            stop.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
                        } else {
                            stop.await();
                        }
                    } finally {
                        try {
                            Runtime.getRuntime().removeShutdownHook(hook);
                        } catch (IllegalStateException | IllegalArgumentException shuttingDown) {
                            // the JVM is exiting: the hook stops the server
                        }
                    }
                }
            }
        }
        return 0;
    }

    private Policy policy() {
        Policy timing = policyOptions.policy();
        try {
            Policy.Builder b = timing.toBuilder();
            if (failureThreshold != null) {
                b.failureThreshold(failureThreshold);
            }
            if (errorRateThreshold != null) {
                b.errorRateThreshold(errorRateThreshold);
            }
            if (failureRateThreshold != null) {
                b.failureRateThreshold(failureRateThreshold);
            }
            return b.build();
        } catch (InvalidOptionException e) {
            throw OptionErrors.usage(spec, e);
        }
    }
}

package dev.redeye.cli;

import dev.redeye.api.TransitionEvent;
import dev.redeye.spi.Store;
import dev.redeye.spi.TransitionFeed;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code redeye watch --store URI}: prints every transition the store's {@link TransitionFeed} delivers, as
 * it happens, until interrupted, or until {@code --count} events or {@code --timeout} for scripts.
 *
 * <p>Needs the store's {@code TransitionFeed} capability and says so, with exit 1, when the store has none.
 * Feed gaps (a dropped connection) are reported on stderr. Resources: one feed subscription and the store's
 * client, both closed on exit, including on Ctrl-C (a shutdown hook).
 */
@Command(name = "watch", mixinStandardHelpOptions = true,
        description = {"Print breaker transitions from the store's feed as they happen (Ctrl-C to stop).",
            "Works with stores that have a transition feed (memory:, redis://, postgresql://)."},
        footer = {"", "Examples:", "  redeye watch --store redis://127.0.0.1:6379",
            "  redeye watch --store redis://127.0.0.1:6379 payment-gateway",
            "  redeye watch --store postgresql://127.0.0.1:5432/app --count 1 --timeout 30s --json"})
public final class WatchCommand extends StoreCommand {

    @Option(names = "--count", paramLabel = "N",
            description = "Stop after N events (exit 1 if --timeout passes first).")
    Integer count;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Stop after this long (e.g. 30s).")
    Duration timeout;

    @Option(names = "--json", description = "Print one JSON object per event.")
    boolean json;

    @Parameters(arity = "0..*", paramLabel = "OP",
            description = "Only show transitions of these operations (default: every operation in the store).")
    List<String> operations;

    /** Creates the command (picocli calls this). */
    public WatchCommand() {
    }

    /** One printed event, in its JSON form. */
    public record WatchedEvent(String at, String operation, String kind, String from, String to, long version,
            int failures, boolean open, boolean forced, long openedAt, int openCount) {

        static WatchedEvent of(TransitionEvent e, Instant at) {
            return new WatchedEvent(at.toString(), e.operation(), e.kind().wireName(), e.from().name(),
                    e.to().name(), e.version(), e.state().failures(), e.state().open(), e.state().forced(),
                    e.state().openedAt(), e.state().openCount());
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        if (count != null && count < 1) {
            throw new ParameterException(spec.commandLine(), "--count must be >= 1, was " + count);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try (Store s = store.open(err)) {
            // Subscribing to an unreachable store would just retry in the background: fail fast instead.
            s.get("redeye-watch-probe");
            Optional<TransitionFeed> feed = s.capability(TransitionFeed.class);
            if (feed.isEmpty()) {
                err.println(spec.qualifiedName() + ": error: the store at " + store.redacted()
                        + " has no transition feed (it does not offer the TransitionFeed capability): nothing to watch");
                err.flush();
                return RedeyeCommand.EXIT_FAILURE;
            }
            Set<String> only = operations == null || operations.isEmpty() ? null : Set.copyOf(operations);
            CountDownLatch done = new CountDownLatch(count == null ? 1 : count);
            AtomicLong seen = new AtomicLong();
            Object printLock = new Object();
            Thread hook = new Thread(s::close, "redeye-watch-shutdown");
            try (TransitionFeed.Subscription sub = feed.get().subscribe(e -> {
                if (only != null && !only.contains(e.operation())) {
                    return;
                }
                Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
                synchronized (printLock) {
                    out.println(json ? Json.line(WatchedEvent.of(e, at)) : format(e, at));
                    out.flush();
                }
                seen.incrementAndGet();
                if (count != null) {
                    done.countDown();
                }
            }, () -> {
                synchronized (printLock) {
                    err.println("# feed gap: events may have been missed; the store is reconnecting");
                    err.flush();
                }
            })) {
                Runtime.getRuntime().addShutdownHook(hook);
                err.println("watching " + store.redacted() + (count != null ? " for " + count + " event(s)" : "")
                        + (timeout != null ? " for at most " + DurationConverter.format(timeout) : "")
                        + (count == null && timeout == null ? " (Ctrl-C to stop)" : ""));
                err.flush();
                boolean completed;
                if (timeout != null) {
                    completed = done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
                } else {
                    done.await();
                    completed = true;
                }
                if (count != null && !completed) {
                    err.println(spec.qualifiedName() + ": error: " + seen.get() + " of " + count
                            + " event(s) before the timeout of " + DurationConverter.format(timeout));
                    err.flush();
                    return RedeyeCommand.EXIT_FAILURE;
                }
                return 0;
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException | IllegalArgumentException shuttingDownOrNeverAdded) {
                    // the JVM is exiting (the hook closes the store) or the hook was never added
                }
            }
        }
    }

    static String format(TransitionEvent e, Instant at) {
        return at + "  " + Table.printable(e.operation()) + "  " + e.from() + " -> " + e.to() + "  ("
                + e.kind().wireName() + ", version " + e.version() + ", failures " + e.state().failures() + ")";
    }
}

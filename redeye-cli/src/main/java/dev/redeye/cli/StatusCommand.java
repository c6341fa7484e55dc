package dev.redeye.cli;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.spi.Store;
import dev.redeye.spi.Transitions;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code redeye status --store URI OP...}: the state of each named operation as the store holds it, as a
 * table or JSON. One {@code get} per operation; nothing is written, nothing created (the store is opened with
 * {@link StoreOption#openWithoutCreating}, so a PostgreSQL or DynamoDB store does not create its tables). An
 * operation the store holds no state for is named on stderr as an unknown operation, and the command then exits
 * 1 after printing the others.
 *
 * <p>The status shown is the nominal one (no jitter): an open breaker is HALF_OPEN once
 * {@code openedAt + min(resetTimeout * backoffMultiplier ^ openCount, maxResetTimeout)} has passed, so the
 * application's timing options must be given when they differ from the defaults.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"Show the state of breakers in a store: status, failures, opened at, retry after, version.",
            "The store SPI cannot list keys, so name every operation to show. An operation the store holds no "
                + "state for is reported as unknown (exit 1). Reads only: creates no key, table or schema."},
        footer = {"", "Example:", "  redeye status --store redis://127.0.0.1:6379 payment-gateway inventory"})
public final class StatusCommand extends StoreCommand {

    @Mixin
    PolicyOptions policyOptions;

    @Option(names = "--json", description = "Print a JSON array instead of a table.")
    boolean json;

    @Parameters(arity = "1..*", paramLabel = "OP", description = "Operation names to show (required: the store "
            + "cannot list them).")
    List<String> operations;

    /** Creates the command (picocli calls this). */
    public StatusCommand() {
    }

    /** One operation's state as printed: the JSON form of a row. */
    public record OperationStatus(String operation, String status, boolean stored, int failures,
            Long openedAt, String openedAtIso, Long retryAfterMs, long version, boolean open, boolean forced,
            int openCount, int trialSuccesses, double errorRate, long samples, long lastFailureAt, String mode,
            String window, Integer windowCalls, Integer windowFailures, Integer windowSlowCalls) {
    }

    @Override
    public Integer call() {
        Policy policy = policyOptions.policy();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<OperationStatus> rows = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        try (Store s = store.openWithoutCreating(err)) {
            for (String op : operations) {
                Optional<BreakerState> state = s.get(op);
                if (state.isEmpty()) {
                    unknown.add(op);
                } else {
                    rows.add(describe(op, state, policy, System.currentTimeMillis()));
                }
            }
        }
        if (json) {
            out.println(Json.pretty(rows));
        } else if (!rows.isEmpty()) {
            Table t = new Table("OPERATION", "STATUS", "FAILURES", "OPENED AT", "RETRY AFTER", "VERSION");
            for (OperationStatus r : rows) {
                t.row(r.operation(), r.status() + ForceCommands.mode(r.mode()), r.stored() ? failures(r) : "-",
                        r.openedAtIso() == null ? "-" : r.openedAtIso(), retryText(r),
                        r.stored() ? r.version() : "- (no state)");
            }
            out.print(t.render());
        }
        out.flush();
        for (String op : unknown) {
            err.println(spec.qualifiedName() + ": unknown operation '" + Table.printable(op) + "': the store holds no "
                    + "state for it (no breaker recorded a failure or a change of it, or its state expired); check "
                    + "the name and the store's prefix, schema or table");
        }
        err.flush();
        return unknown.isEmpty() ? 0 : RedeyeCommand.EXIT_FAILURE;
    }

    static OperationStatus describe(String op, Optional<BreakerState> stored, Policy policy, long now) {
        BreakerState s = stored.orElse(BreakerState.INITIAL);
        SlidingWindow w = s.window() == null ? null : s.window().rolledTo(now);
        BreakerStatus status = Transitions.status(s, policy, now, 1.0);
        Long openedAt = s.open() ? s.openedAt() : null;
        Long retryAfter = null;
        if (status == BreakerStatus.OPEN) {
            retryAfter = Math.max(0L, Transitions.trialEligibleAt(s, policy, 1.0) - now);
        } else if (status == BreakerStatus.HALF_OPEN) {
            retryAfter = 0L;
        }
        return new OperationStatus(op, status.name(), stored.isPresent(), s.failures(), openedAt,
                openedAt == null ? null : Instant.ofEpochMilli(openedAt).toString(), retryAfter, s.version(),
                s.open(), s.forced(), s.openCount(), s.trialSuccesses(), s.errorRate(), s.samples(),
                s.lastFailureAt(), s.mode().wireName(), w == null ? null : w.encode(), w == null ? null : w.calls(),
                w == null ? null : w.failures(), w == null ? null : w.slowCalls());
    }

    /** The failures the breaker decides on: a window's failed outcomes of its calls, else the counter. */
    private static Object failures(OperationStatus r) {
        return r.windowCalls() == null ? r.failures() : r.windowFailures() + " of " + r.windowCalls();
    }

    private static String retryText(OperationStatus r) {
        switch (BreakerStatus.valueOf(r.status())) {
            case OPEN:
                return DurationConverter.format(Duration.ofMillis(r.retryAfterMs()));
            case HALF_OPEN:
                return "now (trial)";
            case FORCED_OPEN:
                return "after reset";
            default:
                return "-";
        }
    }
}

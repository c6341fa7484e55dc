package dev.redeye.cli;

import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.SlidingWindow;
import dev.redeye.Stores;
import dev.redeye.spi.OperationListing;
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
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code redeye status --store URI [OP...]}: the state of each named operation as the store holds it, as a
 * table or JSON; without names, every operation the store holds a state for, listed in pages through its
 * {@link OperationListing} (at most {@code --limit} of them). One {@code get} per named operation, one read per
 * page of a listing; nothing is written, nothing created (the store is opened with
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
            "Without OP, every operation the store holds a state for (a store that can list them: memory:, "
                + "PostgreSQL, Redis, DynamoDB, Hazelcast), at most --limit, in pages. A named operation the store holds no state for is "
                + "reported as unknown (exit 1). Reads only: creates no key, table or schema."},
        footer = {"", "Examples:", "  redeye status --store redis://127.0.0.1:6379 payment-gateway inventory",
            "  redeye status --store postgresql://127.0.0.1:5432/app --limit 50"})
public final class StatusCommand extends StoreCommand {

    @Mixin
    PolicyOptions policyOptions;

    @Option(names = "--json", description = "Print a JSON array instead of a table.")
    boolean json;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "1000", description = "Without OP: the most "
            + "operations to list (default: ${DEFAULT-VALUE}); read in pages of at most "
            + OperationListing.MAX_LIMIT + ".")
    int limit;

    @Parameters(arity = "0..*", paramLabel = "OP", description = "Operation names to show; none: list them all.")
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
        boolean listing = operations == null || operations.isEmpty();
        if (listing && limit < 1) {
            throw new ParameterException(spec.commandLine(), "--limit must be at least 1, was " + limit);
        }
        boolean more = false;
        try (Store s = store.openWithoutCreating(err)) {
            if (listing) {
                more = list(s, policy, rows);
            }
            for (String op : listing ? List.<String>of() : operations) {
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
        if (listing && rows.isEmpty()) {
            err.println(spec.qualifiedName() + ": the store holds no breaker state");
        }
        if (more) {
            err.println(spec.qualifiedName() + ": more operations than --limit " + limit + "; raise it to see them");
        }
        err.flush();
        return unknown.isEmpty() ? 0 : RedeyeCommand.EXIT_FAILURE;
    }

    /**
     * Lists up to {@link #limit} operations of the store into {@code rows}, sorted by name; whether it holds more.
     *
     * @throws ParameterException if the store cannot list its operations
     */
    private boolean list(Store s, Policy policy, List<OperationStatus> rows) {
        OperationListing listing = s.capability(OperationListing.class).orElseThrow(() -> new ParameterException(
                spec.commandLine(), "this store cannot list its operations (" + Stores.typeOf(s).getSimpleName()
                        + " has no OperationListing): name the operations to show"));
        long now = System.currentTimeMillis();
        String cursor = null;
        java.util.TreeMap<String, Optional<BreakerState>> found = new java.util.TreeMap<>();
        boolean more = false;
        do {
            OperationListing.Page page = listing.page(cursor, Math.min(OperationListing.MAX_LIMIT, limit + 1));
            for (OperationListing.Entry e : page.entries()) {
                found.put(e.operation(), e.stateIfRead().isPresent() ? e.stateIfRead() : s.get(e.operation()));
            }
            cursor = page.next();
            if (found.size() > limit) {
                more = true;
                break;
            }
        } while (cursor != null);
        int n = 0;
        for (var e : found.entrySet()) {
            if (n++ == limit) {
                break;
            }
            if (e.getValue().isPresent()) {
                rows.add(describe(e.getKey(), e.getValue(), policy, now));
            }
        }
        return more;
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

package dev.redeye.tck;

import dev.redeye.spi.Store;
import dev.redeye.tck.HistoryChecker.Event;
import dev.redeye.tck.Scenario.Step;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the concurrent scenarios of R8.3 and R8.5: a sequential prefix judged step by step like R8.1, then a
 * few threads over the two clients (thread {@code i} on client {@code i % 2}) released together, each making
 * a few calls resolved against the model the prefix left, then a read of every key (and for R8.5 of its claim
 * table, {@link ClaimTable}); the history of calls with their intervals goes to the {@link HistoryChecker}.
 * No timing is asserted: intervals only say which call surely came before which. Closes its threads in
 * {@link #close()}.
 */
final class ConcurrencyRunner implements AutoCloseable {
    /** How long the threads of one scenario may take before the rule reports a call that hangs. */
    private static final long SCENARIO_TIMEOUT_SECONDS = 60;

    private final Store[] clients;
    private final SequenceRunner sequential;
    private final ExecutorService pool;
    private final int threads;
    private final boolean readClaims;

    /**
     * @param clients    two independent clients
     * @param threads    how many threads make calls at once
     * @param readClaims whether the claim table of every key is read back after the threads (R8.5)
     */
    ConcurrencyRunner(Store[] clients, int threads, boolean readClaims) {
        this.clients = clients.clone();
        this.readClaims = readClaims;
        this.sequential = new SequenceRunner(clients);
        this.threads = threads;
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "tck-r8.3");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * A concurrent scenario: a sequential prefix, then the calls of each thread.
     *
     * @param prefix  the sequential part, judged like R8.1
     * @param threads the steps of each thread, in program order
     */
    record Concurrent(Scenario prefix, List<List<Step>> threads) {
    }

    /** What a concurrent scenario showed: {@code null} when the store was linearizable, else the report. */
    String run(Concurrent sc, String keyPrefix) {
        try {
            SequenceRunner.Run setup = sequential.runKeeping(sc.prefix(), keyPrefix);
            if (setup.failed()) {
                return "the sequential prefix of the scenario diverged from the model (as in R8.1):\n"
                        + setup.replay();
            }
            List<List<Event>> history = execute(sc, setup, keyPrefix);
            if (history == null) {
                return "a thread's call was still running " + SCENARIO_TIMEOUT_SECONDS + " s after the scenario "
                        + "started (a store call hangs)";
            }
            String duplicate = duplicateToken(history);
            HistoryChecker.Result r = duplicate != null ? null : HistoryChecker.check(setup.model, history);
            if (duplicate == null && r.linearizable()) {
                return null;
            }
            return report(sc, setup, history, duplicate, r);
        } finally {
            sequential.deleteKeys(sc.prefix(), keyPrefix);
        }
    }

    private List<List<Event>> execute(Concurrent sc, SequenceRunner.Run setup, String keyPrefix) {
        int n = sc.threads().size();
        List<List<Call>> calls = new ArrayList<>();
        int index = sc.prefix().steps().size();
        for (List<Step> program : sc.threads()) {
            List<Call> cs = new ArrayList<>();
            for (Step s : program) {
                cs.add(setup.resolver.resolve(index++, s, setup.model));
            }
            calls.add(cs);
        }
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<List<Event>>> futures = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int thread = t;
            Store client = clients[t % 2];
            String clientName = t % 2 == 0 ? "a" : "b";
            futures.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                List<Event> events = new ArrayList<>();
                List<Call> program = calls.get(thread);
                for (int i = 0; i < program.size(); i++) {
                    Call c = program.get(i);
                    String name = keyPrefix + sc.prefix().keys().get(c.key()).name();
                    events.add(new Event(thread, i, clientName, c, Observed.run(c, client, name)));
                }
                return events;
            }));
        }
        List<List<Event>> history = new ArrayList<>();
        try {
            ready.await(SCENARIO_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            go.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SCENARIO_TIMEOUT_SECONDS);
            for (Future<List<Event>> f : futures) {
                history.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            }
        } catch (TimeoutException e) {
            futures.forEach(f -> f.cancel(true));
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("a scenario thread failed: " + e.getCause(), e.getCause());
        }
        // Then every key is read once more: the end state must be the end of the same order.
        List<Event> reads = new ArrayList<>();
        for (int k = 0; k < sc.prefix().keys().size(); k++) {
            Call read = Call.plain(Call.Op.GET, k);
            reads.add(new Event(n, k, "b", read, Observed.run(read, clients[1],
                    keyPrefix + sc.prefix().keys().get(k).name())));
        }
        if (readClaims) {
            for (int k = 0; k < sc.prefix().keys().size(); k++) {
                Call table = Call.claimTable(k, issued(setup, history, k));
                reads.add(new Event(n, reads.size(), "b", table, Observed.run(table, clients[1],
                        keyPrefix + sc.prefix().keys().get(k).name())));
            }
        }
        history.add(reads);
        return history;
    }

    /** Every token issued for key {@code k}: by the prefix, then by the concurrent claims. */
    private static List<String> issued(SequenceRunner.Run setup, List<List<Event>> history, int k) {
        List<String> out = new ArrayList<>(setup.resolver.issuedTokens(k));
        for (List<Event> thread : history) {
            for (Event e : thread) {
                if (e.call().op() == Call.Op.CLAIM && e.call().key() == k && e.seen().value() instanceof Optional) {
                    ((Optional<?>) e.seen().value()).ifPresent(t -> out.add(String.valueOf(t)));
                }
            }
        }
        return out;
    }

    /** A token handed out twice in the history (never acceptable, whatever the order), or {@code null}. */
    private static String duplicateToken(List<List<Event>> history) {
        Set<String> tokens = new HashSet<>();
        for (List<Event> thread : history) {
            for (Event e : thread) {
                if (e.call().op() == Call.Op.CLAIM && e.seen().value() instanceof Optional) {
                    Optional<?> t = (Optional<?>) e.seen().value();
                    if (t.isPresent() && !tokens.add(String.valueOf(t.get()))) {
                        return e.label() + " claimTrial returned the token '" + t.get() + "', which another "
                                + "concurrent claim returned too";
                    }
                }
            }
        }
        return null;
    }

    private String report(Concurrent sc, SequenceRunner.Run setup, List<List<Event>> history, String duplicate,
            HistoryChecker.Result r) {
        StringBuilder sb = new StringBuilder();
        sb.append(duplicate != null ? duplicate + "\n"
                : "no sequential order of the reference model explains what the clients saw (the results of the "
                        + "calls below cannot all be true of one atomic store)\n");
        Set<Integer> keys = new HashSet<>();
        for (int k = 0; k < sc.prefix().keys().size(); k++) {
            keys.add(k);
        }
        sb.append(setup.replay(keys));
        long t0 = Long.MAX_VALUE;
        for (List<Event> thread : history) {
            for (Event e : thread) {
                t0 = Math.min(t0, e.seen().startNanos());
            }
        }
        sb.append("  Then concurrently (microseconds since the first call began: [called, returned]):\n");
        for (List<Event> thread : history) {
            for (Event e : thread) {
                String who = e.thread() < threads ? "thread " + (e.thread() + 1) + " on " + e.client()
                        : "after all " + threads + " threads";
                sb.append(String.format(Locale.ROOT, "    %-5s %-18s [%7d, %7d] %s;  // %s%n", e.label(), who,
                        (e.seen().startNanos() - t0) / 1_000, (e.seen().endNanos() - t0) / 1_000,
                        e.call().java(e.client(), "k" + (e.call().key() + 1), "p" + (e.call().key() + 1),
                                setup.tokenVars::get), result(e)));
            }
        }
        if (r != null) {
            List<String> order = new ArrayList<>();
            r.order().forEach(e -> order.add(e.label()));
            sb.append("  The longest order the model explains: ").append(order.isEmpty() ? "(none)" : String.join(", ",
                    order)).append(". No call fits after it:\n");
            r.blocked().forEach(b -> sb.append("    ").append(b).append('\n'));
        }
        return sb.toString();
    }

    private static String result(Event e) {
        Observed o = e.seen();
        if (o.error() != null) {
            return "threw " + o.error();
        }
        Object v = o.value();
        if (v == null) {
            return "ok";
        }
        if (v instanceof Optional && ((Optional<?>) v).isPresent()
                && ((Optional<?>) v).get() instanceof dev.redeye.api.BreakerState) {
            return States.brief((dev.redeye.api.BreakerState) ((Optional<?>) v).get());
        }
        if (v instanceof dev.redeye.spi.StateChange) {
            dev.redeye.spi.StateChange c = (dev.redeye.spi.StateChange) v;
            return (c.transition() != null ? c.transition() + ": " : "") + States.brief(c.state());
        }
        return String.valueOf(v);
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}

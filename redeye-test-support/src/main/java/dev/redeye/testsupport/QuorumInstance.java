package dev.redeye.testsupport;

import dev.redeye.CircuitBreaker;
import dev.redeye.Outlier;
import dev.redeye.OutlierPolicy;
import dev.redeye.Stores;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.CircuitOpenException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One instance of a quorum fleet, for {@link QuorumFleetScenario}: a breaker over a store, driven line by line on
 * standard input, each command answered by one line on standard output. Run in a JVM of its own (the scenario
 * starts it), it stands for a second process of the fleet.
 *
 * <pre>
 * java -cp ... dev.redeye.testsupport.QuorumInstance STORE_URI INSTANCE_ID FAILURE_THRESHOLD QUORUM
 *   fail OP N    N calls of OP that throw   -> "ran=R rejected=J outliers=K outlier=true|false status=CLOSED|OPEN|..."
 *   status OP    this instance's view       -> the same line, without calls
 *   quit         closes the breaker and exits
 * </pre>
 * It prints {@code ready} once the breaker is built, and {@code error TYPE: MESSAGE} for a command that failed.
 */
public final class QuorumInstance {
    private QuorumInstance() {
    }

    /** The breaker both sides of the scenario build, so they differ only in their instance id and store client. */
    static CircuitBreaker breaker(String uri, String instanceId, int failureThreshold, int quorum,
            List<Outlier> outliers) {
        return CircuitBreaker.builder().store(Stores.open(uri)).failureThreshold(failureThreshold).quorum(quorum)
                .instanceId(instanceId).outlierPolicy(OutlierPolicy.REJECT).resetTimeout(Duration.ofMinutes(5))
                .jitter(0).onOutlier(outliers::add).build();
    }

    /** The failure the scenario's calls throw. */
    static final class DependencyFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DependencyFailed() {
            super("dependency failed", null, false, false);
        }
    }

    /** Runs {@code n} failing calls of {@code op}; returns {ran, rejected}. */
    static int[] fail(CircuitBreaker b, String op, int n) {
        int ran = 0;
        int rejected = 0;
        for (int i = 0; i < n; i++) {
            try {
                b.execute(op, () -> {
                    throw new DependencyFailed();
                });
            } catch (DependencyFailed e) {
                ran++;
            } catch (CircuitOpenException e) {
                rejected++;
            } catch (Exception e) {
                throw new IllegalStateException("unexpected " + e, e);
            }
        }
        return new int[] {ran, rejected};
    }

    /** The answer line: the counts of a command and this instance's view of {@code op}. */
    static String describe(CircuitBreaker b, String op, int ran, int rejected, List<Outlier> outliers) {
        long mine = outliers.stream().filter(o -> o.operation().equals(op)).count();
        BreakerStatus status = b.status(op); // a store read: what it learns comes before isOutlier's answer
        return "ran=" + ran + " rejected=" + rejected + " outliers=" + mine + " outlier=" + b.isOutlier(op)
                + " status=" + status;
    }

    /**
     * Builds the breaker from the arguments and serves commands until {@code quit} or the end of input.
     *
     * @param args store URI, instance id, failure threshold, quorum
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: QuorumInstance STORE_URI INSTANCE_ID FAILURE_THRESHOLD QUORUM");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        List<Outlier> outliers = new CopyOnWriteArrayList<>();
        try (CircuitBreaker b = breaker(args[0], args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                outliers);
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            out.println("ready");
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split(" ");
                try {
                    if (w[0].equals("quit")) {
                        break;
                    } else if (w[0].equals("fail") && w.length == 3) {
                        int[] r = fail(b, w[1], Integer.parseInt(w[2]));
                        out.println(describe(b, w[1], r[0], r[1], outliers));
                    } else if (w[0].equals("status") && w.length == 2) {
                        out.println(describe(b, w[1], 0, 0, outliers));
                    } else {
                        out.println("error IllegalArgumentException: unknown command '" + line + "'");
                    }
                } catch (RuntimeException e) {
                    out.println("error " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        }
    }
}

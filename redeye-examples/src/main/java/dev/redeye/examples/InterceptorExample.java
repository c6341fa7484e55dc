package dev.redeye.examples;

import dev.redeye.CircuitBreaker;
import dev.redeye.Permit;
import java.io.PrintStream;
import java.time.Duration;

/**
 * The shape of a gRPC client interceptor over the permission API, without gRPC itself (a real one implements
 * {@code io.grpc.ClientInterceptor} the same way): the permit is taken when a call starts, one breaker
 * operation per method, and completed when the call closes with its status. A rejected call never reaches the
 * channel and closes with an UNAVAILABLE status of its own.
 */
public final class InterceptorExample {
    private InterceptorExample() {
    }

    /** The status codes this example needs, as gRPC names them. */
    public enum Code { OK, UNAVAILABLE, DEADLINE_EXCEEDED, INVALID_ARGUMENT }

    /** A call's end: gRPC's {@code ClientCall.Listener.onClose(Status, Metadata)}. */
    public interface Listener {
        /** The call closed with {@code code}. */
        void onClose(Code code, String description);
    }

    /** A channel: gRPC's {@code Channel.newCall(...).start(listener, headers)} reduced to its shape. */
    public interface Channel {
        /** Starts a call of {@code method}; {@code listener} hears how it closed. */
        void start(String method, Listener listener);
    }

    /**
     * Guards every call of {@code next} with {@code breaker}: a failure is a status that blames the server
     * (UNAVAILABLE, DEADLINE_EXCEEDED); a client error (INVALID_ARGUMENT) is not the dependency's failure.
     */
    public static Channel intercept(CircuitBreaker breaker, Channel next) {
        return (method, listener) -> {
            Permit permit = breaker.tryAcquire(method);
            if (!permit.isPermitted()) {
                listener.onClose(Code.UNAVAILABLE, "circuit open: " + permit.rejection().getMessage());
                return;
            }
            next.start(method, (code, description) -> {
                if (code == Code.UNAVAILABLE || code == Code.DEADLINE_EXCEEDED) {
                    permit.onFailure(new IllegalStateException(code + ": " + description));
                } else {
                    permit.onSuccess();
                }
                listener.onClose(code, description);
            });
        };
    }

    /** Runs the example; prints how each call closed to stdout. */
    public static void main(String[] args) {
        run(System.out);
    }

    static void run(PrintStream out) {
        int[] served = new int[1];
        Channel server = (method, listener) -> {
            served[0]++;
            if (method.endsWith("GetQuote")) {
                listener.onClose(Code.UNAVAILABLE, "quote backend down");
            } else if (method.endsWith("Validate")) {
                listener.onClose(Code.INVALID_ARGUMENT, "bad input");
            } else {
                listener.onClose(Code.OK, "");
            }
        };
        try (CircuitBreaker breaker = CircuitBreaker.builder()
                .failureThreshold(3)
                .resetTimeout(Duration.ofMinutes(1))
                .build()) {
            Channel channel = intercept(breaker, server);
            String[] methods = {"shop.Quotes/GetQuote", "shop.Orders/Validate", "shop.Orders/Place"};
            for (int round = 1; round <= 4; round++) {
                for (String m : methods) {
                    channel.start(m, (code, description) -> out.println(m + " -> " + code));
                }
            }
            out.println("calls that reached the server: " + served[0]);
            for (String m : methods) {
                out.println(m + ": " + breaker.status(m));
            }
        }
    }
}

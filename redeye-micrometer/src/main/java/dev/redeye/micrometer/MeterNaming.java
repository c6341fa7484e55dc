package dev.redeye.micrometer;

/**
 * The names, tags and units {@link RedeyeMetrics} gives the circuit-breaker meters that Resilience4j also defines
 * ({@code calls}, {@code not.permitted.calls}, {@code state}, {@code failure.rate}, {@code slow.call.rate},
 * {@code slow.calls}, {@code buffered.calls}, {@code max.buffered.calls}). redeye's own meters ({@code calls.max}, {@code failures},
 * {@code trials}, the store and feed meters) keep their {@code redeye.*} names under either naming.
 *
 * <p>Under both, tag {@code name} is the operation (a breaker state of its own, as a Resilience4j breaker is one
 * per name), {@code kind} tells calls apart ({@code successful} / {@code failed} / {@code ignored}, and
 * {@code not_permitted} for rejections) and {@code state} is {@code closed} / {@code open} / {@code half_open} /
 * {@code forced_open}, as Resilience4j spells them.
 */
public enum MeterNaming {
    /**
     * {@code redeye.circuitbreaker.*}, the default. {@code failure.rate} is a ratio in [0, 1]: the error-rate
     * strategy's current rate once it has an outcome (also below {@code minimumCalls}, where it does not decide
     * yet), NaN before. The failure count the consecutive and leaky strategies decide on is {@code failures}.
     */
    REDEYE("redeye.circuitbreaker", false),
    /**
     * {@code resilience4j.circuitbreaker.*} with Resilience4j's units, so that dashboards built for Resilience4j's
     * Micrometer binder (the Grafana dashboard in the Resilience4j repository among them) work unchanged:
     * {@code failure.rate} in percent, -1 below {@code minimumCalls} (which that dashboard shows as N/A);
     * {@code buffered.calls} ({@code kind} = {@code failed} / {@code successful}) and {@code max.buffered.calls}
     * describe what the breaker decides on: for the consecutive and leaky strategies the failure count and
     * {@code failureThreshold}, for the error-rate strategy the last {@code minimumCalls} outcomes as the rate
     * weighs them ({@code rate x min(samples, minimumCalls)} failed, the rest successful) and {@code minimumCalls};
     * for a sliding window the outcomes in it and its size (count window) or the minimum number of calls (time
     * window).
     */
    RESILIENCE4J("resilience4j.circuitbreaker", true);

    private final String prefix;
    private final boolean resilience4j;

    MeterNaming(String prefix, boolean resilience4j) {
        this.prefix = prefix;
        this.resilience4j = resilience4j;
    }

    /** The prefix of the circuit-breaker meters Resilience4j also defines, e.g. {@code redeye.circuitbreaker}. */
    public String prefix() {
        return prefix;
    }

    String calls() {
        return prefix + ".calls";
    }

    String notPermittedCalls() {
        return prefix + ".not.permitted.calls";
    }

    String state() {
        return prefix + ".state";
    }

    String failureRate() {
        return prefix + ".failure.rate";
    }

    /** The slow-call rate of a sliding window (the only strategy that measures slow calls). */
    String slowCallRate() {
        return prefix + ".slow.call.rate";
    }

    /** The slow calls in a sliding window. */
    String slowCalls() {
        return prefix + ".slow.calls";
    }

    String bufferedCalls() {
        return prefix + ".buffered.calls";
    }

    String maxBufferedCalls() {
        return prefix + ".max.buffered.calls";
    }

    /** Whether rates are percentages with -1 below {@code minimumCalls} (Resilience4j's) rather than ratios. */
    boolean percentRates() {
        return resilience4j;
    }

    /**
     * Whether {@code buffered.calls} and {@code max.buffered.calls} are registered for every strategy
     * (Resilience4j's view); a sliding window has them under either naming.
     */
    boolean bufferedCallMeters() {
        return resilience4j;
    }
}

package dev.redeye.dashboard;

import dev.redeye.api.BreakerStatus;
import dev.redeye.api.Policy;
import dev.redeye.api.Strategy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code HystrixCommand} objects of {@code /hystrix.stream}: one per operation, with every field Hystrix
 * Dashboard (and Turbine) reads, so that an existing dashboard points at redeye unchanged. Each field and where
 * its value comes from is documented in {@code docs/hystrix-stream.md}.
 *
 * <p>The store holds a breaker's state, not a call log: the counts are those its strategy keeps (a sliding
 * window's calls and failures, the error-rate strategy's samples, or the consecutive failures), latencies are
 * not known (0), and rejections are not counted by the store (0). The circuit fields are exact.
 */
public final class HystrixFormat {

    /** The latency percentiles Hystrix Dashboard reads, as its keys. */
    static final List<String> PERCENTILES = List.of("0", "25", "50", "75", "90", "95", "99", "99.5", "100");

    private HystrixFormat() {
    }

    /** The {@code HystrixCommand} object of one tile. */
    public static Map<String, Object> command(Tile t, Policy p, long now) {
        boolean windowed = t.windowCalls() != null;
        int requests;
        int failures;
        int errorPercentage;
        if (windowed) {
            requests = t.windowCalls();
            failures = t.windowFailures();
            errorPercentage = requests == 0 ? 0 : (int) Math.round(100.0 * failures / requests);
        } else if (t.errorRate() != null) {
            failures = t.failures();
            requests = Math.max(failures, 1);
            errorPercentage = (int) Math.round(100.0 * t.errorRate());
        } else {
            failures = t.failures();
            requests = failures;
            errorPercentage = failures == 0 ? 0 : 100;
        }
        boolean open = t.rejecting() || t.status().equals(BreakerStatus.HALF_OPEN.name());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "HystrixCommand");
        m.put("name", t.operation());
        m.put("group", "redeye");
        m.put("currentTime", now);
        m.put("isCircuitBreakerOpen", open);
        m.put("errorPercentage", errorPercentage);
        m.put("errorCount", failures);
        m.put("requestCount", requests);
        m.put("rollingCountBadRequests", 0);
        m.put("rollingCountCollapsedRequests", 0);
        m.put("rollingCountEmit", 0);
        m.put("rollingCountExceptionsThrown", 0);
        m.put("rollingCountFailure", failures);
        m.put("rollingCountFallbackEmit", 0);
        m.put("rollingCountFallbackFailure", 0);
        m.put("rollingCountFallbackMissing", 0);
        m.put("rollingCountFallbackRejection", 0);
        m.put("rollingCountFallbackSuccess", 0);
        m.put("rollingCountResponsesFromCache", 0);
        m.put("rollingCountSemaphoreRejected", 0);
        m.put("rollingCountShortCircuited", 0);
        m.put("rollingCountSuccess", Math.max(0, requests - failures));
        m.put("rollingCountThreadPoolRejected", 0);
        m.put("rollingCountTimeout", 0);
        m.put("currentConcurrentExecutionCount", 0);
        m.put("rollingMaxConcurrentExecutionCount", 0);
        m.put("latencyExecute_mean", 0);
        m.put("latencyExecute", percentiles());
        m.put("latencyTotal_mean", 0);
        m.put("latencyTotal", percentiles());
        m.put("propertyValue_circuitBreakerRequestVolumeThreshold", windowed ? p.windowMinimumCalls()
                : p.strategy() == Strategy.ERROR_RATE ? p.minimumCalls() : p.failureThreshold());
        m.put("propertyValue_circuitBreakerSleepWindowInMilliseconds", p.resetTimeoutMillis());
        m.put("propertyValue_circuitBreakerErrorThresholdPercentage", windowed
                ? (int) Math.round(p.failureRateThreshold()) : (int) Math.round(100 * p.errorRateThreshold()));
        m.put("propertyValue_circuitBreakerForceOpen", t.status().equals(BreakerStatus.FORCED_OPEN.name()));
        m.put("propertyValue_circuitBreakerForceClosed", false);
        m.put("propertyValue_circuitBreakerEnabled", !"disabled".equals(t.mode()));
        m.put("propertyValue_executionIsolationStrategy", "SEMAPHORE");
        m.put("propertyValue_executionIsolationThreadTimeoutInMilliseconds", 0);
        m.put("propertyValue_executionTimeoutInMilliseconds", 0);
        m.put("propertyValue_executionIsolationThreadInterruptOnTimeout", false);
        m.put("propertyValue_executionIsolationThreadPoolKeyOverride", null);
        m.put("propertyValue_executionIsolationSemaphoreMaxConcurrentRequests", 0);
        m.put("propertyValue_fallbackIsolationSemaphoreMaxConcurrentRequests", 0);
        m.put("propertyValue_metricsRollingStatisticalWindowInMilliseconds", 10_000);
        m.put("propertyValue_requestCacheEnabled", false);
        m.put("propertyValue_requestLogEnabled", false);
        m.put("reportingHosts", Math.max(1, t.contributions().size()));
        m.put("threadPool", "redeye");
        return m;
    }

    private static Map<String, Integer> percentiles() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (String k : PERCENTILES) {
            out.put(k, 0);
        }
        return out;
    }
}

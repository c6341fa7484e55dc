package dev.redeye.spi;

/**
 * The methods of the store SPI, one constant each: what the engine times, what a counting decorator counts,
 * and what the TCK's generated calls are made of. {@link #UPDATE} is {@link AtomicUpdates#apply}, whichever
 * rule it applies (the rule is its {@link AtomicOperation.Kind}).
 */
public enum StoreOperation {
    /** {@link Store#get}. */
    GET("get"),
    /** {@link Store#put}. */
    PUT("put"),
    /** {@link Store#delete}. */
    DELETE("delete"),
    /** {@link AtomicUpdates#apply}, or get-then-put of the same rule for a store without it. */
    UPDATE("apply"),
    /** {@link TrialClaims#claimTrial}. */
    CLAIM_TRIAL("claimTrial"),
    /** {@link TrialClaims#releaseTrial}. */
    RELEASE_TRIAL("releaseTrial"),
    /** {@link TransitionFeed#subscribe}. */
    SUBSCRIBE("subscribe"),
    /** {@link OperationListing#page}: one page of a listing. */
    LIST_PAGE("page");

    private final String method;

    StoreOperation(String method) {
        this.method = method;
    }

    /** The SPI method's name, for example {@code claimTrial}: a stable value for tags and messages. */
    public String method() {
        return method;
    }
}

package dev.redeye.api;

import java.util.Objects;

/**
 * Thrown by a breaker whose store error policy is REJECT when the store could not be read: the call was not
 * run. The cause is the store's {@link StoreException}.
 */
public class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String operation;

    /**
     * @param operation the operation whose call was not run
     * @param cause     the store failure
     */
    public StoreUnavailableException(String operation, Throwable cause) {
        super("store unavailable for operation '"
                + OperationNames.abbreviate(Objects.requireNonNull(operation, "operation"))
                + "': " + (cause == null ? "unknown" : cause.getMessage()), cause);
        this.operation = operation;
    }

    /** The operation whose call was not run. */
    public String operation() {
        return operation;
    }
}

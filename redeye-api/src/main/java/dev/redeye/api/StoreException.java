package dev.redeye.api;

/**
 * A store's backend failed (connection lost, timeout, server error), the store was used after
 * {@code close()}, or the data under a key is malformed. Stores report every backend failure as this
 * exception, never as the backend's own exception type and never as {@code null}.
 */
public class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A store failure with a message. */
    public StoreException(String message) {
        super(message);
    }

    /** A store failure with a message and the backend's exception as the cause. */
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}

package dev.redeye.cli;

import dev.redeye.CountingStore;
import dev.redeye.spi.StoreOperation;

/**
 * Marks the calling thread while it holds a trial claim, which is how the simulation knows, honestly, that a
 * call reaching the dependency is a half-open trial: the mark is set when the store grants a claim and
 * cleared when that claim is released. Valid because the engine claims, runs and releases a synchronous
 * trial on the caller's thread.
 */
final class TrialMark {
    private static final ThreadLocal<String> TOKEN = new ThreadLocal<>();

    /** The listener to give every counting store of the simulation. */
    static final CountingStore.Listener LISTENER = (op, key, token) -> {
        if (op == StoreOperation.CLAIM_TRIAL && token != null) {
            TOKEN.set(token);
        } else if (op == StoreOperation.RELEASE_TRIAL && token != null && token.equals(TOKEN.get())) {
            TOKEN.remove();
        }
    };

    private TrialMark() {
    }

    /** Whether the current thread holds a trial claim made through a counting store. */
    static boolean currentThreadIsTrial() {
        return TOKEN.get() != null;
    }

    /** Forgets the current thread's mark (a worker calls this after each call, whatever happened). */
    static void clear() {
        TOKEN.remove();
    }
}

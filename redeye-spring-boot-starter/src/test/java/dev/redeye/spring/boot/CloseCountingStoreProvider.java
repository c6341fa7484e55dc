package dev.redeye.spring.boot;

import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.StoreProvider;
import dev.redeye.spi.support.ForwardingStore;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test store provider for {@code closecount://NAME}: a client of the in-memory store {@code memory://NAME}
 * that counts its {@code close()} calls and runs a hook in the first, so tests see how often and when the
 * auto-configuration closes a store it opened from {@code redeye.store}.
 */
public final class CloseCountingStoreProvider implements StoreProvider {
    static final Map<String, Counting> OPENED = new ConcurrentHashMap<>();

    @Override
    public Set<String> schemes() {
        return Set.of("closecount");
    }

    @Override
    public Store open(String uri) {
        String name = uri.substring("closecount://".length());
        Counting s = new Counting(Stores.open("memory://" + name));
        OPENED.put(name, s);
        return s;
    }

    /** An in-memory store client counting its closes. */
    public static final class Counting extends ForwardingStore {
        final AtomicInteger closes = new AtomicInteger();
        volatile Runnable onFirstClose = () -> { };

        public Counting(Store delegate) {
            super(delegate);
        }

        @Override
        public void close() {
            if (closes.incrementAndGet() == 1) {
                onFirstClose.run();
            }
            super.close();
        }
    }
}

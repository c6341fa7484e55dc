package dev.redeye.spring.boot;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** The downstream dependency of a test application: it counts its calls, and the test can take it down. */
public abstract class TestDependency {
    private final AtomicInteger calls = new AtomicInteger();
    private final String unreachable;
    private volatile boolean down;

    /** @param unreachable the message of the IOException a call throws while the dependency is down */
    protected TestDependency(String unreachable) {
        this.unreachable = unreachable;
    }

    /** Counts a call, which fails while the dependency is down. */
    protected void call() throws IOException {
        calls.incrementAndGet();
        if (down) {
            throw new IOException(unreachable);
        }
    }

    /** Takes the dependency down, or brings it back. */
    public void down(boolean isDown) {
        down = isDown;
    }

    /** How many calls it had. */
    public int calls() {
        return calls.get();
    }
}

package dev.redeye;

/** {@link Ticker#systemTicker()}: one instance, so that the engine can tell it from a virtual ticker. */
enum SystemTicker implements Ticker {
    INSTANCE;

    @Override
    public long read() {
        return System.nanoTime();
    }

    @Override
    public String toString() {
        return "Ticker.systemTicker()";
    }
}

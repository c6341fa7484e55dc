package dev.redeye.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ServiceAddressTest {
    private static final ServiceAddress REDIS = ServiceAddress.of("REDEYE_X_URL", "redis:7.2-alpine", 6379,
            "redis://%s:%d", "start redis-server and export REDEYE_X_URL=redis://127.0.0.1:6379");

    @Test
    void theEnvironmentVariableWinsTrimmed() {
        ServiceAddress a = REDIS.withProbes(Map.of("REDEYE_X_URL", " redis://db:6380 \n")::get, () -> {
            throw new AssertionError("Docker is not asked when the variable is set");
        });
        assertTrue(a.available());
        assertEquals("redis://db:6380", a.url());
    }

    @Test
    void withoutTheVariableAndWithoutDockerTheFailureSaysHowToProvideOne() {
        ServiceAddress a = REDIS.withProbes(Map.of("REDEYE_X_URL", "  ")::get, () -> false);
        assertFalse(a.available(), "a blank variable is not an address");
        IllegalStateException e = assertThrows(IllegalStateException.class, a::url);
        assertTrue(e.getMessage().contains("REDEYE_X_URL") && e.getMessage().contains("redis:7.2-alpine")
                && e.getMessage().contains("start redis-server and export"), e.getMessage());
    }
}

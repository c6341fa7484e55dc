package dev.redeye.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.failsafe.CircuitBreakerOpenException;
import dev.redeye.api.CircuitOpenException;
import dev.redeye.tck.MutableClock;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The pieces the benchmarks rely on: adapters that really reject, percentiles, the virtual clock, arguments. */
class HarnessTest {

    @ParameterizedTest
    @EnumSource(BreakerType.class)
    void aClosedBreakerRunsTheCallAndReturnsItsResult(BreakerType type) {
        try (BreakerAdapter b = type.create()) {
            Object first = b.call();
            assertFalse(first instanceof Throwable, () -> type + " rejected a healthy call: " + first);
            assertSame(first, b.call(), "the trivial call returns the same payload every time");
        }
    }

    @Test
    void aTrippedBreakerReturnsItsLibrarysRejection() {
        List<Object[]> cases = List.of(
                new Object[] {BreakerType.REDEYE, CircuitOpenException.class},
                new Object[] {BreakerType.RESILIENCE4J, CallNotPermittedException.class},
                new Object[] {BreakerType.RESILIENCE4J_OVER_REDEYE, CallNotPermittedException.class},
                new Object[] {BreakerType.FAILSAFE, CircuitBreakerOpenException.class});
        for (Object[] c : cases) {
            try (BreakerAdapter b = ((BreakerType) c[0]).create()) {
                b.trip();
                assertInstanceOf((Class<?>) c[1], b.call(), c[0] + " must reject once tripped");
            }
        }
        try (BreakerAdapter direct = BreakerType.DIRECT.create()) {
            assertThrows(UnsupportedOperationException.class, direct::trip);
        }
    }

    @Test
    void redeyeRejectionsCarryNoStackTraceByDefault() {
        try (BreakerAdapter b = BreakerType.REDEYE.create()) {
            b.trip();
            assertEquals(0, ((Throwable) b.call()).getStackTrace().length);
        }
    }

    @Test
    void percentilesAreNearestRank() {
        Latencies l = new Latencies(100);
        for (int i = 100; i >= 1; i--) {
            l.add(i);
        }
        assertEquals(50, l.percentile(50));
        assertEquals(99, l.percentile(99));
        assertEquals(100, l.percentile(100));
        assertEquals(1, l.percentile(0.5));
        assertThrows(IllegalArgumentException.class, () -> l.percentile(0));
        assertThrows(IllegalStateException.class, () -> new Latencies(1).percentile(50));
        Latencies full = new Latencies(1);
        full.add(1);
        assertThrows(IllegalStateException.class, () -> full.add(2));
    }

    @Test
    void theVirtualClockMovesOnlyForward() {
        MutableClock clock = new MutableClock(1_000);
        clock.advanceMillis(250);
        assertEquals(1_250, clock.millis());
        assertEquals(1_250, clock.instant().toEpochMilli());
        assertEquals(1_250_000_000L, clock.read());
        assertThrows(IllegalArgumentException.class, () -> clock.advanceMillis(-1));
    }

    @Test
    void argumentsAreParsedAndUnknownOnesRejected() {
        BenchEnv env = BenchEnv.parse(new String[] {"--stores", "memory", "--sections", "ops,fleet", "--quick"});
        assertEquals(List.of("memory"), env.stores());
        assertTrue(env.runs("fleet"));
        assertFalse(env.runs("latency"));
        assertTrue(env.quick());
        assertThrows(IllegalArgumentException.class, () -> BenchEnv.parse(new String[] {"--stores", "oracle"}));
        assertThrows(IllegalArgumentException.class, () -> BenchEnv.parse(new String[] {"--fast"}));
        assertThrows(IllegalArgumentException.class, () -> BenchEnv.parse(new String[] {"--sections"}));
    }

    @Test
    void theChartDirectoryIsAnExistingDirectory(@TempDir Path dir) {
        assertEquals(dir, BenchEnv.parse(new String[] {"--chart-dir", dir.toString()}).chartDir());
        assertEquals(null, BenchEnv.parse(new String[] {"--quick"}).chartDir());
        assertThrows(IllegalArgumentException.class,
                () -> BenchEnv.parse(new String[] {"--chart-dir", dir.resolve("missing").toString()}));
        assertThrows(IllegalArgumentException.class, () -> BenchEnv.parse(new String[] {"--chart-dir"}));
    }

    @Test
    void theFleetChartDrawsEveryTraceItIsGiven(@TempDir Path dir) throws Exception {
        // Shaped like a run (healthy, dead, recovered), not taken from one: the bench draws its own traces.
        int ticks = (int) ((FleetBench.HEALTHY_SECONDS + FleetBench.DEAD_SECONDS + 20) * 1000 / FleetBench.TICK_MILLIS);
        int deadFrom = (int) (FleetBench.HEALTHY_SECONDS * 1000 / FleetBench.TICK_MILLIS);
        int deadTo = (int) ((FleetBench.HEALTHY_SECONDS + FleetBench.DEAD_SECONDS) * 1000 / FleetBench.TICK_MILLIS);
        int[] few = new int[ticks];
        int[] many = new int[ticks];
        for (int i = 0; i < ticks; i++) {
            boolean dead = i >= deadFrom && i < deadTo;
            few[i] = dead ? (i == deadFrom ? FleetBench.INSTANCES : 0) : FleetBench.INSTANCES;
            many[i] = dead ? (i < deadFrom + 50 || i % 600 == 0 ? FleetBench.INSTANCES : 0) : FleetBench.INSTANCES;
        }
        Path file = dir.resolve(FleetBench.CHART_FILE);
        FleetBench.chart(List.of(new FleetBench.Trace("few", few), new FleetBench.Trace("many", many))).write(file);
        BufferedImage img = ImageIO.read(file.toFile());
        assertEquals(1000, img.getWidth());
        assertEquals(720, img.getHeight());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                colours.add(img.getRGB(x, y) & 0xFFFFFF);
            }
        }
        assertTrue(colours.contains(0xD55E00) && colours.contains(0x0072B2), "both traces are drawn");
    }
}

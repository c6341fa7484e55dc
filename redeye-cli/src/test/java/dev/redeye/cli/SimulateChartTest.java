package dev.redeye.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redeye.tck.Race;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/**
 * {@code redeye simulate --chart FILE} through the real entry point (the short timings of
 * {@link SimulateCommandTest}), the image read back as a user's viewer would: PNG through ImageIO, SVG as XML.
 */
class SimulateChartTest {

    @TempDir
    Path dir;

    /** Pixels of exactly this colour (the chart's first palette colour: calls reaching the dependency). */
    private static final int CALLS_RGB = 0xD55E00;
    /** The second palette colour: rejections. */
    private static final int REJECTED_RGB = 0x0072B2;

    private static Set<Integer> colours(BufferedImage img) {
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                colours.add(img.getRGB(x, y) & 0xFFFFFF);
            }
        }
        return colours;
    }

    @Test
    void compareWritesAPngWithBothModesDrawn() throws Exception {
        Path png = dir.resolve("fleet.png");
        Cli.Run run = Cli.run(SimulateCommandTest.simulate("--compare", "--chart", png.toString()));
        assertEquals(0, run.exit(), run::toString);
        assertTrue(run.err().contains("chart written to " + png), run::toString);
        assertTrue(run.out().contains("Timeline, per-instance"), "the text output is unchanged: " + run);

        byte[] bytes = Files.readAllBytes(png);
        assertEquals("\u0089PNG", new String(bytes, 0, 4, StandardCharsets.ISO_8859_1), "PNG signature");
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "ImageIO reads the file");
        assertEquals(1000, img.getWidth());
        assertEquals(660, img.getHeight(), "two panels");
        Set<Integer> colours = colours(img);
        // Not blank: text, grid, shading, markers and the series (antialiased, so many shades).
        assertTrue(colours.size() > 50, "only " + colours.size() + " colours");
        assertTrue(colours.contains(CALLS_RGB), "the calls series is drawn");
        assertTrue(colours.contains(REJECTED_RGB), "the rejections series is drawn");
    }

    @Test
    void perInstanceWritesAnSvgWithItsStateChangesMarked() throws Exception {
        Path svg = dir.resolve("per-instance.svg");
        Cli.Run run = Cli.run(SimulateCommandTest.simulate("--mode", "per-instance", "--chart", svg.toString()));
        assertEquals(0, run.exit(), run::toString);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        // The file names the SVG 1.1 DTD: parse it as an offline viewer would, without fetching that.
        f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        Element root = f.newDocumentBuilder().parse(svg.toFile()).getDocumentElement();
        assertEquals("svg", root.getTagName());
        assertTrue(root.getAttribute("width").startsWith("1000"), root.getAttribute("width"));
        assertTrue(root.getAttribute("height").startsWith("400"), "one panel: " + root.getAttribute("height"));
        String text = Files.readString(svg);
        assertTrue(text.contains("per-instance (memory:"), "the panel is titled with its mode");
        // Every instance opens once; marks group the openings close together ("... (8 instances)").
        Matcher opened = Pattern.compile("(?<![A-Z_])CLOSED -&gt; OPEN(?: \\((\\d+) instances\\))?").matcher(text);
        int openings = 0;
        while (opened.find()) {
            openings += opened.group(1) == null ? 1 : Integer.parseInt(opened.group(1));
        }
        assertEquals(SimulateCommandTest.INSTANCES, openings, "every opening is marked");
        assertTrue(text.contains("HALF_OPEN -&gt; CLOSED"), "the closings are marked");
        assertTrue(text.contains(SimulationChart.TRIALS) && text.contains(SimulationChart.REJECTED),
                "the legend names the series");
    }

    @Test
    void sharedModeChartGoesToStderrNotIntoTheJson() throws Exception {
        Path png = dir.resolve("shared.png");
        Cli.Run run = Cli.run(SimulateCommandTest.simulate("--json", "--chart", png.toString()));
        assertEquals("shared", SimulateCommandTest.json(run).get("mode").asText(), "stdout stays pure JSON");
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(1000, img.getWidth());
        assertEquals(400, img.getHeight());
        assertTrue(colours(img).contains(CALLS_RGB));
    }

    @Test
    void aBadChartFileIsAUsageErrorBeforeTheRun() {
        SimulateCommandTest.assertUsage(Cli.run(SimulateCommandTest.simulate("--chart", dir.resolve("x.gif")
                .toString())), ".png or .svg");
        SimulateCommandTest.assertUsage(Cli.run(SimulateCommandTest.simulate("--chart", dir.resolve("no/such/x.png")
                .toString())), "does not exist");
        assertFalse(Files.exists(dir.resolve("x.gif")));
    }

    @Test
    void perTickCountsAddUpToTheRunsTotals() throws Exception {
        Simulation.Config config = new Simulation.Config(4, 2, Duration.ofMillis(1500), Duration.ofMillis(300),
                Duration.ofMillis(1000), 3, Duration.ofMillis(300), 2, 0.1, Duration.ofMillis(5),
                Duration.ofMillis(10), "memory:", 7, 0, 0, 0, 50, 20);
        Simulation sim = new Simulation(config, Simulation.Mode.SHARED);
        Simulation.Result r = sim.run();
        Simulation.PerTick t = sim.perTick();
        assertEquals(100, t.tickMillis());
        assertEquals(15, t.calls().length);
        long calls = Arrays.stream(t.calls()).sum();
        long rejected = Arrays.stream(t.rejected()).sum();
        long trials = Arrays.stream(t.trials()).sum();
        int threads = config.instances() * config.threadsPerInstance();
        // Every call that ran reached the dependency; at most one per thread may arrive just after the end.
        long ran = r.succeeded() + r.failed();
        assertTrue(calls <= ran && calls >= ran - threads, calls + " per-tick vs " + ran + " in all");
        assertTrue(rejected <= r.rejected() && rejected >= r.rejected() - threads, rejected + " vs " + r.rejected());
        assertTrue(trials <= r.trialCalls() && trials >= r.trialCalls() - 1, trials + " vs " + r.trialCalls());
        // The breaker is open while the dependency is down: the rejections fall in that window, none before it.
        assertEquals(0, Arrays.stream(t.rejected(), 0, 3).sum(), Arrays.toString(t.rejected()));
        assertTrue(Arrays.stream(t.rejected(), 4, 10).sum() > 0, Arrays.toString(t.rejected()));
    }

    @Test
    void theBucketWidensForLongRuns() {
        assertEquals(100, TickCounts.tickMillisFor(12_000));
        assertEquals(100, TickCounts.tickMillisFor(60_000));
        assertEquals(200, TickCounts.tickMillisFor(61_000));
        assertEquals(3_000, TickCounts.tickMillisFor(30 * 60_000));
    }

    @Test
    void tickCountsLoseNoEventUnderContention() throws Exception {
        long start = System.nanoTime();
        TickCounts counts = new TickCounts(start, 1_000_000_000L, 2);
        int threads = 4;
        int each = 200_000;
        // Everyone in bucket 0: a plain long[] with ++ loses increments here.
        Race.run(threads, Duration.ofSeconds(60), t -> {
            for (int i = 0; i < each; i++) {
                counts.add(start);
            }
        });
        counts.add(start - 1);                  // before the start: left out
        counts.add(start + 2_000_000_000L);     // past the last bucket: left out
        counts.add(start + 1_500_000_000L);     // bucket 1
        assertEquals((long) threads * each, counts.snapshot()[0]);
        assertEquals(1, counts.snapshot()[1]);
    }
}

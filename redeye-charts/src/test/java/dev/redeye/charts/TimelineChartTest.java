package dev.redeye.charts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import javax.imageio.ImageIO;
import javax.xml.parsers.DocumentBuilderFactory;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** Writes real images and reads them back: PNG through ImageIO, SVG as XML. */
class TimelineChartTest {

    @TempDir
    Path dir;

    private static TimelineChart sample() {
        double[] x = new double[100];
        double[] calls = new double[100];
        double[] trials = new double[100];
        for (int i = 0; i < x.length; i++) {
            x[i] = i / 10.0;
            calls[i] = i < 30 || i > 70 ? 40 : 1;
            trials[i] = i == 50 || i == 72 ? 1 : 0;
        }
        return TimelineChart.builder("sample")
                .subtitle("two panels")
                .panel("one", "calls per 100 ms", false)
                .line("calls", x, calls)
                .points("trials", x, trials)
                .span(3, 7, "dependency down")
                .event(3.1, "CLOSED -> OPEN")
                .event(7.2, "HALF_OPEN -> CLOSED")
                .panel("two", "cumulative", true)
                .line("calls", x, calls)
                .size(800, 500)
                .build();
    }

    static int distinctColours(BufferedImage img) {
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                colours.add(img.getRGB(x, y));
            }
        }
        return colours.size();
    }

    @Test
    void writesAPngOfTheAskedSizeWithSomethingDrawnOnIt() throws IOException {
        Path file = dir.resolve("chart.PNG");
        sample().write(file);
        byte[] head = new byte[8];
        System.arraycopy(Files.readAllBytes(file), 0, head, 0, 8);
        assertEquals((byte) 0x89, head[0]);
        assertEquals("PNG", new String(head, 1, 3, java.nio.charset.StandardCharsets.US_ASCII));
        BufferedImage img = ImageIO.read(file.toFile());
        assertEquals(800, img.getWidth());
        assertEquals(500, img.getHeight());
        // Text, grid, shading and three series colours: far more than a blank or one-colour image.
        assertTrue(distinctColours(img) > 20, "too few colours: " + distinctColours(img));
    }

    @Test
    void writesAnSvgDocumentOfTheAskedSize() throws Exception {
        Path file = dir.resolve("chart.svg");
        sample().write(file);
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        // The file names the SVG 1.1 DTD: parse it as an offline viewer would, without fetching that.
        f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        Document doc = f.newDocumentBuilder().parse(file.toFile());
        assertEquals("svg", doc.getDocumentElement().getTagName());
        assertTrue(doc.getDocumentElement().getAttribute("width").startsWith("800"),
                doc.getDocumentElement().getAttribute("width"));
        assertTrue(doc.getDocumentElement().getAttribute("height").startsWith("500"));
        String text = Files.readString(file);
        assertTrue(text.contains("HALF_OPEN -&gt; CLOSED") || text.contains("HALF_OPEN -> CLOSED"),
                "the event labels are drawn as text");
        assertTrue(text.contains("dependency down"));
    }

    @Test
    void theExtensionChoosesTheFormatAndAnOtherOneIsRefused() {
        assertEquals(TimelineChart.Format.PNG, TimelineChart.Format.of(Path.of("a/b.png")));
        assertEquals(TimelineChart.Format.SVG, TimelineChart.Format.of(Path.of("b.SVG")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> sample().write(dir.resolve("chart.jpg")));
        assertTrue(e.getMessage().contains(".png or .svg"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("chart.jpg")));
    }

    @Test
    void badInputIsRefusedWhenDescribed() {
        TimelineChart.Builder b = TimelineChart.builder("t");
        assertThrows(IllegalStateException.class, () -> b.line("a", new double[1], new double[1]));
        assertThrows(IllegalStateException.class, b::build);
        b.panel("y");
        assertThrows(IllegalArgumentException.class, () -> b.line("a", new double[2], new double[1]));
        assertThrows(IllegalArgumentException.class, () -> b.line("a", new double[] {Double.NaN}, new double[1]));
        assertThrows(IllegalArgumentException.class, () -> b.span(2, 1, "backwards"));
        assertThrows(IllegalArgumentException.class, () -> b.size(10, 10));
        assertThrows(IllegalStateException.class, b::build, "a panel without series");
    }

    @Test
    void aBuiltChartDoesNotChangeWithItsBuilderOrInputArrays() throws IOException {
        double[] x = {0, 1, 2};
        double[] y = {1, 2, 3};
        TimelineChart.Builder b = TimelineChart.builder("t").panel("y").line("a", x, y).size(300, 200);
        TimelineChart chart = b.build();
        y[1] = Double.NaN;
        b.line("b", new double[] {0}, new double[] {1});
        CombinedDomainXYPlot plot = (CombinedDomainXYPlot) chart.toJFreeChart().getPlot();
        XYPlot panel = plot.getSubplots().get(0);
        assertEquals(1, panel.getDatasetCount(), "series added to the builder later are not in the chart");
        assertEquals(2.0, panel.getDataset(0).getYValue(0, 1));
        chart.write(dir.resolve("t.png")); // the NaN written into y afterwards does not reach the chart
        assertEquals(300, ImageIO.read(dir.resolve("t.png").toFile()).getWidth());
    }
}

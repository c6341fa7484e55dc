package dev.redeye.charts;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Rectangle;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.annotations.XYTitleAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.SVGUtils;

/**
 * A timeline: counts over time in one or more stacked panels that share the time axis, with labelled events
 * (vertical lines, e.g. breaker state changes) and shaded spans (e.g. while a dependency is down), written as a
 * PNG or SVG image with JFreeChart. The one chart renderer of the project: {@code redeye simulate --chart}
 * and the benchmarks' fleet chart both describe their own numbers with a {@link Builder} and call
 * {@link #write(Path)}.
 *
 * <p>A series keeps its colour in every panel (the first series named gets the first colour of a
 * colour-blind-safe palette, and so on), and the legend lists each series name once. Lines are steps: a
 * value holds from its x until the next one, which is what a count per time bucket is.
 *
 * <p>Rendering runs without a display: loading this class sets {@code java.awt.headless=true} unless the
 * property is already set. Instances are immutable and may be written from any thread.
 *
 * <pre>{@code
 * TimelineChart.builder("Fleet")
 *         .xAxis("time (s)")
 *         .panel("calls per second")
 *         .line("shared", xs, ys)
 *         .span(30, 330, "dependency down")
 *         .build()
 *         .write(Path.of("fleet.png"));
 * }</pre>
 */
public final class TimelineChart {
    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    /** The image formats {@link #write(Path)} can produce, chosen by the file name's extension. */
    public enum Format {
        /** A PNG bitmap ({@code .png}). */
        PNG,
        /** An SVG document ({@code .svg}), drawn by JFreeSVG when it is on the class path. */
        SVG;

        /**
         * The format a file name asks for, by its extension (case-insensitive).
         *
         * @throws IllegalArgumentException if the name ends in neither {@code .png} nor {@code .svg}
         */
        public static Format of(Path file) {
            Objects.requireNonNull(file, "file");
            Path name = file.getFileName();
            String s = name == null ? "" : name.toString().toLowerCase(Locale.ROOT);
            if (s.endsWith(".png")) {
                return PNG;
            }
            if (s.endsWith(".svg")) {
                return SVG;
            }
            throw new IllegalArgumentException("unsupported chart file '" + file
                    + "': the name must end in .png or .svg (the extension chooses the format)");
        }
    }

    /** Okabe and Ito's palette (distinguishable with the common colour-vision deficiencies), darkest first. */
    private static final Color[] PALETTE = {new Color(0xD55E00), new Color(0x0072B2), new Color(0x009E73),
        new Color(0xCC79A7), new Color(0xE69F00), new Color(0x56B4E9), new Color(0x000000)};
    private static final Color EVENT = new Color(0x444444);
    private static final Color SPAN = new Color(0, 0, 0, 22);
    private static final Color LABEL_BACKGROUND = new Color(255, 255, 255, 210);
    private static final Font LABEL_FONT = new Font(Font.SANS_SERIF, Font.PLAIN, 11);

    private final String title;
    private final String subtitle;
    private final String xLabel;
    private final int width;
    private final int height;
    private final boolean sameRange;
    private final List<Panel> panels;

    private TimelineChart(Builder b) {
        this.title = b.title;
        this.subtitle = b.subtitle;
        this.xLabel = b.xLabel;
        this.width = b.width;
        this.height = b.height;
        this.sameRange = b.sameRange;
        List<Panel> copy = new ArrayList<>();
        for (Panel p : b.panels) {
            copy.add(p.copy());
        }
        this.panels = List.copyOf(copy);
    }

    /**
     * Starts a chart.
     *
     * @param title the chart's title, drawn above the panels
     * @throws NullPointerException if {@code title} is null
     */
    public static Builder builder(String title) {
        return new Builder(Objects.requireNonNull(title, "title"));
    }

    /** Image width in pixels. */
    public int width() {
        return width;
    }

    /** Image height in pixels. */
    public int height() {
        return height;
    }

    /**
     * Writes the chart to {@code file} in the format its extension names ({@link Format#of(Path)}), replacing
     * any file there. The parent directory must exist.
     *
     * @throws IllegalArgumentException      if the extension is neither {@code .png} nor {@code .svg}
     * @throws UnsupportedOperationException for {@code .svg} without JFreeSVG on the class path
     *                                       ({@link #svgAvailable()})
     * @throws IOException                   if the file cannot be written
     */
    public void write(Path file) throws IOException {
        Format format = Format.of(file);
        JFreeChart chart = toJFreeChart();
        if (format == Format.PNG) {
            ChartUtils.saveChartAsPNG(file.toFile(), chart, width, height);
        } else {
            if (!svgAvailable()) {
                throw new UnsupportedOperationException("SVG output needs JFreeSVG (org.jfree:org.jfree.svg) on the"
                        + " class path; write a .png instead");
            }
            Svg.write(chart, width, height, file);
        }
    }

    /**
     * Whether {@link Format#SVG} can be written: JFreeSVG is an optional dependency of this module (it is
     * GPL-licensed, where JFreeChart is LGPL), so an application that wants SVG adds it itself.
     */
    public static boolean svgAvailable() {
        try {
            Class.forName("org.jfree.svg.SVGGraphics2D", false, TimelineChart.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The only code that touches JFreeSVG, loaded only when an SVG is written. */
    private static final class Svg {
        static void write(JFreeChart chart, int width, int height, Path file) throws IOException {
            SVGGraphics2D g2 = new SVGGraphics2D(width, height);
            chart.draw(g2, new Rectangle(0, 0, width, height));
            SVGUtils.writeToSVG(file.toFile(), g2.getSVGElement());
        }
    }

    /** The chart as a JFreeChart object (a fresh one each call), for callers that draw it themselves. */
    public JFreeChart toJFreeChart() {
        Map<String, Color> colours = new LinkedHashMap<>();
        for (Panel p : panels) {
            for (Series s : p.series) {
                colours.computeIfAbsent(s.name, k -> PALETTE[colours.size() % PALETTE.length]);
            }
        }
        NumberAxis time = new NumberAxis(xLabel);
        time.setAutoRangeIncludesZero(true);
        time.setLowerMargin(0.0);
        time.setUpperMargin(0.01);
        CombinedDomainXYPlot combined = new CombinedDomainXYPlot(time);
        combined.setGap(12.0);
        double commonMax = 0;
        for (Panel p : panels) {
            for (Series s : p.series) {
                for (double y : s.y) {
                    commonMax = Math.max(commonMax, y);
                }
            }
        }
        double lastX = 0;
        for (Panel p : panels) {
            for (Series s : p.series) {
                for (double x : s.x) {
                    lastX = Math.max(lastX, x);
                }
            }
        }
        for (Panel p : panels) {
            combined.add(plot(p, colours, sameRange && !p.log ? commonMax : Double.NaN, lastX), 1);
        }
        LegendItemCollection legend = new LegendItemCollection();
        Set<String> seen = new LinkedHashSet<>();
        for (Panel p : panels) {
            for (Series s : p.series) {
                if (seen.add(s.name)) {
                    LegendItem item = new LegendItem(s.name, colours.get(s.name));
                    item.setShape(s.points ? new Ellipse2D.Double(-4, -4, 8, 8) : new Rectangle(-6, -2, 12, 4));
                    item.setLineVisible(false);
                    legend.add(item);
                }
            }
        }
        combined.setFixedLegendItems(legend);
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 16), combined, true);
        chart.setBackgroundPaint(Color.WHITE);
        if (subtitle != null) {
            chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
        }
        LegendTitle l = chart.getLegend();
        l.setPosition(RectangleEdge.TOP);
        l.setFrame(BlockBorder.NONE);
        l.setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        return chart;
    }

    private static XYPlot plot(Panel p, Map<String, Color> colours, double max, double lastX) {
        ValueAxis range;
        if (p.log) {
            LogAxis log = new LogAxis(p.yLabel);
            log.setSmallestValue(0.5);
            log.setNumberFormatOverride(new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.ROOT)));
            log.setUpperMargin(0.08);
            // One tick per power of ten (the unit is in exponents), with unlabelled minor ticks between.
            log.setTickUnit(new NumberTickUnit(1.0), false, false);
            log.setAutoTickUnitSelection(false);
            log.setMinorTickCount(9);
            log.setMinorTickMarksVisible(true);
            range = log;
        } else {
            NumberAxis n = new NumberAxis(p.yLabel);
            n.setAutoRangeIncludesZero(true);
            n.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
            n.setUpperMargin(0.08); // a line at the maximum stays off the frame
            if (!Double.isNaN(max)) {
                n.setRange(0, Math.max(1, max * 1.08));
            }
            range = n;
        }
        range.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        XYPlot plot = new XYPlot();
        plot.setRangeAxis(range);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xDDDDDD));
        plot.setRangeGridlinePaint(new Color(0xDDDDDD));
        plot.setOutlinePaint(new Color(0xAAAAAA));
        int index = 0;
        for (Series s : p.series) {
            XYSeries xy = new XYSeries(s.name, false, true);
            for (int i = 0; i < s.x.length; i++) {
                if ((p.log && s.y[i] <= 0) || (s.points && s.y[i] == 0)) {
                    continue; // a log axis has no zero; a point series marks only what happened
                }
                xy.add(s.x[i], s.y[i]);
            }
            Color c = colours.get(s.name);
            XYLineAndShapeRenderer r;
            if (s.points) {
                r = new XYLineAndShapeRenderer(false, true);
                r.setSeriesShape(0, new Ellipse2D.Double(-4, -4, 8, 8));
            } else {
                r = new XYStepRenderer();
                r.setSeriesStroke(0, new BasicStroke(1.6f));
            }
            r.setSeriesPaint(0, c);
            plot.setDataset(index, new XYSeriesCollection(xy));
            plot.setRenderer(index, r);
            index++;
        }
        if (p.title != null) {
            // JFreeChart subplots have no titles: the panel's title goes inside its top left corner.
            TextTitle t = new TextTitle(p.title, new Font(Font.SANS_SERIF, Font.BOLD, 12));
            t.setBackgroundPaint(new Color(255, 255, 255, 200));
            t.setPadding(new RectangleInsets(1, 3, 1, 3));
            plot.addAnnotation(new XYTitleAnnotation(0.005, 0.995, t, RectangleAnchor.TOP_LEFT));
        }
        for (Span s : p.spans) {
            IntervalMarker m = new IntervalMarker(s.from, s.to, SPAN);
            m.setLabel(s.label);
            m.setLabelFont(LABEL_FONT);
            m.setLabelPaint(new Color(0x555555));
            m.setLabelBackgroundColor(LABEL_BACKGROUND);
            // Top right, inside: the bottom is where the interesting low counts are, the top left has events.
            m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(TextAnchor.TOP_RIGHT);
            m.setLabelOffset(new RectangleInsets(4, 2, 2, 4));
            plot.addDomainMarker(m, Layer.BACKGROUND);
        }
        int row = 0;
        for (Event e : p.events) {
            ValueMarker m = new ValueMarker(e.x, e.colour == null ? EVENT : e.colour,
                    new BasicStroke(1.0f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f, new float[] {4f, 3f}, 0f));
            m.setLabel(e.label);
            m.setLabelFont(LABEL_FONT);
            m.setLabelPaint(e.colour == null ? EVENT : e.colour);
            m.setLabelBackgroundColor(LABEL_BACKGROUND);
            // Right of the line, or left of it in the last quarter (where the text would leave the plot).
            boolean left = e.x > 0.75 * lastX;
            m.setLabelAnchor(left ? RectangleAnchor.TOP_RIGHT : RectangleAnchor.TOP_LEFT);
            m.setLabelTextAnchor(left ? TextAnchor.TOP_RIGHT : TextAnchor.TOP_LEFT);
            // Events close together would print over each other: each label one line below the previous one.
            m.setLabelOffset(new RectangleInsets(18 + 13 * (row % 4), 3, 0, 3));
            row++;
            plot.addDomainMarker(m, Layer.FOREGROUND);
        }
        return plot;
    }

    /** Describes a {@link TimelineChart}; not thread-safe. */
    public static final class Builder {
        private final String title;
        private String subtitle;
        private String xLabel = "time (s)";
        private int width = 1000;
        private int height = -1;
        private boolean sameRange;
        private final List<Panel> panels = new ArrayList<>();

        private Builder(String title) {
            this.title = title;
        }

        /** A line of smaller text under the title. */
        public Builder subtitle(String text) {
            this.subtitle = Objects.requireNonNull(text, "text");
            return this;
        }

        /** The time axis' label (default {@code "time (s)"}). */
        public Builder xAxis(String label) {
            this.xLabel = Objects.requireNonNull(label, "label");
            return this;
        }

        /**
         * The image size in pixels (default 1000 wide, 260 high per panel plus 140).
         *
         * @throws IllegalArgumentException unless both are in [100, 10000]
         */
        public Builder size(int width, int height) {
            if (width < 100 || width > 10_000 || height < 100 || height > 10_000) {
                throw new IllegalArgumentException("chart size must be within 100..10000 pixels, was " + width
                        + "x" + height);
            }
            this.width = width;
            this.height = height;
            return this;
        }

        /** Gives every linear panel the same value range (0 to the largest value of all), to compare them. */
        public Builder sameRange() {
            this.sameRange = true;
            return this;
        }

        /**
         * Starts a panel with a linear value axis; the series, events and spans that follow go into it.
         *
         * @param yLabel the value axis' label
         */
        public Builder panel(String yLabel) {
            return panel(null, yLabel, false);
        }

        /**
         * Starts a panel; the series, events and spans that follow go into it.
         *
         * @param title  drawn in the panel's top left corner, or null
         * @param yLabel the value axis' label
         * @param log    a logarithmic value axis (values of zero or less are then left out)
         */
        public Builder panel(String title, String yLabel, boolean log) {
            panels.add(new Panel(title, Objects.requireNonNull(yLabel, "yLabel"), log));
            return this;
        }

        /**
         * A series drawn as a step line: {@code y[i]} holds from {@code x[i]} to {@code x[i + 1]}.
         *
         * @throws IllegalArgumentException if the arrays differ in length or hold NaN / infinite values
         * @throws IllegalStateException    if no panel was started
         */
        public Builder line(String name, double[] x, double[] y) {
            current().series.add(new Series(name, x, y, false));
            return this;
        }

        /** A series drawn as dots, one per non-zero value (for rare events such as trials). */
        public Builder points(String name, double[] x, double[] y) {
            current().series.add(new Series(name, x, y, true));
            return this;
        }

        /** A labelled vertical dashed line at {@code x} in the current panel. */
        public Builder event(double x, String label) {
            return event(x, label, null);
        }

        /** A labelled vertical dashed line at {@code x} in the current panel, in {@code colour} (null: grey). */
        public Builder event(double x, String label, Color colour) {
            current().events.add(new Event(finite(x), Objects.requireNonNull(label, "label"), colour));
            return this;
        }

        /**
         * A shaded span of time in the current panel, labelled at its top right.
         *
         * @throws IllegalArgumentException if {@code to < from}
         */
        public Builder span(double from, double to, String label) {
            if (!(to >= from)) {
                throw new IllegalArgumentException("span ends before it starts: " + from + " .. " + to);
            }
            current().spans.add(new Span(finite(from), finite(to), Objects.requireNonNull(label, "label")));
            return this;
        }

        /**
         * The chart.
         *
         * @throws IllegalStateException if no panel was started or a panel has no series
         */
        public TimelineChart build() {
            if (panels.isEmpty()) {
                throw new IllegalStateException("a chart needs at least one panel");
            }
            for (Panel p : panels) {
                if (p.series.isEmpty()) {
                    throw new IllegalStateException("panel '" + p.yLabel + "' has no series");
                }
            }
            if (height < 0) {
                height = Math.min(10_000, 140 + 260 * panels.size());
            }
            return new TimelineChart(this);
        }

        private Panel current() {
            if (panels.isEmpty()) {
                throw new IllegalStateException("start a panel first: panel(yLabel)");
            }
            return panels.get(panels.size() - 1);
        }
    }

    private static double finite(double v) {
        if (!Double.isFinite(v)) {
            throw new IllegalArgumentException("not a finite number: " + v);
        }
        return v;
    }

    private static final class Panel {
        final String title;
        final String yLabel;
        final boolean log;
        final List<Series> series = new ArrayList<>();
        final List<Event> events = new ArrayList<>();
        final List<Span> spans = new ArrayList<>();

        Panel(String title, String yLabel, boolean log) {
            this.title = title;
            this.yLabel = yLabel;
            this.log = log;
        }

        Panel copy() {
            Panel p = new Panel(title, yLabel, log);
            p.series.addAll(series);
            p.events.addAll(events);
            p.spans.addAll(spans);
            return p;
        }
    }

    private static final class Series {
        final String name;
        final double[] x;
        final double[] y;
        final boolean points;

        Series(String name, double[] x, double[] y, boolean points) {
            this.name = Objects.requireNonNull(name, "name");
            Objects.requireNonNull(x, "x");
            Objects.requireNonNull(y, "y");
            if (x.length != y.length) {
                throw new IllegalArgumentException("series '" + name + "': " + x.length + " x values but "
                        + y.length + " y values");
            }
            for (int i = 0; i < x.length; i++) {
                if (!Double.isFinite(x[i]) || !Double.isFinite(y[i])) {
                    throw new IllegalArgumentException("series '" + name + "': point " + i + " is not finite ("
                            + x[i] + ", " + y[i] + ")");
                }
            }
            this.x = x.clone();
            this.y = y.clone();
            this.points = points;
        }
    }

    private record Event(double x, String label, Color colour) {
    }

    private record Span(double from, double to, String label) {
    }
}

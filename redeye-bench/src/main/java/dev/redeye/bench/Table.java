package dev.redeye.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A Markdown table built row by row, printed as BENCHMARK.md quotes it. Not thread-safe. */
final class Table {
    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();

    Table(String... header) {
        this.header = header.clone();
    }

    /**
     * Adds a row; each cell is printed with {@link String#valueOf(Object)}.
     *
     * @throws IllegalArgumentException if the row does not have one cell per column
     */
    Table row(Object... cells) {
        if (cells.length != header.length) {
            throw new IllegalArgumentException("row of " + cells.length + " cells for " + header.length + " columns");
        }
        String[] r = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            r[i] = String.valueOf(cells[i]);
        }
        rows.add(r);
        return this;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        line(sb, header);
        sb.append('|');
        for (int i = 0; i < header.length; i++) {
            sb.append("---|");
        }
        sb.append('\n');
        for (String[] r : rows) {
            line(sb, r);
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String[] cells) {
        sb.append('|');
        for (String c : cells) {
            sb.append(' ').append(c).append(" |");
        }
        sb.append('\n');
    }

    /** A number with a fixed count of decimals, English locale. */
    static String fmt(double v, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** Nanoseconds as microseconds with one decimal. */
    static String micros(long nanos) {
        return fmt(nanos / 1000.0, 1);
    }
}

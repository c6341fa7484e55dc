package dev.redeye.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table with left-aligned columns sized to their widest cell. Not thread-safe; build, then
 * {@link #render()}.
 */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    Table(String... header) {
        columns = header.length;
        rows.add(header.clone());
    }

    Table row(Object... cells) {
        if (cells.length != columns) {
            throw new IllegalArgumentException("expected " + columns + " cells, got " + cells.length);
        }
        String[] r = new String[columns];
        for (int i = 0; i < columns; i++) {
            r[i] = printable(String.valueOf(cells[i]));
        }
        rows.add(r);
        return this;
    }

    String render() {
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                line.append(r[i]);
                if (i < columns - 1) {
                    line.append(" ".repeat(width[i] - r[i].length() + 2));
                }
            }
            sb.append(line.toString().stripTrailing()).append(System.lineSeparator());
        }
        return sb.toString();
    }

    /** Control characters shown escaped, so a hostile operation name cannot break the table. */
    static String printable(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\n') {
                sb.append("\\n");
            } else if (c == '\r') {
                sb.append("\\r");
            } else if (c == '\t') {
                sb.append("\\t");
            } else if (Character.isISOControl(c)) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}

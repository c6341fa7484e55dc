package dev.redeye.api;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Small helpers every {@link StoreProvider} needs for its URI: the scheme, the query parameters, and a
 * redacted form safe to log or print. A password (in the user-info part or in a {@code password=} style
 * query parameter) never appears in anything these helpers return except {@link #query(String)}.
 */
public final class StoreUris {
    private static final Pattern USER_INFO = Pattern.compile("^([A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://)?)([^@/?#]*)@");
    private static final Pattern SECRET_PARAM = Pattern.compile(
            "([?&;](?:password|pass|pwd|secret|secretKey|secretAccessKey|sessionToken|token|auth)=)([^&;#]*)",
            Pattern.CASE_INSENSITIVE);

    private StoreUris() {
    }

    /**
     * The scheme of a URI, lower case, without the colon: the text before the first {@code ':'}, or before
     * the second one for {@code jdbc:} URIs.
     *
     * @throws IllegalArgumentException if the text has no scheme
     */
    public static String scheme(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("store URI must not be null");
        }
        int colon = uri.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("store URI has no scheme: " + redact(uri));
        }
        String scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
        if (scheme.equals("jdbc")) {
            int second = uri.indexOf(':', colon + 1);
            if (second > colon) {
                scheme = uri.substring(0, second).toLowerCase(Locale.ROOT);
            }
        }
        return scheme;
    }

    /**
     * The URI with any password replaced by {@code ***}: the password of the user-info part
     * ({@code redis://user:secret@host} becomes {@code redis://user:***@host}) and secret-looking query
     * parameters.
     */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String out = uri;
        Matcher m = USER_INFO.matcher(out);
        if (m.find()) {
            String info = m.group(2);
            int colon = info.indexOf(':');
            String safe = colon >= 0 ? info.substring(0, colon) + ":***" : "***";
            // A user-info without a colon is a bare password in some clients (redis://secret@host).
            out = m.group(1) + safe + "@" + out.substring(m.end());
        }
        return SECRET_PARAM.matcher(out).replaceAll("$1***");
    }

    /**
     * The query parameters of a URI, percent-decoded, in order. A parameter without {@code =} maps to the
     * empty string; a repeated parameter keeps its last value.
     */
    public static Map<String, String> query(String uri) {
        int q = uri.indexOf('?');
        if (q < 0) {
            return Collections.emptyMap();
        }
        int hash = uri.indexOf('#', q);
        String query = hash < 0 ? uri.substring(q + 1) : uri.substring(q + 1, hash);
        Map<String, String> out = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            out.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return Collections.unmodifiableMap(out);
    }
}

package dev.redeye.spi.support;

import dev.redeye.spi.StoreProvider;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
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
    private static final Pattern SCHEME_PREFIX = Pattern.compile(
            "^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://)?");
    private static final String SECRET_NAMES =
            "password|pass|pwd|secret|secretKey|secretAccessKey|sessionToken|token|auth";
    private static final Pattern SECRET_PARAM = Pattern.compile(
            "([?&;](?:" + SECRET_NAMES + ")=)([^&;#]*)", Pattern.CASE_INSENSITIVE);

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
     * ({@code redis://user:secret@host} becomes {@code redis://user:***@host}, a bare
     * {@code redis://secret@host} becomes {@code redis://***@host}) and secret-looking query parameters
     * ({@code password=}, {@code token=}, ...).
     *
     * <p>The user info is taken up to the <em>last</em> {@code @}, so a password holding unencoded reserved
     * characters ({@code @ / # ?}) is still masked whole. When in doubt it masks more, never less: an
     * {@code @} inside a query can hide a host name too.
     */
    public static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        String out = uri;
        UserInfo info = userInfo(uri);
        if (info != null) {
            String safe = info.user == null ? "***" : info.user + ":***";
            out = uri.substring(0, info.start) + safe + uri.substring(info.end);
        }
        return SECRET_PARAM.matcher(out).replaceAll("$1***");
    }

    /**
     * The secrets a URI holds, as written: the user-info password (or a bare user-info, which some clients
     * read as a password) and the values of secret-looking query parameters. For callers that must also
     * scrub these values from messages a driver wrote.
     */
    public static List<String> secrets(String uri) {
        List<String> out = new ArrayList<>();
        if (uri == null) {
            return out;
        }
        UserInfo info = userInfo(uri);
        if (info != null && !info.password.isEmpty()) {
            out.add(info.password);
        }
        Matcher m = SECRET_PARAM.matcher(uri);
        while (m.find()) {
            if (!m.group(2).isEmpty()) {
                out.add(m.group(2));
            }
        }
        return out;
    }

    /** Where the user info of a URI is, or null if it has none. */
    private static UserInfo userInfo(String uri) {
        Matcher m = SCHEME_PREFIX.matcher(uri);
        if (!m.find()) {
            return null;
        }
        int start = m.end();
        int at = uri.lastIndexOf('@');
        if (at < start) {
            return null;
        }
        String info = uri.substring(start, at);
        int colon = info.indexOf(':');
        if (colon < 0) {
            int authorityEnd = indexOfAny(uri, "/?#", start);
            if (authorityEnd >= 0 && authorityEnd < at) {
                return null; // an '@' in a path or query, not a bare password before the host
            }
            return new UserInfo(start, at, null, info);
        }
        String user = info.substring(0, colon);
        if (indexOfAny(user, "/?#", 0) >= 0) {
            user = null; // not a user name: mask it all
        }
        return new UserInfo(start, at, user, info.substring(colon + 1));
    }

    private static int indexOfAny(String s, String chars, int from) {
        for (int i = from; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    private static final class UserInfo {
        final int start;
        final int end;
        final String user;
        final String password;

        UserInfo(int start, int end, String user, String password) {
            this.start = start;
            this.end = end;
            this.user = user;
            this.password = password;
        }
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

package dev.redeye.cli;

import dev.redeye.api.StoreUris;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps passwords out of everything the command prints. Built from the command-line arguments: every
 * argument that looks like a store URI contributes its raw text (replaced by {@link StoreUris#redact}) and
 * its secrets (the user-info password and secret-looking query parameters), which are then blanked wherever
 * they appear in a message, even a message a store or driver wrote.
 *
 * <p>Immutable and thread-safe. Cost: a few string replacements per scrubbed message.
 */
final class Secrets {
    private static final Pattern USER_INFO = Pattern.compile("^[A-Za-z][A-Za-z0-9+.:-]*://([^@/?#]*)@");
    private static final Pattern SECRET_PARAM = Pattern.compile(
            "[?&;](?:password|pass|pwd|secret|secretKey|secretAccessKey|sessionToken|token|auth)=([^&;#]*)",
            Pattern.CASE_INSENSITIVE);
    /** Secrets shorter than this are only removed as part of their URI: blanking "a" everywhere would garble. */
    private static final int MIN_FREE_SECRET = 3;

    private final List<String> uris;
    private final List<String> secrets;

    private Secrets(List<String> uris, List<String> secrets) {
        this.uris = uris;
        this.secrets = secrets;
    }

    /** Collects the URIs and secrets found in command-line arguments ({@code --store=URI} included). */
    static Secrets fromArgs(List<String> args) {
        Set<String> uris = new LinkedHashSet<>();
        Set<String> secrets = new LinkedHashSet<>();
        for (String arg : args == null ? List.<String>of() : args) {
            if (arg == null) {
                continue;
            }
            String candidate = arg;
            int eq = arg.indexOf('=');
            if (arg.startsWith("-") && eq > 0) {
                candidate = arg.substring(eq + 1);
            }
            if (!candidate.contains(":")) {
                continue;
            }
            boolean hasSecret = false;
            Matcher m = USER_INFO.matcher(candidate);
            if (m.find()) {
                String info = m.group(1);
                int colon = info.indexOf(':');
                String password = colon >= 0 ? info.substring(colon + 1) : info;
                hasSecret |= add(secrets, password);
            }
            Matcher q = SECRET_PARAM.matcher(candidate);
            while (q.find()) {
                hasSecret |= add(secrets, q.group(1));
            }
            for (Map.Entry<String, String> e : safeQuery(candidate).entrySet()) {
                if (e.getKey().matches("(?i)password|pass|pwd|secret|secretKey|secretAccessKey|sessionToken|token|auth")) {
                    hasSecret |= add(secrets, e.getValue());
                }
            }
            if (hasSecret) {
                uris.add(candidate);
            }
        }
        List<String> sortedSecrets = new ArrayList<>(secrets);
        // Longest first, so a secret that contains another is replaced whole.
        sortedSecrets.sort(Comparator.comparingInt(String::length).reversed());
        return new Secrets(List.copyOf(uris), List.copyOf(sortedSecrets));
    }

    private static boolean add(Set<String> secrets, String raw) {
        if (raw == null || raw.isEmpty()) {
            return false;
        }
        secrets.add(raw);
        String decoded = URLDecoder.decode(raw, StandardCharsets.UTF_8);
        if (!decoded.isEmpty()) {
            secrets.add(decoded);
        }
        return true;
    }

    private static Map<String, String> safeQuery(String uri) {
        try {
            return StoreUris.query(uri);
        } catch (IllegalArgumentException e) {
            return Map.of();
        }
    }

    /** The text with every known URI redacted and every known secret replaced by {@code ***}. */
    String scrub(String text) {
        if (text == null) {
            return null;
        }
        String out = text;
        for (String uri : uris) {
            out = out.replace(uri, StoreUris.redact(uri));
        }
        for (String secret : secrets) {
            if (secret.length() >= MIN_FREE_SECRET) {
                out = out.replace(secret, "***");
            }
        }
        return out;
    }
}

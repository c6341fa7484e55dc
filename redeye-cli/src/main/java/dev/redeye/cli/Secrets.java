package dev.redeye.cli;

import dev.redeye.spi.support.StoreUris;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Keeps passwords out of everything the command prints. Built from the command-line arguments: every
 * argument that looks like a store URI contributes its raw text (replaced by {@link StoreUris#redact}) and
 * its secrets (the user-info password and secret-looking query parameters), which are then blanked wherever
 * they appear in a message, even a message a store or driver wrote.
 *
 * <p>Immutable and thread-safe. Cost: a few string replacements per scrubbed message.
 */
final class Secrets {
    /** Secrets shorter than this are only removed as part of their URI: blanking "a" everywhere would garble. */
    private static final int MIN_FREE_SECRET = 3;

    private final List<String> uris;
    private final List<String> secrets;

    private Secrets(List<String> uris, List<String> secrets) {
        this.uris = uris;
        this.secrets = secrets;
    }

    /**
     * Collects the URIs and secrets found in command-line arguments ({@code --store=URI} included) and in
     * the {@code REDEYE_STORE} environment variable (the default of {@code --store}).
     */
    static Secrets fromArgs(List<String> args) {
        Set<String> uris = new LinkedHashSet<>();
        Set<String> secrets = new LinkedHashSet<>();
        List<String> all = new ArrayList<>(args == null ? List.<String>of() : args);
        String fromEnv = System.getenv("REDEYE_STORE");
        if (fromEnv != null) {
            all.add(fromEnv);
        }
        for (String arg : all) {
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
            for (String secret : StoreUris.secrets(candidate)) {
                hasSecret |= add(secrets, secret);
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
        try {
            String decoded = URLDecoder.decode(raw, StandardCharsets.UTF_8);
            if (!decoded.isEmpty()) {
                secrets.add(decoded);
            }
        } catch (IllegalArgumentException notEncoded) {
            // a raw '%' that is no escape: the raw form is all there is to hide
        }
        return true;
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

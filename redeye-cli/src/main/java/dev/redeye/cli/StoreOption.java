package dev.redeye.cli;

import dev.redeye.OpenMode;
import dev.redeye.Stores;
import dev.redeye.spi.Store;
import dev.redeye.spi.support.StoreUris;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --store URI} option of the operator commands, defaulting to the {@code REDEYE_STORE}
 * environment variable. Opens the store through {@link Stores#open(String, OpenMode)} (ServiceLoader over
 * every store module in the jar) in {@link OpenMode#STRICT} mode: a command reaches its store at once or
 * fails, rather than retrying in the background as an application's store does.
 *
 * <p>An unknown scheme or a malformed URI is a usage error (exit 2); an unreachable backend surfaces as the
 * store's {@link dev.redeye.api.StoreException} (exit 1). Neither message carries a password.
 */
public final class StoreOption {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--store", paramLabel = "URI", defaultValue = "${env:REDEYE_STORE}",
            description = {"Store URI (default: $REDEYE_STORE), e.g.", "redis://127.0.0.1:6379",
                "postgresql://127.0.0.1:5432/db", "hazelcast://dev@127.0.0.1:5701", "memory:",
                "(every form: redeye --help)"})
    String uri;

    /** Creates the mixin (picocli calls this). */
    public StoreOption() {
    }

    /**
     * The URI given.
     *
     * @throws ParameterException if none was given and {@code REDEYE_STORE} is not set
     */
    String uri() {
        if (uri == null || uri.isBlank()) {
            throw new ParameterException(mixee.commandLine(),
                    "missing --store URI (or set REDEYE_STORE), e.g. --store redis://127.0.0.1:6379");
        }
        return uri.trim();
    }

    /** The URI with any password replaced, for printing. */
    String redacted() {
        return StoreUris.redact(uri());
    }

    /**
     * Opens a new client of the store. The caller closes it. For {@code memory:} a note goes to
     * {@code err}: that store is private to this process.
     *
     * @throws ParameterException            for an unknown scheme or a URI the provider rejects
     * @throws dev.redeye.api.StoreException if the backend cannot be reached
     */
    Store open(PrintWriter err) {
        return open(uri(), err);
    }

    private Store open(String u, PrintWriter err) {
        Store store;
        try {
            store = Stores.open(u, OpenMode.STRICT);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(mixee.commandLine(), e.getMessage(), e);
        }
        if (isMemory(u) && err != null) {
            err.println("note: memory: is private to this process; nothing written here outlives the command");
            err.flush();
        }
        return store;
    }

    /**
     * Opens a new client that creates nothing in the backend, for the read-only commands: a store that would
     * create its tables when opened is told not to, whatever the URI says (PostgreSQL's {@code createSchema} and
     * DynamoDB's {@code createTable} are set to {@code false}), so that reading a database or account without
     * redeye's tables fails naming them instead of creating them. Every other store creates nothing on open.
     *
     * @throws ParameterException            for an unknown scheme or a URI the provider rejects
     * @throws dev.redeye.api.StoreException if the backend cannot be reached, or its tables are missing
     */
    Store openWithoutCreating(PrintWriter err) {
        return open(withoutCreation(uri()), err);
    }

    /** {@code uri} with the parameter that makes its store create tables on open, if it has one, set to false. */
    static String withoutCreation(String uri) {
        String scheme;
        try {
            scheme = StoreUris.scheme(uri);
        } catch (IllegalArgumentException e) {
            return uri; // Stores.open reports it
        }
        String param = switch (scheme) {
            case "postgresql", "postgres", "jdbc:postgresql" -> "createSchema";
            case "dynamodb" -> "createTable";
            default -> null;
        };
        if (param == null) {
            return uri;
        }
        int q = uri.indexOf('?');
        List<String> kept = new ArrayList<>();
        if (q >= 0) {
            for (String pair : uri.substring(q + 1).split("&")) {
                if (!pair.isEmpty() && !pair.split("=", 2)[0].equalsIgnoreCase(param)) {
                    kept.add(pair);
                }
            }
        }
        kept.add(param + "=false");
        return (q < 0 ? uri : uri.substring(0, q)) + "?" + String.join("&", kept);
    }

    static boolean isMemory(String uri) {
        try {
            return "memory".equals(StoreUris.scheme(uri));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}

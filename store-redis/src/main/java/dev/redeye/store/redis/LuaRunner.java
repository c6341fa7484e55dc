package dev.redeye.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.redeye.store.redis.LuaLibrary.Fn;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * Runs the functions of a {@link LuaLibrary} on one store's client. Where the server offers Redis Functions,
 * a call is one {@code FCALL}; the first call a server (or a Cluster node) cannot serve, answered {@code ERR
 * Function not found} (a fresh server, a restart without persistence, {@code FUNCTION FLUSH}), loads the
 * library there with {@code FUNCTION LOAD} and calls again: the call had not run. Where it does not (Redis
 * before 7: {@code FCALL} is an unknown command) or may not ({@code FCALL} or {@code FUNCTION LOAD} refused
 * by an ACL), the runner falls back to EVALSHA of the function's script for the rest of the store's life,
 * loading it with {@code SCRIPT LOAD} on NOSCRIPT (after {@code SCRIPT FLUSH}, a restart or a fail-over) the
 * same way. The choice is made by the server's answers, so it costs no round trip, and it only ever moves
 * from functions to scripts (a Cluster being upgraded node by node ends on scripts, which every node runs).
 *
 * <p>Errors of the functions themselves ({@code REDEYE_BAD_ARGS}, {@code REDEYE_MALFORMED}, {@code WRONGTYPE},
 * OOM) and connection failures propagate as Jedis exceptions; the store maps them. Thread-safe.
 */
final class LuaRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LuaRunner.class);

    /** How a store runs the library. */
    enum Mode {
        /** FCALL where the server offers Functions, else EVALSHA (the default). */
        AUTO,
        /** EVALSHA only, as on a server without Functions (for tests of that path). */
        SCRIPTS
    }

    private final UnifiedJedis client;
    private final LuaLibrary library;
    private volatile boolean functions;

    LuaRunner(UnifiedJedis client, LuaLibrary library, Mode mode) {
        this.client = client;
        this.library = library;
        this.functions = mode == Mode.AUTO;
    }

    LuaLibrary library() {
        return library;
    }

    /** Whether calls go out as FCALL (until the server refuses them). */
    boolean usesFunctions() {
        return functions;
    }

    /**
     * Runs {@code fn}.
     *
     * @param keys at least one key; every key must share one hash slot
     */
    Object run(Fn fn, List<String> keys, List<String> args) {
        return run(client, fn, keys, args);
    }

    /**
     * Runs {@code fn} through {@code via} instead of the store's client: a client over one connection, for a
     * caller that sends another command on the same connection afterwards (WAIT).
     */
    Object run(UnifiedJedis via, Fn fn, List<String> keys, List<String> args) {
        if (functions) {
            String name = library.functionName(fn);
            try {
                return via.fcall(name, keys, args);
            } catch (JedisDataException e) {
                String m = String.valueOf(e.getMessage());
                if (m.startsWith("ERR Function not found")) {
                    if (loadLibrary(via, keys.get(0))) {
                        return via.fcall(name, keys, args);
                    }
                } else if (refused(m, "fcall")) {
                    fallBack("FCALL", m);
                } else {
                    throw e;
                }
            }
        }
        return script(via, fn, keys, args);
    }

    private Object script(UnifiedJedis via, Fn fn, List<String> keys, List<String> args) {
        String sha = library.scriptSha(fn);
        try {
            return via.evalsha(sha, keys, args);
        } catch (JedisNoScriptException e) {
            via.scriptLoad(library.scriptSource(fn), keys.get(0));
            return via.evalsha(sha, keys, args);
        }
    }

    /**
     * Loads the library on the node owning {@code sampleKey}'s slot; true when it is loaded there now (by this
     * call or a concurrent one), false when the server refuses {@code FUNCTION LOAD} (the runner then uses
     * scripts).
     */
    private boolean loadLibrary(UnifiedJedis via, String sampleKey) {
        try {
            via.sendCommand(sampleKey.getBytes(StandardCharsets.UTF_8), Protocol.Command.FUNCTION,
                    "LOAD".getBytes(StandardCharsets.UTF_8), library.librarySource().getBytes(StandardCharsets.UTF_8));
            LOG.debug("redeye loaded the Redis Function library {}", library.libraryName());
            return true;
        } catch (JedisDataException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("already exists")) {
                return true; // another instance loaded it meanwhile
            }
            if (refused(m, "function")) {
                fallBack("FUNCTION LOAD", m);
                return false;
            }
            throw e;
        }
    }

    /** An unknown command (a server without Functions) or an ACL refusing it. */
    private static boolean refused(String message, String command) {
        return message.startsWith("ERR unknown command")
                || (message.startsWith("NOPERM") && message.toLowerCase(java.util.Locale.ROOT).contains(command));
    }

    private void fallBack(String what, String why) {
        if (functions) {
            functions = false;
            LOG.info("redeye runs its Lua as EVAL scripts on this server: {} was refused ({})", what, why);
        }
    }
}

package dev.redeye.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One Lua script of this module, read once from the class path. It runs with EVALSHA; when the server
 * answers NOSCRIPT (after SCRIPT FLUSH, a restart or a fail-over) the script is loaded again with SCRIPT
 * LOAD on the node that owns the first key and run once more with EVALSHA.
 */
final class LuaScript {
    private final String name;
    private final String source;
    private final String sha;

    private LuaScript(String name, String source) {
        this.name = name;
        this.source = source;
        this.sha = sha1Hex(source);
    }

    /**
     * Loads {@code dev/redeye/store/redis/<name>} from the class path.
     *
     * @throws IllegalStateException if the resource is missing (a broken jar)
     */
    static LuaScript load(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource dev/redeye/store/redis/" + name);
            }
            return new LuaScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script resource " + name, e);
        }
    }

    /**
     * A script from source text rather than the class path: only for tests that run a deliberately modified
     * copy of a script through the store (the TCK's planted-divergence test), never in production.
     */
    static LuaScript of(String name, String source) {
        return new LuaScript(name, source);
    }

    String name() {
        return name;
    }

    /** The script's source text. */
    String source() {
        return source;
    }

    String sha() {
        return sha;
    }

    /**
     * Runs the script. Jedis exceptions propagate; the caller maps them.
     *
     * @param keys at least one key; every key must share one hash slot
     */
    Object run(UnifiedJedis client, List<String> keys, List<String> args) {
        try {
            return client.evalsha(sha, keys, args);
        } catch (JedisNoScriptException e) {
            client.scriptLoad(source, keys.get(0));
            return client.evalsha(sha, keys, args);
        }
    }

    private static String sha1Hex(String text) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }
}

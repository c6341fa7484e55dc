package dev.redeye.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;

/**
 * The module's Lua library, {@code redeye.lua}, read once from the class path, in the two forms a server can
 * run it: a <b>Redis Function library</b> ({@code FUNCTION LOAD} once per server, then {@code FCALL}), where
 * the server offers Functions (Redis 7+), and one <b>EVAL script</b> per function (EVALSHA) elsewhere. The
 * library's body is the same text in both, but for the sections only one function uses, which the other
 * functions' scripts leave out ({@link #scriptBody}); this class adds the lines that differ (see the file's
 * header).
 *
 * <p>The library and its functions are named after a hash of the body ({@code redeye_<16 hex>} and
 * {@code redeye_<16 hex>_state}), so instances running different versions of this module on one server each
 * call their own code and never replace each other's ({@code FUNCTION LOAD} without {@code REPLACE}): a
 * rolling upgrade leaves the older library loaded, unused once the last old instance stops ({@code FUNCTION
 * DELETE} removes it; keeping it costs a few kilobytes).
 *
 * <p>Immutable and thread-safe; how one store runs it is {@link LuaRunner}'s business.
 */
final class LuaLibrary {
    /** The functions the library exports, by the name it exports them under. */
    enum Fn {
        STATE, RECORD, OUTCOMES, CLAIM, RELEASE, PUT, PUBLISH;

        final String exported = name().toLowerCase(Locale.ROOT);
    }

    /** The line that opens a section of the body only one function's script holds: this, then its exported name. */
    static final String ONLY = "-- @only ";
    /** The line that closes such a section. */
    static final String END = "-- @end";

    private static final LuaLibrary DEFAULT = load("redeye.lua");

    private final String resource;
    private final String body;
    private final String libraryName;
    private final String librarySource;
    private final Map<Fn, String> functionNames = new EnumMap<>(Fn.class);
    private final Map<Fn, String> scriptSources = new EnumMap<>(Fn.class);
    private final Map<Fn, String> scriptShas = new EnumMap<>(Fn.class);

    private LuaLibrary(String resource, String body) {
        this.resource = resource;
        this.body = body;
        this.libraryName = "redeye_" + sha1Hex(body).substring(0, 16);
        this.librarySource = "#!lua name=" + libraryName + "\n"
                + "local function export(name, fn)\n"
                + "  redis.register_function{function_name = '" + libraryName + "_' .. name, callback = fn, flags = {}}\n"
                + "end\n"
                + body;
        for (Fn f : Fn.values()) {
            functionNames.put(f, libraryName + "_" + f.exported);
            String script = "if redis.replicate_commands then redis.replicate_commands() end\n"
                    + "local ENTRY\n"
                    + "local function export(name, fn) if name == '" + f.exported + "' then ENTRY = fn end end\n"
                    + scriptBody(body, f) + "\n"
                    + "return ENTRY(KEYS, ARGV)\n";
            scriptSources.put(f, script);
            scriptShas.put(f, sha1Hex(script));
        }
    }

    /** The library of this module ({@code dev/redeye/store/redis/redeye.lua}). */
    static LuaLibrary standard() {
        return DEFAULT;
    }

    /**
     * Loads {@code dev/redeye/store/redis/<resource>} from the class path.
     *
     * @throws IllegalStateException if the resource is missing (a broken jar)
     */
    static LuaLibrary load(String resource) {
        try (InputStream in = LuaLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource dev/redeye/store/redis/" + resource);
            }
            return new LuaLibrary(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script resource " + resource, e);
        }
    }

    /**
     * A library from source text rather than the class path: only for tests that run a deliberately modified
     * copy through the store (the TCK's planted-divergence test), never in production.
     */
    static LuaLibrary of(String name, String body) {
        return new LuaLibrary(name, body);
    }

    /** The body as read (without the lines either form adds). */
    String body() {
        return body;
    }

    /** Where the body came from, for messages. */
    String resource() {
        return resource;
    }

    /** {@code redeye_<16 hex>}. */
    String libraryName() {
        return libraryName;
    }

    /** The text {@code FUNCTION LOAD} takes. */
    String librarySource() {
        return librarySource;
    }

    /** The name {@code FCALL} takes for {@code f}. */
    String functionName(Fn f) {
        return functionNames.get(f);
    }

    /** The EVAL script that runs {@code f}. */
    String scriptSource(Fn f) {
        return scriptSources.get(f);
    }

    /** The SHA-1 EVALSHA takes for {@link #scriptSource(Fn)}. */
    String scriptSha(Fn f) {
        return scriptShas.get(f);
    }

    /**
     * The body of {@code f}'s EVAL script: {@code body} without the sections marked for another function (from a
     * line {@value #ONLY}{@code <name>} to a line {@value #END}, both left out with it). Every EVALSHA runs its
     * script's top level again, creating each local function it defines, so code that one function alone uses
     * stays out of the others' scripts; the Function library, loaded once, holds every section.
     *
     * @throws IllegalStateException if the markers are not closed pairs naming an exported function (a broken
     *                               library)
     */
    static String scriptBody(String body, Fn f) {
        StringBuilder out = new StringBuilder(body.length());
        String section = null;
        for (String line : body.split("\n", -1)) {
            if (line.startsWith(ONLY)) {
                String name = line.substring(ONLY.length()).trim();
                if (section != null || Arrays.stream(Fn.values()).noneMatch(g -> g.exported.equals(name))) {
                    throw new IllegalStateException("the Lua library's section '" + line + "' is nested or names no"
                            + " exported function");
                }
                section = name;
            } else if (line.equals(END)) {
                if (section == null) {
                    throw new IllegalStateException("the Lua library closes a section it did not open ('" + END + "')");
                }
                boolean own = section.equals(f.exported);
                section = null;
                if (!own) {
                    continue;
                }
            }
            if (section == null || section.equals(f.exported)) {
                out.append(line).append('\n');
            }
        }
        if (section != null) {
            throw new IllegalStateException("the Lua library's section for '" + section + "' is not closed");
        }
        return out.substring(0, out.length() - 1);
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

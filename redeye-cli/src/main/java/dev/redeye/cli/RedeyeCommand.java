package dev.redeye.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code redeye} command: the entry point of the runnable jar ({@code redeye-cli/target/redeye.jar}) and
 * of the {@code ./redeye} launcher at the repository root.
 *
 * <p>Subcommands: {@code simulate} (a fleet of breakers against one failing dependency), {@code status},
 * {@code force-open}, {@code force-half-open}, {@code reset}, {@code watch} (operator commands against any
 * store URI) and {@code tck} (the store contract suite against a URI).
 *
 * <p>Exit codes: 0 success, 1 the command failed (store unreachable, a TCK rule failed, a watch timed out
 * before its count), 2 bad arguments. Errors are one line on stderr, with the stack trace only under
 * {@code --verbose}; store URIs are always printed redacted.
 *
 * <p>Use {@link #commandLine()} to run it in-process (tests do): it installs the same error handling as
 * {@link #main(String[])}.
 */
@Command(name = "redeye",
        mixinStandardHelpOptions = true,
        versionProvider = RedeyeCommand.Version.class,
        description = {"A circuit breaker whose state lives in a shared store: simulate a fleet, inspect and "
                + "control breakers in a store, watch transitions, run the store TCK.", ""},
        subcommands = {
            SimulateCommand.class,
            StatusCommand.class,
            ForceCommands.ForceOpen.class,
            ForceCommands.ForceHalfOpen.class,
            ForceCommands.Reset.class,
            ForceCommands.ForceMode.class,
            WatchCommand.class,
            DashboardCommand.class,
            TckCommand.class,
            CommandLine.HelpCommand.class
        },
        footer = {"", "Exit codes: 0 ok, 1 command failed, 2 bad arguments.", "",
            "Store URIs (--store, or REDEYE_STORE):",
            "  memory:                                   (this process only)",
            "  redis://HOST:PORT[/DB][?prefix=P]         (rediss:// for TLS)",
            "  postgresql://USER@HOST:PORT/DB[?schema=S&table=T]",
            "  jdbc:postgresql://HOST:PORT/DB?user=U     (any PostgreSQL JDBC URL)",
            "  dynamodb://TABLE[?region=R&endpoint=URL&createTable=true]",
            "  hazelcast://[CLUSTER@]HOST:PORT[,HOST:PORT][?map=M]",
            "A store of your own: its jar on the class path (./redeye --classpath JAR),",
            "its StoreProvider listed in META-INF/services/dev.redeye.spi.StoreProvider.",
            "Passwords in URIs are never printed."})
public final class RedeyeCommand implements Runnable {

    /** Exit code of a command that failed for a reason other than its arguments. */
    public static final int EXIT_FAILURE = 1;
    /** Exit code of a command given bad arguments. */
    public static final int EXIT_USAGE = 2;

    @Spec
    CommandSpec spec;

    @Mixin
    VerboseOption verboseOption;

    private volatile boolean verbose;

    /** Creates the root command (picocli and {@link #commandLine()} call this). */
    public RedeyeCommand() {
    }

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line, e.g. {@code simulate --compare}
     */
    public static void main(String[] args) {
        // Before the first logger exists: slf4j-simple reads its level once.
        if (Arrays.stream(args).anyMatch(a -> a.equals("-v") || a.equals("--verbose"))) {
            VerboseOption.raiseLogLevel();
        }
        int code = commandLine().execute(args);
        System.exit(code);
    }

    /**
     * A {@link CommandLine} for this command with redeye's error handling: one line on stderr per error
     * (stack trace under {@code --verbose}), passwords scrubbed, exit code 2 for bad arguments and 1 for
     * failures. Set its out/err writers to capture output.
     *
     * @return a new command line; not shared, so each caller may set its own writers
     */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new RedeyeCommand());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setDefaultValueProvider(new LibraryDefaults());
        cl.setParameterExceptionHandler(RedeyeCommand::onBadArguments);
        cl.setExecutionExceptionHandler(RedeyeCommand::onFailure);
        cl.setExitCodeExceptionMapper(t -> t instanceof ParameterException ? EXIT_USAGE : EXIT_FAILURE);
        return cl;
    }

    /** Whether {@code --verbose} was given on this command line (at any level). */
    boolean verbose() {
        return verbose;
    }

    void verbose(boolean on) {
        verbose = on;
    }

    @Override
    public void run() {
        // "redeye" alone: show what there is.
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    private static int onBadArguments(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        Secrets secrets = Secrets.fromArgs(Arrays.asList(args));
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        err.println(name + ": " + oneLine(secrets.scrub(ex.getMessage())) + " (see '" + name + " --help')");
        if (isVerbose(cmd)) {
            printStackTrace(ex, secrets, err);
        }
        err.flush();
        return EXIT_USAGE;
    }

    private static int onFailure(Exception ex, CommandLine cmd, CommandLine.ParseResult parseResult) {
        Secrets secrets = Secrets.fromArgs(parseResult.originalArgs());
        PrintWriter err = cmd.getErr();
        err.println(cmd.getCommandSpec().qualifiedName() + ": error: " + describe(ex, secrets));
        if (isVerbose(cmd)) {
            printStackTrace(ex, secrets, err);
        } else {
            err.println("(run with --verbose for details)");
        }
        err.flush();
        return EXIT_FAILURE;
    }

    /** One line: the exception's message, plus its root cause's when that adds something. */
    static String describe(Throwable ex, Secrets secrets) {
        String msg = ex.getMessage();
        if (msg == null || msg.isBlank()) {
            msg = ex.getClass().getSimpleName();
        }
        Throwable root = ex;
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        while (root.getCause() != null && seen.put(root, Boolean.TRUE) == null) {
            root = root.getCause();
        }
        if (root != ex) {
            String rootMsg = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
            if (!msg.contains(rootMsg)) {
                msg = msg + " (" + rootMsg + ")";
            }
        }
        return oneLine(secrets.scrub(msg));
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replaceAll("\\s*[\\r\\n]+\\s*", " ").trim();
    }

    private static boolean isVerbose(CommandLine cmd) {
        Object root = cmd.getCommandSpec().root().userObject();
        return root instanceof RedeyeCommand && ((RedeyeCommand) root).verbose();
    }

    /** A stack trace with every message scrubbed, since a driver's message may carry a URI. */
    private static void printStackTrace(Throwable t, Secrets secrets, PrintWriter err) {
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        String prefix = "";
        for (Throwable cur = t; cur != null && seen.put(cur, Boolean.TRUE) == null; cur = cur.getCause()) {
            String msg = cur.getMessage();
            err.println(prefix + cur.getClass().getName() + (msg == null ? "" : ": " + secrets.scrub(msg)));
            for (StackTraceElement e : cur.getStackTrace()) {
                err.println("\tat " + e);
            }
            prefix = "Caused by: ";
        }
    }

    /** {@code --version}: the project version baked into the jar at build time. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            Properties p = new Properties();
            try (InputStream in = RedeyeCommand.class.getResourceAsStream("/redeye-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // fall through to "unknown"
            }
            return new String[] {"redeye " + p.getProperty("version", "unknown"),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")"};
        }
    }
}

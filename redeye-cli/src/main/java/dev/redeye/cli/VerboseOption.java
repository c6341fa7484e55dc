package dev.redeye.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The {@code -v/--verbose} option, mixed into the root command and every subcommand so that it works in
 * either position ({@code redeye -v status ...} or {@code redeye status -v ...}). It records the flag on the
 * root command (stack traces on errors) and raises the log level to debug.
 *
 * <p>The log level can only change before the first SLF4J logger is created; {@link RedeyeCommand#main}
 * therefore looks for the flag before parsing as well.
 */
public final class VerboseOption {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /** Creates the mixin (picocli calls this). */
    public VerboseOption() {
    }

    @Option(names = {"-v", "--verbose"},
            description = "Print stack traces on errors and log at debug level (default: warnings only).")
    void setVerbose(boolean verbose) {
        // Only ever switched on: a subcommand's default must not undo "redeye -v <subcommand>".
        if (!verbose) {
            return;
        }
        Object root = mixee.root().userObject();
        if (root instanceof RedeyeCommand) {
            ((RedeyeCommand) root).verbose(true);
        }
        raiseLogLevel();
    }

    /** Sets slf4j-simple's default level to debug; effective if no logger was created yet. */
    static void raiseLogLevel() {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "debug");
    }
}

package dev.redeye.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The options every command that works on a store has: {@code --store URI} ({@link StoreOption}) and
 * {@code -v/--verbose} ({@link VerboseOption}), and the command's own spec for its output streams and usage
 * errors. Picocli reads these annotated fields on the subclasses too.
 */
abstract class StoreCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    VerboseOption verbose;

    @Mixin
    StoreOption store;
}

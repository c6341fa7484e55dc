/**
 * The redeye store TCK: the contract suite every {@link dev.redeye.spi.Store} runs against itself.
 *
 * <ul>
 * <li>{@link dev.redeye.tck.StoreTck}: extend it in a store's tests and return a new client per call.</li>
 * <li>{@link dev.redeye.tck.Rule}: the numbered rule list (stable ids, statements, what to check).</li>
 * <li>{@link dev.redeye.tck.TckRunner} and {@link dev.redeye.tck.TckReport}: run the suite outside a build
 * (what {@code redeye tck --store URI} does) and read per-rule results.</li>
 * <li>{@link dev.redeye.tck.UriStoreTck}: the suite over {@code Stores.open(uri)} clients.</li>
 * <li>{@link dev.redeye.tck.TckReportListener}: the rule report printed at the end of every JUnit run of a
 * {@code StoreTck} subclass (registered as a JUnit Platform service).</li>
 * <li>{@link dev.redeye.tck.MutableClock}: a virtual clock shared by breakers in tests.</li>
 * </ul>
 */
package dev.redeye.tck;

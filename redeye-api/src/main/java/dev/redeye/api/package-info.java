/**
 * What users of redeye see: the stored state of a breaker ({@link dev.redeye.api.BreakerState}) and its
 * status, the transition events listeners receive, the policy a breaker's options make, and the exceptions a
 * call can end with. Nothing here depends on the store SPI ({@code dev.redeye.spi}).
 */
package dev.redeye.api;

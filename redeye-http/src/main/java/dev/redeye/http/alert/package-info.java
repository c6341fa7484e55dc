/**
 * Alerts: {@link dev.redeye.http.alert.AlertNotifier} hands state changes to an
 * {@link dev.redeye.http.alert.AlertSink} on its own thread, so a slow or failing sink never reaches a request;
 * {@link dev.redeye.http.alert.MailAlertSink} sends e-mail over Jakarta Mail (optional dependency).
 */
package dev.redeye.http.alert;

package dev.redeye.http.alert;

import dev.redeye.http.HttpStateChange;

/**
 * Where {@link AlertNotifier} delivers a notification: e-mail ({@link MailAlertSink}), a chat webhook, a pager.
 * Called on the notifier's own thread, one change at a time, never on a request's thread; it may block (an SMTP
 * round trip) and may throw, which the notifier logs.
 */
@FunctionalInterface
public interface AlertSink {
    /**
     * Delivers one notification of {@code change}.
     *
     * @throws Exception if delivery failed; logged by the notifier, never retried
     */
    void send(HttpStateChange change) throws Exception;
}

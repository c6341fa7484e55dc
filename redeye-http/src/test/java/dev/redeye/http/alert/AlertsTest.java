package dev.redeye.http.alert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.icegreen.greenmail.util.GreenMail;
import com.icegreen.greenmail.util.ServerSetupTest;
import dev.redeye.api.BreakerState;
import dev.redeye.api.BreakerStatus;
import dev.redeye.api.TransitionEvent;
import dev.redeye.api.TransitionKind;
import dev.redeye.http.HttpBreakers;
import dev.redeye.http.HttpRule;
import dev.redeye.http.HttpRuleSet;
import dev.redeye.http.HttpStateChange;
import dev.redeye.http.Level;
import jakarta.mail.Authenticator;
import jakarta.mail.Message;
import jakarta.mail.PasswordAuthentication;
import jakarta.mail.Session;
import jakarta.mail.internet.MimeMessage;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Alerts: e-mail over Jakarta Mail to a real SMTP server in the test (GreenMail), recipients per rule with a
 * fallback list, credentials from the caller's session; and a notifier that never blocks nor throws into the
 * breaker, whatever its sink does.
 */
class AlertsTest {
    private GreenMail smtp;

    @BeforeEach
    void start() {
        smtp = new GreenMail(ServerSetupTest.SMTP.dynamicPort());
        smtp.setUser("alerts@example.com", "alerts", "s3cret");
        smtp.start();
    }

    @AfterEach
    void stop() {
        smtp.stop();
    }

    /** The caller's session: SMTP host, port and credentials are theirs, never redeye's configuration. */
    private Session session(String password) {
        Properties p = new Properties();
        p.put("mail.smtp.host", "127.0.0.1");
        p.put("mail.smtp.port", String.valueOf(smtp.getSmtp().getPort()));
        p.put("mail.smtp.auth", "true");
        p.put("mail.smtp.connectiontimeout", "5000");
        p.put("mail.smtp.timeout", "5000");
        return Session.getInstance(p, new Authenticator() {
            @Override
            protected PasswordAuthentication getPasswordAuthentication() {
                return new PasswordAuthentication("alerts", password);
            }
        });
    }

    @Test
    void stateChangesAreMailedToTheRulesRecipientsOrTheFallback() throws Exception {
        MailAlertSink mail = MailAlertSink.builder(session("s3cret"), "redeye@example.com")
                .recipients("endpoint:/a", "a-team@example.com", "a-lead@example.com")
                .recipients("orders", "orders@example.com")
                .fallback("ops@example.com")
                .build();
        try (AlertNotifier alerts = AlertNotifier.builder(mail).build();
                HttpBreakers breakers = HttpBreakers.builder(HttpRuleSet.builder()
                                .rule(HttpRule.endpoint("/a").failureThreshold(1))
                                .rule(HttpRule.endpoint("/b").failureThreshold(1))
                                .rule(HttpRule.service("/orders").name("orders").failureThreshold(1))
                                .build())
                        .onStateChange(alerts).build()) {
            breakers.acquire("/a/1").onStatus(500);
            breakers.acquire("/b/1").onStatus(503);
            breakers.acquire("/orders/1?card=4111").onError(new java.net.ConnectException("refused"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (smtp.getReceivedMessages().length < 4 && System.nanoTime() < deadline) {
                Thread.sleep(20); // real SMTP delivery on the notifier's thread
            }
            assertEquals(4, smtp.getReceivedMessages().length, () -> "4 messages (2 + 1 + 1 recipients); " + alerts);
        }
        MimeMessage[] got = smtp.getReceivedMessages();
        assertEquals(List.of(
                        "[a-team@example.com, a-lead@example.com] [redeye] endpoint:/a CLOSED -> OPEN",
                        "[ops@example.com] [redeye] endpoint:/b CLOSED -> OPEN",
                        "[orders@example.com] [redeye] service:orders CLOSED -> OPEN"),
                Arrays.stream(got).map(AlertsTest::toAndSubject).distinct().sorted().collect(Collectors.toList()));
        String body = Arrays.stream(got).filter(m -> subject(m).contains("orders")).findFirst().orElseThrow()
                .getContent().toString();
        assertTrue(body.contains("The service breaker 'orders' went from CLOSED to OPEN (opened)"), body);
        assertTrue(!body.contains("4111") && !body.contains("/orders/1"), "no request path or query in the mail: " + body);
    }

    @Test
    void aFailingSinkIsLoggedAndCountedNeverThrown() throws Exception {
        MailAlertSink wrongPassword = MailAlertSink.builder(session("wrong"), "redeye@example.com")
                .fallback("ops@example.com").build();
        AlertSink throwing = c -> {
            throw new IllegalStateException("webhook down");
        };
        try (AlertNotifier a = AlertNotifier.builder(wrongPassword).build();
                AlertNotifier b = AlertNotifier.builder(throwing).build()) {
            a.accept(change("endpoint", "/x"));
            b.accept(change("endpoint", "/x"));
            a.close();
            b.close();
            assertEquals(1, a.failed(), "authentication refused by the SMTP server: " + a);
            assertEquals(0, a.sent());
            assertEquals(1, b.failed());
        }
        assertEquals(0, smtp.getReceivedMessages().length);
    }

    @Test
    void theNotifierNeverBlocksTheBreakerAndDropsPastItsCapacity() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch first = new CountDownLatch(1);
        AlertSink slow = c -> {
            first.countDown();
            release.await(); // an SMTP server that hangs
        };
        try (AlertNotifier alerts = AlertNotifier.builder(slow).capacity(2).build();
                HttpBreakers breakers = HttpBreakers.builder(HttpRuleSet.builder()
                        .rule(HttpRule.endpoint("/a").failureThreshold(1)).build()).onStateChange(alerts).build()) {
            breakers.acquire("/a").onStatus(500); // opened: the sink takes it and hangs
            assertTrue(first.await(5, TimeUnit.SECONDS));
            long t0 = System.nanoTime();
            for (int i = 0; i < 5; i++) {
                breakers.reset(Level.ENDPOINT, "/a"); // a transition each: 5 more changes
                breakers.acquire("/a").onStatus(500);
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(tookMs < 5_000, "the breaker waited for the hanging sink: " + tookMs + " ms");
            assertEquals(10 - 2, alerts.dropped(), "10 changes behind a hanging sink, room for 2");
            release.countDown();
        }
    }

    private static HttpStateChange change(String level, String key) {
        BreakerState open = BreakerState.INITIAL.toBuilder().open(true).openedAt(1).failures(1).version(1).build();
        return new HttpStateChange(Level.fromName(level), key,
                new TransitionEvent(level + ":" + key, TransitionKind.OPENED, BreakerStatus.CLOSED, open));
    }

    private static String subject(MimeMessage m) {
        try {
            return m.getSubject();
        } catch (jakarta.mail.MessagingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String toAndSubject(MimeMessage m) {
        try {
            // GreenMail keeps one copy per recipient mailbox; the To header names the rule's recipients
            return Arrays.toString(m.getRecipients(Message.RecipientType.TO)) + " " + m.getSubject();
        } catch (jakarta.mail.MessagingException e) {
            throw new IllegalStateException(e);
        }
    }
}

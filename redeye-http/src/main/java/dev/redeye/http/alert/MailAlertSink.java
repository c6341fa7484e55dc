package dev.redeye.http.alert;

import dev.redeye.api.BreakerState;
import dev.redeye.http.HttpStateChange;
import jakarta.mail.Message;
import jakarta.mail.MessagingException;
import jakarta.mail.Session;
import jakarta.mail.Transport;
import jakarta.mail.internet.AddressException;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An {@link AlertSink} sending one e-mail per state change over Jakarta Mail, to the recipients of the change's
 * rule, or to the fallback list when the rule has none.
 *
 * <pre>{@code
 * Session session = Session.getInstance(smtpProperties, authenticator);   // yours: host, TLS, credentials
 * MailAlertSink mail = MailAlertSink.builder(session, "redeye@example.com")
 *         .recipients("endpoint:/payments/v1/charges", "payments-oncall@example.com")
 *         .fallback("platform@example.com")
 *         .build();
 * }</pre>
 *
 * <p>The SMTP server, TLS and credentials are the {@link Session}'s, configured by the caller: redeye's own
 * configuration never holds mail credentials. Recipients are looked up by the change's operation name
 * ({@code "endpoint:/payments/v1/charges"}) first, then by the rule's key alone. A change whose rule has no
 * recipients and no fallback is not sent (logged at DEBUG). The message names the breaker, the transition and
 * the counters; it never contains a request URL or query. {@link #send} blocks for the SMTP round trip: use it
 * through {@link AlertNotifier}.
 *
 * <p>Needs {@code jakarta.mail:jakarta.mail-api} 2.1 and an implementation (Eclipse Angus Mail) on the
 * classpath (optional dependencies of redeye-http). Thread-safe.
 */
public final class MailAlertSink implements AlertSink {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MailAlertSink.class);

    private final Session session;
    private final InternetAddress from;
    private final Map<String, List<InternetAddress>> recipients;
    private final List<InternetAddress> fallback;
    private final String subjectPrefix;

    private MailAlertSink(Builder b) {
        this.session = b.session;
        this.from = b.from;
        this.recipients = Map.copyOf(b.recipients);
        this.fallback = List.copyOf(b.fallback);
        this.subjectPrefix = b.subjectPrefix;
    }

    /**
     * A builder sending through {@code session} from {@code from}.
     *
     * @throws IllegalArgumentException if {@code from} is not an e-mail address
     */
    public static Builder builder(Session session, String from) {
        return new Builder(Objects.requireNonNull(session, "session"), address(from, "from"));
    }

    /** The addresses a change goes to: its rule's, else the fallback list. */
    public List<InternetAddress> recipientsOf(HttpStateChange change) {
        List<InternetAddress> r = recipients.get(change.operation());
        if (r == null) {
            r = recipients.get(change.key());
        }
        return r != null ? r : fallback;
    }

    @Override
    public void send(HttpStateChange change) throws MessagingException {
        List<InternetAddress> to = recipientsOf(change);
        if (to.isEmpty()) {
            LOG.debug("no recipients for {}: not sent", change);
            return;
        }
        MimeMessage m = new MimeMessage(session);
        m.setFrom(from);
        m.setRecipients(Message.RecipientType.TO, to.toArray(new InternetAddress[0]));
        m.setSubject(subjectPrefix + change.operation() + " " + change.from() + " -> " + change.to(), "UTF-8");
        m.setSentDate(new Date());
        m.setText(body(change), "UTF-8");
        Transport.send(m);
    }

    /** The plain-text body of the message for {@code change}. */
    static String body(HttpStateChange change) {
        BreakerState s = change.event().state();
        StringBuilder sb = new StringBuilder();
        sb.append("The ").append(change.level().wireName()).append(" breaker '").append(change.key())
                .append("' went from ").append(change.from()).append(" to ").append(change.to()).append(" (")
                .append(change.event().kind().wireName()).append(").\n\n");
        sb.append("operation:      ").append(change.operation()).append('\n');
        sb.append("failures:       ").append(s.failures()).append('\n');
        if (s.open()) {
            sb.append("open since:     ").append(Instant.ofEpochMilli(s.openedAt())).append('\n');
            sb.append("failed trials:  ").append(s.openCount()).append('\n');
        }
        if (s.lastFailureAt() > 0) {
            sb.append("last failure:   ").append(Instant.ofEpochMilli(s.lastFailureAt())).append('\n');
        }
        sb.append("version:        ").append(s.version()).append('\n');
        return sb.toString();
    }

    private static InternetAddress address(String a, String what) {
        try {
            InternetAddress ia = new InternetAddress(Objects.requireNonNull(a, what), true);
            return ia;
        } catch (AddressException e) {
            throw new IllegalArgumentException(what + ": not an e-mail address: '" + a + "'", e);
        }
    }

    @Override
    public String toString() {
        return "MailAlertSink[from " + from + ", " + recipients.size() + " rule(s) with recipients, fallback "
                + fallback.size() + "]";
    }

    /** Builds a {@link MailAlertSink}. Not thread-safe. */
    public static final class Builder {
        private final Session session;
        private final InternetAddress from;
        private final Map<String, List<InternetAddress>> recipients = new HashMap<>();
        private final List<InternetAddress> fallback = new ArrayList<>();
        private String subjectPrefix = "[redeye] ";

        private Builder(Session session, InternetAddress from) {
            this.session = session;
            this.from = from;
        }

        /**
         * The recipients of one rule's changes, by operation name ({@code "endpoint:/v1/charges"}) or rule key.
         *
         * @throws IllegalArgumentException if an address is malformed or none is given
         */
        public Builder recipients(String rule, String... addresses) {
            return recipients(rule, List.of(addresses));
        }

        /** {@link #recipients(String, String...)} from a list. */
        public Builder recipients(String rule, List<String> addresses) {
            Objects.requireNonNull(rule, "rule");
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("recipients of '" + rule + "' must not be empty");
            }
            List<InternetAddress> list = new ArrayList<>();
            for (String a : addresses) {
                list.add(address(a, "recipients of '" + rule + "'"));
            }
            recipients.put(rule, list);
            return this;
        }

        /** Recipients of changes whose rule has none of its own. */
        public Builder fallback(String... addresses) {
            for (String a : addresses) {
                fallback.add(address(a, "fallback"));
            }
            return this;
        }

        /** The subject's prefix; default {@code "[redeye] "}. */
        public Builder subjectPrefix(String v) {
            subjectPrefix = Objects.requireNonNull(v, "subjectPrefix");
            return this;
        }

        public MailAlertSink build() {
            return new MailAlertSink(this);
        }
    }
}

package dev.redeye;

import dev.redeye.api.Contribution;
import java.lang.management.ManagementFactory;
import java.security.SecureRandom;

/** The default instance id of the breakers of this process ({@link CircuitBreakerBuilder#instanceId(String)}). */
final class InstanceIds {
    /**
     * One id per process: the JVM's name ({@code pid@host}) with any character an id may not hold replaced by
     * {@code _}, cut to leave room for a {@code #} and 4 random hex digits (two processes that share a pid and a
     * host name, in two containers, still differ).
     */
    static final String PROCESS = derive(ManagementFactory.getRuntimeMXBean().getName(), new SecureRandom().nextInt());

    private InstanceIds() {
    }

    static String derive(String jvmName, int random) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < jvmName.length() && sb.length() < Contribution.MAX_INSTANCE_LENGTH - 5; i++) {
            char c = jvmName.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                    || c == '_' || c == ':' || c == '@' || c == '-';
            sb.append(ok ? c : '_');
        }
        if (sb.length() == 0) {
            sb.append("jvm");
        }
        sb.append('#').append(String.format("%04x", random & 0xffff));
        return Contribution.requireValidInstance(sb.toString());
    }
}

package dev.redeye.spring.boot.actuate;

import java.util.List;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The Actuator endpoint {@code redeyeevents}: the latest transitions this application saw, its own and the
 * fleet's ({@link RedeyeEvents}), as Resilience4j's {@code circuitbreakerevents} lists its breakers' events. Not
 * exposed over HTTP until the application says so
 * ({@code management.endpoints.web.exposure.include=health,redeyeevents}).
 *
 * <ul>
 * <li>{@code GET /actuator/redeyeevents}: every buffered transition, oldest first.</li>
 * <li>{@code GET /actuator/redeyeevents/{operation}}: those of one operation (an empty list for an operation
 * with none; an operation name containing {@code /} cannot be named in a URL path).</li>
 * </ul>
 *
 * Read-only, no store call: the buffer is filled as transitions happen.
 */
@Endpoint(id = "redeyeevents")
public class RedeyeEventsEndpoint {
    private final RedeyeEvents events;

    /** An endpoint over {@code events}. */
    public RedeyeEventsEndpoint(RedeyeEvents events) {
        this.events = Objects.requireNonNull(events, "events");
    }

    /** Every buffered transition, oldest first. */
    @ReadOperation
    public EventsDescriptor events() {
        return new EventsDescriptor(events.events());
    }

    /** The buffered transitions of one operation, oldest first. */
    @ReadOperation
    public EventsDescriptor operationEvents(@Selector String operation) {
        return new EventsDescriptor(events.events(operation));
    }

    /** The endpoint's answer. */
    public record EventsDescriptor(List<RedeyeEvents.Event> events) implements OperationResponseBody {
    }
}
